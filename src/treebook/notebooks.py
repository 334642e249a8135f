"""Running the chapter notebooks with papermill, under a named parameter profile.

A profile is a YAML file ``notebooks/params/<profile>.yml`` that maps a notebook's stem to the
parameters overriding its ``parameters`` cell. ``book`` is the notebooks' own defaults (no file
needed); ``smoke`` is what the tests run; ``paper`` is the papers' full protocols.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from .files import project_root, write_atomic

__all__ = ["project_root", "notebook_path", "load_profile", "notebook_parameters", "execute_notebook",
           "run_notebook", "toc_notebooks", "read_yaml", "parse_parameter", "check_parameters"]

#: how jupyter_client reports a kernel that exited before answering its first request
KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"


def execute_notebook(src, dst, *, attempts: int = 3, **kwargs):
    """``papermill.execute_notebook``, started again when the kernel dies before it answers.

    The kernel listens on Unix domain sockets unless ``kernel_manager_class`` says otherwise. Kernels on
    TCP ports started at the same moment (a sweep's workers, parallel tests) can race for the same free
    port, and the loser exits with "Address already in use" before any cell runs; such a start is
    retried, up to ``attempts`` times in all. Any other error is raised at once.

    The kernel inherits this process's environment. A non-interactive matplotlib backend named there
    (headless scripts and CI often choose one through ``MPLBACKEND``) would make every ``plt.show()``
    draw nothing, so it is dropped and the kernel keeps its inline backend: figures reach the
    executed notebook.
    """
    import papermill

    drop_headless_backend()
    kwargs.setdefault("kernel_manager_class", _local_kernel_manager())
    for attempt in range(1, attempts + 1):
        try:
            return papermill.execute_notebook(str(src), str(dst), **kwargs)
        except RuntimeError as exc:
            if KERNEL_START_FAILURE not in str(exc) or attempt == attempts:
                raise
            time.sleep(0.5 + random.random())


def _local_kernel_manager():
    """The kernel manager of :func:`execute_notebook`: jupyter_client's, with the kernel on Unix domain
    sockets (IPC) instead of TCP ports. The kernel is local, so nothing needs a network port, and its
    traffic stays off the loopback interface (the kernel no longer warns of unencrypted TCP)."""
    from jupyter_client.manager import AsyncKernelManager

    class LocalKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            if kwargs["transport"] == "ipc" and "ip" not in kwargs:
                # Each kernel's sockets in a directory of its own: jupyter_client's default prefix
                # ("kernel-ipc" in the working directory) is shared by kernels started side by side,
                # and two of them would then pick the same socket files.
                self._socket_dir = tempfile.mkdtemp(prefix="treebook-kernel-")
                kwargs["ip"] = os.path.join(self._socket_dir, "ipc")
            super().__init__(**kwargs)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            socket_dir = getattr(self, "_socket_dir", None)
            if socket_dir is not None and not restart:
                shutil.rmtree(socket_dir, ignore_errors=True)

    return LocalKernelManager


def drop_headless_backend() -> None:
    """Remove a non-interactive ``MPLBACKEND`` from this process's environment (see
    :func:`execute_notebook`): kernels started from here then keep their inline backend."""
    if os.environ.get("MPLBACKEND", "").lower() in {"agg", "pdf", "ps", "svg", "cairo", "template"}:
        del os.environ["MPLBACKEND"]


def read_yaml(path):
    """The content of the YAML file ``path``; malformed YAML raises ``ValueError`` naming the file and line."""
    path = Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file ({exc})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{_yaml_where(exc, str(path))}: invalid YAML: {_yaml_problem(exc)}") from None


def _yaml_where(exc: yaml.YAMLError, name: str) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f"{name}, line {mark.line + 1}, column {mark.column + 1}" if mark is not None else name


def _yaml_problem(exc: yaml.YAMLError) -> str:
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    text = "; ".join(p for p in parts if p)
    return text or str(exc).splitlines()[0]


class _ScalarLoader(yaml.SafeLoader):
    """YAML as ``yaml.safe_load`` reads it, but a plain ``1e-3`` is a float (YAML 1.2), not a string."""


_ScalarLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def parse_parameter(name: str, text: str):
    """The value of parameter ``name`` given as the text ``text`` (on a command line), read as YAML.

    ``1e-3`` is the float 0.001 (plain YAML 1.1 would keep it as text), ``[1, 2]`` a list, ``null`` or
    ``~`` None, ``'1'`` (quoted) the string ``"1"``. Malformed YAML raises ``ValueError`` naming the
    parameter.
    """
    if not isinstance(text, str):
        raise TypeError(f"parameter {name!r}: the value must be given as text; got {type(text).__name__}")
    try:
        return yaml.load(text, Loader=_ScalarLoader)
    except yaml.YAMLError as exc:
        raise ValueError(f"parameter {name!r}: {text!r} is not a YAML value ({_yaml_problem(exc)})") from None


def check_parameters(notebook, parameters) -> dict:
    """``parameters`` as a dict after checking that ``notebook`` declares every one of them.

    Raises ``ValueError`` naming the undeclared ones and listing the declared ones; ``result_path`` is
    refused too (the runner sets it).
    """
    parameters = dict(parameters or {})
    declared = notebook_parameters(notebook)
    unknown = sorted(k for k in parameters if k not in declared)
    if unknown:
        raise ValueError(f"parameter(s) {unknown} are not declared by {notebook_path(notebook).name} "
                         f"(its parameters: {sorted(declared)})")
    if "result_path" in parameters:
        raise ValueError("parameter 'result_path' is set by the runner itself")
    return parameters


def error_line(exc: BaseException) -> str:
    """One line naming a failure, for a table or a log: a failing notebook cell (papermill's
    ``PapermillExecutionError``) as its cell and exception, anything else as its type and first line."""
    ename = getattr(exc, "ename", None)
    if ename is not None:
        evalue = " ".join(str(getattr(exc, "evalue", "")).split())
        return f"{type(exc).__name__}: cell [{getattr(exc, 'exec_count', '?')}] {ename}: {evalue}"
    lines = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def notebook_path(notebook) -> Path:
    """Resolve a notebook given as a path, a stem of ``notebooks/<stem>.ipynb`` or a path under
    ``notebooks/`` with or without its suffix (``sweeps/03-search-point``)."""
    p = Path(notebook)
    if p.suffix == ".ipynb" and p.is_file():
        return p.resolve()
    nbdir = project_root() / "notebooks"
    for cand in (nbdir / p.parent / f"{p.stem}.ipynb", nbdir / f"{p.stem}.ipynb"):
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"no notebook {notebook!r} (looked for {p} and notebooks/{p.parent / p.stem}.ipynb)")


def load_profile(profile: str) -> dict:
    """Parameters of every notebook under ``profile`` (``{}`` for ``"book"``, the notebooks' defaults)."""
    if profile == "book":
        return {}
    params = project_root() / "notebooks" / "params"
    path = params / f"{profile}.yml"
    if not path.is_file():
        known = ["book", *sorted(p.stem for p in params.glob("*.yml"))]
        raise FileNotFoundError(f"no parameter profile {profile!r}; the profiles are {', '.join(known)}")
    data = read_yaml(path) or {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) or v is None for v in data.values()):
        raise ValueError(f"{path}: expected a mapping of notebook stem -> mapping of parameters")
    return {k: (v or {}) for k, v in data.items()}


