"""Warm sweep points: each point's process is forked from a template that has done the imports.

A fresh Jupyter kernel costs a Python start, ipykernel's own imports and then the notebook's
imports (numpy, pandas, matplotlib, treebook: seconds per point). A sweep worker instead keeps one
*fork server*: a process started the way a kernel is (same interpreter, environment and flags) that
imports ipykernel's machinery and the notebook's top-level imports of the packages in
:data:`PRELOADABLE`, and then only waits. For each point it forks a child: every point gets a
process of its own, in the state of a fresh kernel that has just run those imports, at the cost of a
fork. Nothing a point does reaches the template or the next point.

For each point, :meth:`ForkServer.run_notebook` (what the sweep uses) forks a child that executes
the notebook itself, with papermill and an IPython shell but no kernel (:mod:`treebook._inprocess`),
writes the executed notebook and exits: a point costs a fork and its cells. For that the template
also imports papermill and compiles nbformat's validators, with the warnings filters those imports
add taken out again. A child that dies or calls ``os._exit`` fails its point only, and a worker that
goes away takes its children with it. The server forks a child only when the requester's environment
is the one the template was started for, and when no treebook source file changed since the template
imported it; otherwise (and wherever the server cannot be reached) the sweep starts a fresh kernel
for the point instead.

What differs from a fresh kernel, by design: the preloaded modules are in ``sys.modules`` before the
notebook imports them, and the point's parent process is the fork server (``JPY_PARENT_PID`` names
the worker that asked for it). The template imports them with the ``get_ipython`` of a kernel in
reach (as they are in a kernel, where a library may ask, e.g. pandas for its default ``display.max_columns``),
and the child reseeds the global random generators it inherited (``random`` and numpy's legacy
``np.random`` functions draw from the operating system's entropy, as in a fresh process). String
hashes follow ``PYTHONHASHSEED`` as for any process; without it every point of one worker shares the
template's hash seed.

Fork servers need Linux (``fork`` and descriptor passing over Unix sockets); elsewhere
:func:`server_for` returns None and the sweep starts fresh kernels.
"""

from __future__ import annotations

import ast
import atexit
import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

__all__ = ["server_for", "supported", "notebook_preload", "ForkServer", "ForkServerError",
           "PRELOADABLE", "KERNEL_MODULES"]

#: top-level packages whose imports the template does for a notebook that imports them at top level
#: (their import does nothing that depends on the process it happens in beyond what the fork
#: server reproduces)
PRELOADABLE = ("numpy", "pandas", "scipy", "sklearn", "matplotlib", "numba", "treebook")

#: modules a kernel imports as it starts, imported by every template
KERNEL_MODULES = ("ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.iostream",
                  "ipykernel.comm", "ipykernel.debugger", "IPython.core.interactiveshell",
                  "IPython.core.completer", "IPython.core.history", "jupyter_client.session",
                  "zmq.eventloop.zmqstream", "tornado.ioloop")

#: modules a point run without a kernel imports (:meth:`ForkServer.run_notebook`), imported by every template
INPROCESS_MODULES = ("treebook._inprocess", "papermill", "papermill.engines", "papermill.parameterize")

#: modules the kernel itself must import: ``ipykernel.kernelapp`` reads the kernel's environment as it is
#: imported, and the inline backend hooks itself into the kernel's shell as it is imported; if an import of
#: the template brought them in, they are dropped again
KERNEL_ONLY = ("ipykernel.kernelapp", "matplotlib_inline")

#: the inline backend ipykernel chooses when ``MPLBACKEND`` is unset (``IPKernelApp.init_gui_pylab``)
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"

#: environment variables a kernel's launch sets per kernel: no part of what the template must match
PER_KERNEL_ENV = frozenset({"JPY_PARENT_PID", "JPY_SESSION_NAME"})

MAX_MESSAGE = 1 << 20
_PACKAGE = Path(__file__).resolve().parent


class ForkServerError(RuntimeError):
    """A fork server could not be started."""


def supported() -> bool:
    """Whether this platform can run fork servers (Linux: ``fork``, Unix sockets passing descriptors)."""
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(socket, "send_fds")
            and hasattr(socket, "AF_UNIX"))


def notebook_preload(notebook, cwd=None) -> tuple[str, ...]:
    """The modules a template imports for ``notebook``: its top-level ``import`` statements of packages in
    :data:`PRELOADABLE` (a cell that does not parse as Python is skipped), except a package that a file
    or folder of ``cwd`` (the kernel's working directory) would shadow."""
    from ._inprocess import import_nbformat

    import_nbformat()
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    names: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
    here = Path(cwd) if cwd is not None else None
    out = []
    for name in names:
        top = name.partition(".")[0]
        if top not in PRELOADABLE or name in out:
            continue
        if here is not None and ((here / f"{top}.py").exists() or (here / top).is_dir()):
            continue
        out.append(name)
    return tuple(out)


