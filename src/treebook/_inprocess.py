"""Executing a sweep point's notebook in the process that runs it, without a kernel.

A forked child of a fork server (:mod:`treebook.forkserver`) already holds the notebook's imports; what
a Jupyter kernel would add on top (its ZeroMQ sockets, its threads, the client's handshake and
shutdown, the messages of every output) is most of a trivial point's cost. Here the child runs the
notebook's cells in an IPython shell of its own and writes the outputs into the notebook directly.

Papermill stays in charge of everything but the cells' execution: :func:`execute` calls
``papermill.execute_notebook`` with the engine of :func:`engine`, so that the parameters are
injected, the notebook's and cells' ``papermill`` metadata kept, the notebook saved as each cell starts
and ends, and a failing cell reported (the error cell in front, ``PapermillExecutionError``) as with
papermill's own engine. The outputs are those a kernel sends: ``stream`` (what the cell writes to
``sys.stdout`` and ``sys.stderr``, warnings included), ``display_data`` (``display``, and the figures of
matplotlib's inline backend, which is this shell's as it is a kernel's), ``execute_result`` and
``error`` (IPython's traceback). The process is set up as a kernel's is (its working directory, ``''``
first on ``sys.path``, the environment variables and warnings filters a kernel's shell adds), so that a
notebook's results are those of a fresh kernel. What differs from a kernel: ``sys.stdout``,
``sys.stderr``, ``sys.displayhook`` and the shell are of other classes, ``sys.argv`` is ``['-c']``;
output written below Python (by C code or a subprocess to the process's descriptors 1 and 2) goes to
those descriptors, not into the notebook; there is no standard input (``input()`` fails as in
papermill); and widgets get no comm.

One process runs one notebook: :func:`execute` is called once, in a fresh fork, and the process exits
after it.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings

__all__ = ["execute", "engine", "import_nbformat", "warm", "ENGINE_NAME", "AFTER_SHELL"]

#: the name the engine is registered under with papermill
ENGINE_NAME = "treebook-inprocess"

#: called once the shell exists, before the first cell runs (as a kernel has initialised by then)
AFTER_SHELL: list = []


def import_nbformat() -> None:
    """Import nbformat (and so jsonschema) without ``rfc3987_syntax``, when neither is imported yet.

    jsonschema's format checker imports ``rfc3987_syntax`` where it is installed (a dependency of
    Jupyter's), which builds 39 grammar parsers as it is imported: about a second of every process that
    reads or writes a notebook. nbformat's notebook schemas check no IRI formats, so a sweep's processes
    (and the templates its points are forked from) load jsonschema without it; jsonschema then checks
    ``iri`` and ``iri-reference`` formats only if the ``rfc3987`` package is installed. A notebook run
    by the sweep that imports ``rfc3987_syntax`` itself gets it as usual."""
    if "nbformat" in sys.modules or "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return
    sys.modules["rfc3987_syntax"] = None  # an import of it raises ImportError
    try:
        import nbformat  # noqa: F401
    finally:
        if sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]


def warm() -> None:
    """What every point would otherwise do first (the template does it once): import nbformat and
    papermill, and compile nbformat's validators of the current notebook format."""
    import_nbformat()
    import nbformat
    import papermill  # noqa: F401
    from nbformat.validator import get_validator

    for minor in range(4, nbformat.v4.nbformat_minor + 1):
        get_validator(version=4, version_minor=minor)


def _outputs():
    """The shell's output sink: the list of the running cell's outputs, and what appends to it."""
    import nbformat

    class Sink:
        def __init__(self):
            self.outputs = None
            self.clear_on_next = False
            self.by_display_id: dict = {}

        def _add(self, output):
            if self.outputs is None:
                return
            if self.clear_on_next:
                self.outputs.clear()
                self.clear_on_next = False
            self.outputs.append(output)

        def stream(self, name: str, text: str):
            if self.outputs is None or not text:
                return
            last = self.outputs[-1] if self.outputs and not self.clear_on_next else None
            if last is not None and last.output_type == "stream" and last.name == name:
                last.text += text
            else:
                self._add(nbformat.v4.new_output("stream", name=name, text=text))

        def display(self, data, metadata=None, transient=None, update=False):
            display_id = (transient or {}).get("display_id")
            if update:
                for out in self.by_display_id.get(display_id, []):
                    out.data, out.metadata = dict(data), dict(metadata or {})
                return
            out = nbformat.v4.new_output("display_data", data=dict(data), metadata=dict(metadata or {}))
            if display_id is not None:
                self.by_display_id.setdefault(display_id, []).append(out)
            self._add(out)

        def result(self, data, metadata, count):
            self._add(nbformat.v4.new_output("execute_result", data=dict(data), metadata=dict(metadata or {}),
                                             execution_count=count))

        def error(self, ename, evalue, traceback):
            self._add(nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=list(traceback)))

        def clear(self, wait=False):
            if wait:
                self.clear_on_next = True
            elif self.outputs is not None:
                self.outputs.clear()
                self.clear_on_next = False

    return Sink()