def notebook_parameters(notebook) -> dict:
    """The names and default values (as source text) of a notebook's ``parameters`` cell."""
    import papermill

    info = papermill.inspect_notebook(str(notebook_path(notebook)))
    return {name: spec.get("default") for name, spec in info.items()}


def toc_notebooks() -> list[str]:
    """Stems of the notebooks listed in ``_toc.yml``, in book order."""
    toc = read_yaml(project_root() / "_toc.yml")
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            f = node.get("file")
            if isinstance(f, str) and f.startswith("notebooks/"):
                files.append(Path(f).stem)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return files


def run_notebook(stem: str, profile: str = "smoke", parameters: dict | None = None, output_dir=None,
                 kernel_name: str = "python3", progress: bool = False):
    """Execute ``notebooks/<stem>.ipynb`` and return ``(executed_path, results_dict)``.

    The parameters are the profile's for this notebook, updated with ``parameters``, plus a
    ``result_path`` inside ``output_dir`` (a temporary folder by default) where the notebook
    writes its JSON record. A failing cell raises papermill's ``PapermillExecutionError``; a parameter
    the notebook does not declare raises ``ValueError`` before anything runs.
    The record gains a ``provenance`` entry (commit, date, profile, parameters, CPU model and count,
    wall and CPU seconds of the run; see :func:`treebook.results.provenance`).
    """
    from .results import code_state, provenance

    src = notebook_path(stem)
    overrides = check_parameters(src, parameters)
    params = dict(load_profile(profile).get(src.stem, {}))
    params.update(overrides)
    # absolute: the notebook runs in the notebooks folder, and writes its record where the caller looks
    out_dir = (Path(output_dir) if output_dir is not None else Path(tempfile.mkdtemp(prefix="treebook-"))).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    result_path = out_dir / f"{src.stem}.json"
    params["result_path"] = str(result_path)
    executed = out_dir / f"{src.stem}.ipynb"
    state = code_state()  # the code the run starts from
    t0, r0 = time.perf_counter(), _cpu_seconds()
    execute_notebook(src, executed, parameters=params, cwd=str(src.parent), kernel_name=kernel_name,
                     progress_bar=progress)
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - r0
    if not result_path.is_file():
        raise RuntimeError(f"{src.name} ran but wrote no results to its result_path")
    try:
        record = json.loads(result_path.read_text())
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"{src.name} wrote an invalid JSON record {result_path}: {exc}") from None
    if not isinstance(record, dict):
        raise RuntimeError(f"{src.name} wrote {result_path}, which is not a JSON object")
    record["provenance"] = provenance(profile, params, wall, cpu, state=state)
    write_atomic(result_path, json.dumps(record, indent=2, allow_nan=False))
    return executed, record


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the kernel, once it has exited)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