def kernel_environment(environ=None) -> dict:
    """The environment a kernel started from this process gets, as far as a template must match it."""
    env = dict(os.environ if environ is None else environ)
    for key in PER_KERNEL_ENV:
        env.pop(key, None)
    if not env.get("MPLBACKEND"):  # ipykernel sets it as it starts
        env["MPLBACKEND"] = INLINE_BACKEND
    return env


# ----------------------------------------------------------------------------------------------------
# the worker's side


class ForkServer:
    """A template process serving forked points for this process (see the module docstring).

    ``preload`` are the modules it imports beyond :data:`KERNEL_MODULES`. Its lifetime is tied to this
    process: when this process exits, however it exits, the server kills the points it still runs and
    exits. :meth:`retire` lets it finish the points it runs and then exit.
    """

    def __init__(self, preload=(), *, start_timeout: float = 300.0):
        self.preload = tuple(preload)
        self.environment = kernel_environment()  # a request from another environment is refused
        self.folder = tempfile.mkdtemp(prefix="treebook-fork-")
        self.address = os.path.join(self.folder, "server.sock")
        self.log = os.path.join(self.folder, "server.log")
        read_end, self._control = os.pipe()
        try:
            with open(self.log, "wb") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "treebook.forkserver", self.address, str(read_end), *self.preload],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, pass_fds=[read_end],
                    cwd=self.folder, start_new_session=True,
                    env=dict(os.environ))  # as jupyter_client passes it to a kernel (not the C-level one)
        except OSError as exc:
            os.close(self._control)
            _unlink(self.log)
            os.rmdir(self.folder)
            raise ForkServerError(f"cannot start a fork server: {exc}") from None
        finally:
            os.close(read_end)
        try:
            self.info = self._wait_ready(start_timeout)
        except ForkServerError as exc:
            tail = Path(self.log).read_text(errors="replace")[-2000:].strip()
            self.close()
            raise ForkServerError(f"{exc}{': ' + tail if tail else ''}") from None

    def _wait_ready(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise ForkServerError(f"the fork server was not ready within {timeout:.0f} s")
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise ForkServerError(f"the fork server exited as it started (code {self.proc.wait()})")
                line += chunk
        self.proc.stdout.close()
        return json.loads(line)

    def usable(self) -> bool:
        """Whether the server runs and accepts points (it stops when a treebook source file changed) from
        this process's environment as it is now."""
        return (self.proc.poll() is None and os.path.exists(self.address)
                and kernel_environment() == self.environment)

    def run_notebook(self, input_path, output_path, parameters: dict, cwd, stderr: int, error_path) -> dict:
        """Execute a notebook in a child forked from the template, without a kernel
        (:mod:`treebook._inprocess`); wait for it to exit.

        The child writes the executed notebook to ``output_path`` as papermill does, its descriptors 1
        and 2 are ``stderr``, and when a cell fails (or the execution does) it writes the error's
        message and traceback as JSON to ``error_path`` and exits with 1. Returns ``{"exit": code}``
        (negative: killed by that signal; None: the server went away while the child ran), or
        ``{"fresh": reason}`` when the server cannot serve this request."""
        request = {"kind": "notebook", "input": str(input_path), "output": str(output_path),
                   "parameters": parameters, "cwd": str(cwd), "env": dict(os.environ), "error": str(error_path),
                   "requester": os.getpid()}
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            try:
                sock.connect(self.address)
                socket.send_fds(sock, [json.dumps(request).encode()], [devnull, stderr, stderr])
                data = sock.recv(MAX_MESSAGE)
            except OSError as exc:
                return {"fresh": f"the fork server cannot be reached ({exc})"}
            reply = json.loads(data) if data else {"fresh": "the fork server closed the connection"}
            if "pid" not in reply:
                return reply
            data = sock.recv(MAX_MESSAGE)  # when the child has exited (empty: the server is gone)
            return {"exit": json.loads(data)["exit"] if data else None, "pid": reply["pid"]}
        finally:
            os.close(devnull)
            sock.close()

    def retire(self) -> None:
        """Accept no more points; the server exits once the points it runs have exited."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def close(self) -> None:
        """Stop the server now, with the points it runs."""
        if self._control is not None:
            os.close(self._control)
            self._control = None
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        for path in (self.address, self.log):
            _unlink(path)
        try:
            os.rmdir(self.folder)
        except OSError:
            pass


_LOCK = threading.Lock()
_SERVER: ForkServer | None = None
_BROKEN: str | None = None
_EXIT_HOOK: list = []
_RETIRED: list = []  # servers finishing their points before they exit


def _close_server() -> None:
    """At this process's exit: stop its fork server and wait for it (its points' CPU time is then counted
    in this process's children's)."""
    global _SERVER
    with _LOCK:
        for server in [*_RETIRED, *([_SERVER] if _SERVER is not None else [])]:
            server.close()
        _RETIRED.clear()
        _SERVER = None


def server_for(preload=(), log=None) -> ForkServer | None:
    """This process's fork server for ``preload`` (started, or started again when it stopped, served other
    modules or was started from another environment), or None where fork servers are not supported or
    the server cannot start (then ``log`` is told why, once)."""
    global _SERVER, _BROKEN
    if not supported() or _BROKEN is not None:
        return None
    preload = tuple(preload)
    with _LOCK:
        for old in [s for s in _RETIRED if s.proc.poll() is not None]:
            old.close()
            _RETIRED.remove(old)
        if _SERVER is not None and (_SERVER.preload != preload or not _SERVER.usable()):
            _SERVER.retire()
            _RETIRED.append(_SERVER)
            _SERVER = None
        if _SERVER is None:
            if not _EXIT_HOOK:
                atexit.register(_close_server)
                _EXIT_HOOK.append(True)
            try:
                _SERVER = ForkServer(preload)
            except ForkServerError as exc:
                _BROKEN = str(exc)
                if log is not None:
                    log(f"{exc}; this worker starts fresh kernels")
                return None
        return _SERVER


# ----------------------------------------------------------------------------------------------------
# the template's side (``python -m treebook.forkserver ADDRESS CONTROL_FD MODULE...``)


class _KernelShellProbe:
    """What ``get_ipython()`` answers while the template imports: a kernel's shell is there (libraries
    that ask at import time, such as pandas choosing its default ``display.max_columns``, decide as they
    would inside a kernel). Only its ``kernel`` attribute exists."""

    kernel = None


class _KernelStream:
    """What ``sys.stdout`` and ``sys.stderr`` are while the template imports: streams that report the
    encoding of a kernel's (``UTF-8``; pandas keeps it as ``display.encoding``) and write to whatever the
    process's stream is when they are written to (in a kernel, its output to the notebook), as a stream
    a library keeps from its import does in a kernel."""

    encoding = "UTF-8"
    errors = "strict"

    def __init__(self, name: str):
        self._name = name

    def _target(self):
        target = getattr(sys, self._name)
        return getattr(sys, f"__{self._name}__") if target is self else target

    def write(self, text):
        return self._target().write(text)

    def flush(self):
        return self._target().flush()

    def isatty(self):
        return False

    def __getattr__(self, name):
        return getattr(self._target(), name)


def _preload(modules, in_kernel: bool = True) -> list[str]:
    """Import ``modules`` (as ``import`` statements would, ``a.b`` through ``a``); the names that failed.

    With ``in_kernel``, as a notebook's cell imports them: with a kernel's ``get_ipython`` and streams in
    reach (without, as a kernel imports its own modules before it has either)."""
    import builtins
    import importlib

    failed = []
    if in_kernel:
        builtins.get_ipython = _KernelShellProbe  # called as get_ipython(): returns an instance
        sys.stdout, sys.stderr = _KernelStream("stdout"), _KernelStream("stderr")
    try:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - e.g. ``from pkg import function``: not a module
                parent, _, attr = name.rpartition(".")
                if not (parent and attr and hasattr(sys.modules.get(parent), attr)):
                    failed.append(name)
    finally:
        if in_kernel:
            del builtins.get_ipython
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    for name in [m for m in sys.modules if any(m == k or m.startswith(k + ".") for k in KERNEL_ONLY)]:
        del sys.modules[name]
        parent, _, attr = name.rpartition(".")
        if parent in sys.modules and getattr(sys.modules[parent], attr, None) is not None:
            delattr(sys.modules[parent], attr)
    return failed


def _source_state() -> dict:
    """``{path: (mtime_ns, size)}`` of the treebook source files the template imported."""
    state = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and Path(path).resolve().is_relative_to(_PACKAGE):
            try:
                st = os.stat(path)
            except OSError:
                continue
            state[path] = (st.st_mtime_ns, st.st_size)
    return state


def _source_changed(state: dict) -> str | None:
    for path, stamp in state.items():
        try:
            st = os.stat(path)
        except OSError:
            return path
        if (st.st_mtime_ns, st.st_size) != stamp:
            return path
    return None


class _Server:
    def __init__(self, address: str, control: int, modules: list[str]):
        self.pid = os.getpid()
        self.address = address
        self.control = control
        self.started_env = kernel_environment()
        unset = not os.environ.get("MPLBACKEND")
        if unset:  # as a kernel has it when the notebook imports matplotlib
            os.environ["MPLBACKEND"] = INLINE_BACKEND
        env = dict(os.environ)
        self.failed = _preload(KERNEL_MODULES, in_kernel=False)
        filters = list(warnings.filters)
        self.failed += _preload(modules)
        kernel_filters = list(warnings.filters)
        try:
            from . import _inprocess

            _inprocess.warm()
        except Exception:  # noqa: BLE001 - a point without them imports them itself
            pass
        self.failed += _preload(INPROCESS_MODULES, in_kernel=False)
        warnings.filters[:] = kernel_filters  # those of papermill's imports (requests') are no kernel's
        warnings._filters_mutated()
        # what the imports did to the environment, and the warnings filters that the notebook's imports
        # added: done again in each kernel
        self.env_changes = {k: os.environ.get(k) for k in set(env) | set(os.environ)
                            if os.environ.get(k) != env.get(k)}
        self.preload_filters = [f for f in warnings.filters if f not in filters]
        if unset:
            del os.environ["MPLBACKEND"]
        self.sources = _source_state()
        self.handlers = {s: signal.getsignal(s) for s in signal.valid_signals()
                         if s not in (signal.SIGKILL, signal.SIGSTOP)}
        # the template's objects stay shared with its children: their garbage collections do not walk
        # them (and so do not copy the pages that hold them)
        gc.collect()
        gc.freeze()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(address)
        self.listener.listen(64)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.retiring = False
        signal.signal(signal.SIGTERM, self._retire)
        self.children: dict[socket.socket, int] = {}  # requester's connection -> pid of its child
        self.pending: list[socket.socket] = []  # connections whose request is still to come

    def _retire(self, *_):
        self.retiring = True

    def refusal(self, request: dict) -> str | None:
        """Why this request needs a fresh kernel, or None."""
        if request.get("kind") != "notebook":
            return f"unknown request {request.get('kind')!r}"
        env = kernel_environment(request.get("env") or {})
        if env != self.started_env:
            keys = sorted(k for k in set(env) | set(self.started_env) if env.get(k) != self.started_env.get(k))
            return f"the kernel's environment differs from the template's in {keys}"
        changed = _source_changed(self.sources)
        if changed:
            self.retiring = True
            return f"{changed} changed since the template imported it"
        return None

    def serve(self):
        """Serve until told to stop; returns ``(request, fds)`` in a forked child, None in the server."""
        try:
            return self._loop()
        finally:
            if os.getpid() == self.pid:
                self.shutdown()

    def _loop(self):
        while True:
            if self.retiring and self.listener.fileno() >= 0:
                self.listener.close()
                _unlink(self.address)
            if self.retiring and not self.children and not self.pending:
                return None
            watch = [self.control, self.wake_r, *self.children, *self.pending]
            if self.listener.fileno() >= 0:
                watch.append(self.listener)
            try:
                ready, _, _ = select.select(watch, [], [])
            except InterruptedError:
                continue
            if self.control in ready:  # the worker is gone (or closed the pipe): so are its kernels
                return None
            if self.wake_r in ready:
                _drain(self.wake_r)
                self._reap()
            for sock in ready:
                if sock is self.listener:
                    try:
                        conn, _ = self.listener.accept()
                    except OSError:
                        continue
                    self.pending.append(conn)
                elif sock in self.pending:
                    self.pending.remove(sock)
                    child = self._request(sock)
                    if child is not None:
                        return child
                elif sock in self.children:
                    try:
                        gone = not sock.recv(1)
                    except OSError:
                        gone = True
                    if gone:  # its requester went away: so does the point
                        _kill_group(self.children[sock])
                        self._drop(sock)

    def _request(self, conn: socket.socket):
        try:
            data, fds, _flags, _addr = socket.recv_fds(conn, MAX_MESSAGE, 3)
        except OSError:
            conn.close()
            return None
        try:
            request = json.loads(data) if data else {}
            reason = "incomplete request" if len(fds) != 3 else self.refusal(request)
            if reason is None:
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    request["env_changes"], request["preload_filters"] = self.env_changes, self.preload_filters
                    return self._in_child(conn, request, fds)
                self.children[conn] = pid
                _send(conn, {"pid": pid})
            else:
                _send(conn, {"fresh": reason})
                conn.close()
        finally:
            if os.getpid() == self.pid:
                for fd in fds:
                    os.close(fd)
        return None

    def _in_child(self, conn, request, fds):
        signal.set_wakeup_fd(-1)
        for sock in (conn, self.listener, *self.children, *self.pending):
            sock.close()
        for fd in (self.control, self.wake_r, self.wake_w):
            os.close(fd)
        for signum, handler in self.handlers.items():
            try:
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
            except (OSError, ValueError, TypeError):
                pass
        self.children, self.pending = {}, []
        return request, fds

    def _reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            for conn, kid in list(self.children.items()):
                if kid == pid:
                    try:
                        _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
                    except OSError:
                        pass
                    self._drop(conn)

    def _drop(self, conn):
        self.children.pop(conn, None)
        conn.close()

    def shutdown(self):
        for conn, pid in list(self.children.items()):
            _kill_group(pid)
            conn.close()
        for conn in self.pending:
            conn.close()
        if self.listener.fileno() >= 0:
            self.listener.close()
        folder = os.path.dirname(self.address)
        try:
            for name in os.listdir(folder):  # the socket and the log: the folder is the server's alone
                _unlink(os.path.join(folder, name))
            os.rmdir(folder)
        except OSError:
            pass


def _send(conn, message: dict) -> None:
    conn.send(json.dumps(message).encode())


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except OSError:
            pass


def _run_child(request: dict, fds: list[int]) -> None:
    """Run the point ``request`` asks for (in the forked child): a session of its own, the requester's
    standard streams, working directory and environment, fresh random generators, a fresh
    ``__main__`` and a kernel's ``sys.path``; then its notebook."""
    import builtins
    import types

    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    template_dir = os.getcwd()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for key, value in request["env_changes"].items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    if sys.path and sys.path[0] == template_dir:  # ``python -m`` puts the working directory first
        sys.path[0] = os.getcwd()
    _kernel_path()
    sys.orig_argv = [sys.executable, "-c"]
    sys.argv = ["-c"]
    sys.stdout.reconfigure(line_buffering=os.isatty(1))
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed()  # the legacy global generator, seeded from entropy as at a fresh import
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    _exit(_run_notebook(request))