class _Stream:
    """``sys.stdout`` / ``sys.stderr`` of the shell: text goes to the running cell's outputs."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, sink, name: str, fd: int):
        self._sink, self.name, self._fd = sink, name, fd

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._sink.stream(self.name, text)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def readable(self):
        return False

    def writable(self):
        return True

    @property
    def closed(self):
        return False


def _shell(sink):
    """The IPython shell a point's cells run in (the process's only one)."""
    from IPython.core.display_trap import DisplayTrap
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets import Type
    from traitlets.config import Config

    try:
        from ipykernel.compiler import XCachingCompiler as compiler
    except ImportError:  # pragma: no cover - ipykernel is a dependency
        compiler = None

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            sink.display(data, metadata, transient, update)

        def clear_output(self, wait=False):
            sink.clear(wait)

    class Hook(DisplayHook):
        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            sink.result(format_dict, md_dict, self.prompt_count)

        def finish_displayhook(self):
            sys.stdout.flush()
            sys.stderr.flush()

    class Shell(InteractiveShell):
        if compiler is not None:  # a kernel's: cells are files named by their hash, as in a kernel's tracebacks
            compiler_class = Type(compiler)

        def init_display_pub(self):
            self.display_pub = Publisher(parent=self, shell=self)
            self.configurables.append(self.display_pub)

        def init_displayhook(self):
            self.displayhook = Hook(parent=self, shell=self, cache_size=self.cache_size)
            self.configurables.append(self.displayhook)
            self.display_trap = DisplayTrap(hook=self.displayhook)

        def _showtraceback(self, etype, evalue, stb):
            sink.error(getattr(etype, "__name__", str(etype)), str(evalue), stb)

        def enable_gui(self, gui=None):  # an inline backend needs no event loop
            pass

        def init_environment(self):  # as a kernel's shell sets it: colours on, no pager in subprocesses
            os.environ.update({"TERM": "xterm-color", "CLICOLOR": "1", "FORCE_COLOR": "1", "CLICOLOR_FORCE": "1",
                               "PAGER": "cat", "GIT_PAGER": "cat"})

    config = Config()
    config.HistoryManager.enabled = False
    shell = Shell.instance(config=config)
    # a kernel's shell adds this filter as it starts (ipykernel's ZMQInteractiveShell)
    warnings.filterwarnings("ignore", message=".*Trio's signal handling code might have collided.*",
                            category=RuntimeWarning)
    return shell


def _language_info() -> dict:
    try:
        from ipykernel.ipkernel import IPythonKernel

        return dict(IPythonKernel.language_info)
    except Exception:  # noqa: BLE001 - without ipykernel: what nbformat needs
        return {"name": "python", "version": sys.version.split()[0]}


def engine():
    """The papermill engine class (built on first use: importing this module must not import papermill)."""
    from papermill.engines import Engine

    class InProcessEngine(Engine):
        """A papermill engine that runs the cells in this process's IPython shell (see the module)."""

        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                     stderr_file=None, start_timeout=60, execution_timeout=None, **kwargs):
            sink = _outputs()
            saved = sys.stdout, sys.stderr
            sys.stdout, sys.stderr = _Stream(sink, "stdout", 1), _Stream(sink, "stderr", 2)
            # an interrupt stops the running cell with KeyboardInterrupt, as a kernel has it while it executes
            # (whatever this process inherited: a background job's SIGINT is ignored)
            handler = signal.signal(signal.SIGINT, signal.default_int_handler)
            try:
                shell = _shell(sink)
                for hook in AFTER_SHELL:
                    hook()
                for index, cell in enumerate(nb_man.nb.cells):
                    try:
                        nb_man.cell_start(cell, index)
                        if cell.cell_type == "code" and not _run_cell(shell, sink, cell, nb_man):
                            nb_man.cell_exception(nb_man.nb.cells[index], cell_index=index)
                            break
                    finally:
                        nb_man.cell_complete(nb_man.nb.cells[index], cell_index=index)
                nb_man.nb.metadata["language_info"] = _language_info()
            finally:
                sink.outputs = None
                sys.stdout, sys.stderr = saved
                signal.signal(signal.SIGINT, handler)
            return nb_man.nb

    return InProcessEngine


def _run_cell(shell, sink, cell, nb_man) -> bool:
    """Run one code cell into its outputs; False when it raised (and is not tagged ``raises-exception``)."""
    tags = cell.metadata.get("tags", [])
    if "skip-execution" in tags or not cell.source.strip():
        return True
    cell.outputs = []
    sink.outputs = cell.outputs
    sink.clear_on_next = False
    cell.execution_count = shell.execution_count
    try:
        result = shell.run_cell(cell.source, store_history=True)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sink.outputs = None
    nb_man.autosave_cell()
    failed = result.error_before_exec is not None or result.error_in_exec is not None
    return not failed or "raises-exception" in tags


def execute(input_path, output_path, parameters, cwd=None) -> None:
    """Execute ``input_path`` with ``parameters`` into ``output_path``, in this process (see the module).

    Raises ``papermill.PapermillExecutionError`` when a cell fails (the notebook is written with the
    error, as papermill writes it)."""
    import papermill
    from papermill.engines import papermill_engines

    if not os.environ.get("MPLBACKEND"):  # as a kernel sets it: matplotlib's figures shown inline
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"

    if ENGINE_NAME not in papermill_engines._engines:
        papermill_engines.register(ENGINE_NAME, engine())
    papermill.execute_notebook(str(input_path), str(output_path), parameters=parameters, cwd=cwd,
                               progress_bar=False, kernel_name="python3", engine_name=ENGINE_NAME)