def _kernel_path() -> None:
    """``sys.path`` as a kernel has it: ``ipykernel_launcher`` takes the working directory off the front,
    and IPython's shell application puts ``''`` in front of the first site-packages folder."""
    if sys.path and (sys.path[0] == "" or Path(sys.path[0]) == Path.cwd()):
        del sys.path[0]
    if "" in sys.path or sys.flags.safe_path:
        return
    idx = next((i for i, p in enumerate(sys.path) if os.path.basename(p) in {"site-packages", "dist-packages"}), 0)
    sys.path.insert(idx, "")


def _run_notebook(request: dict) -> int:
    """Execute the request's notebook in this process (:mod:`treebook._inprocess`); the exit code (1, with
    the error written to the request's error file, when it failed)."""
    import traceback

    from . import _inprocess

    os.environ["JPY_PARENT_PID"] = str(request["requester"])  # as jupyter_client sets it for a kernel
    _inprocess.AFTER_SHELL.append(lambda: _order_filters(request["preload_filters"]))
    try:
        _inprocess.execute(request["input"], request["output"], request["parameters"], cwd=request["cwd"])
        return 0
    except BaseException as exc:  # noqa: BLE001 - reported to the sweep, which records the point as failed
        from .notebooks import error_line

        error = {"error": error_line(exc), "traceback": f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"}
        try:
            Path(request["error"]).write_text(json.dumps(error))
        except OSError:
            pass
        return 1


def _order_filters(preload_filters: list) -> None:
    """Put the warnings filters that the template's imports added in front of the others."""
    ours = [f for f in preload_filters if f in warnings.filters]
    warnings.filters[:] = ours + [f for f in warnings.filters if f not in ours]
    warnings._filters_mutated()


def _exit(code) -> None:
    """Exit as the interpreter does (wait for non-daemon threads, run the ``atexit`` hooks, among them
    IPython's, which clears the user namespace, flush the standard streams) without tearing down the
    modules one by one: they are the template's, and nothing of them outlives the process."""
    import atexit
    import threading

    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(code & 0xFF)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    address, control, modules = argv[0], int(argv[1]), argv[2:]
    server = _Server(address, control, modules)
    print(json.dumps({"ready": True, "pid": os.getpid(), "failed": server.failed}), flush=True)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    child = server.serve()
    if child is None:  # the server's own exit: nothing of its modules needs tearing down
        sys.stderr.flush()
        os._exit(0)
    _run_child(*child)


if __name__ == "__main__":
    main()
