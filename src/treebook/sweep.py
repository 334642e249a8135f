"""Parameter sweeps of a chapter notebook, on this machine or on a Dask cluster.

One papermill execution per grid point, run by worker threads of the sweep's own process on this
machine (by default), or scheduled on a Dask cluster (an existing scheduler given by address, or a
``LocalCluster`` with fresh kernels). Every executed notebook is kept; each run's
result JSON is gathered into one tidy table (CSV and parquet) whose columns are the parameters,
then the results. A failing run is recorded with its error and does not stop the others; running
the same sweep again skips the points that already finished.

The output folder stays consistent whatever happens to a sweep:

* every record (``params.json``, ``result.json``, ``error.txt``, the executed notebook, the tables) is
  written whole, to a temporary file in the same folder that then replaces the old one;
* a point is finished when its ``result.json`` reads as a record; a damaged one (empty, truncated, not
  JSON) is reported by path, kept as ``result.json.damaged``, and the point runs again, as does a point
  whose run was interrupted;
* a sweep holds ``sweep.lock`` in the folder while it runs: a second sweep on the same folder stops
  with the holder's pid, and the lock of a sweep that was killed is taken over;
* ``results.csv`` and ``results.parquet`` hold every run folder, those of earlier sweeps with other
  grids too (the current grid's points first);
* on Dask, a worker that dies is replaced and its point run again, up to
  ``distributed.scheduler.allowed-failures`` times, after which that point alone is recorded as failed.

Each point runs by default in a process forked from a template that has done the notebook's imports
(:mod:`treebook.forkserver`; Linux only), one template per sweep on this machine and one per worker
on Dask, and the child executes the notebook's cells itself, without a kernel
(:mod:`treebook._inprocess`): a process of its own per point, so that all of the above holds alike,
nothing a point changes in its process reaches the next point, and a point that crashes its process
fails alone. ``warm=False`` (``--fresh-kernels``) starts a fresh Jupyter kernel per point instead, on
a ``LocalCluster`` unless a scheduler is given, as platforms without ``fork`` always do.

The grid file is YAML, either a mapping ``name: [values...]`` (the cartesian product is run) or a
mapping with any of three sections:

``grid: {name: [values...]}``
    a cartesian product;
``points: [{name: value, ...}, ...]``
    an explicit list, run as well;
``random: {n: 200, seed: 0, space: {name: spec, ...}, fixed: {name: value}}``
    ``n`` random configurations (a random hyperparameter search), each spec one of
    ``{choice: [values]}``, ``{int: [lo, hi]}`` (both inclusive), ``{uniform: [lo, hi]}`` or
    ``{loguniform: [lo, hi]}`` (``lo > 0``). Sampling is deterministic (numpy ``default_rng(seed)``,
    ``seed`` defaults to 0) and sampled floats are rounded to 4 significant digits, so point ids are
    stable. Identical configurations are kept once: a block over a small discrete space yields fewer
    than ``n``. ``fixed`` parameters are merged into every configuration of the block, and ``random``
    may be a list of blocks, which makes a search conditional, e.g. one block per method with its own
    space. With ``grid``, every grid point is crossed with every random configuration.

Every name must be a parameter of the notebook's ``parameters`` cell; identical points are run once.

With a remote scheduler the workers must see the same file system paths (the notebook and the
output folder) and have treebook installed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers
import os
import secrets
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .files import write_atomic
from .notebooks import (
    error_line,
    execute_notebook,
    notebook_parameters,
    notebook_path,
    project_root,
    read_yaml,
)

__all__ = ["load_grid", "expand_grid", "run_sweep", "point_id", "read_runs", "SweepRun", "SweepLockError",
           "LOCK_NAME"]


def load_grid(path) -> dict:
    """Read and validate a grid file (see the module docstring for its form)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"grid file {path} does not exist")
    data = read_yaml(path)
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: a grid file must be a non-empty mapping")
    return data


def expand_grid(grid: dict, allowed: set[str] | None = None) -> list[dict]:
    """All grid points as parameter dicts; raise ``ValueError`` naming a wrong key or value."""
    if set(grid) <= {"grid", "points", "random"} and grid:
        product, points, random = grid.get("grid") or {}, grid.get("points") or [], grid.get("random") or []
    else:
        product, points, random = grid, [], []
    if not isinstance(product, dict):
        raise ValueError("'grid' must map parameter names to lists of values")
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise ValueError("'points' must be a list of mappings of parameter names to values")
    for key, values in product.items():
        _check_name(key, "grid")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid key {key!r} must map to a non-empty list of values; got {values!r}")
    blocks = [random] if isinstance(random, dict) else random
    if not isinstance(blocks, list):
        raise ValueError("'random' must be a block {n, seed, space, fixed} or a list of such blocks")
    configs = [c for i, block in enumerate(blocks) for c in _random_configs(block, i, allowed)]
    clash = set(product) & {k for c in configs for k in c}
    if clash:
        raise ValueError(f"keys {sorted(clash)} are in both 'grid' and 'random'")
    out = [dict(zip(product, combo)) for combo in itertools.product(*product.values())] if product else []
    if configs:
        out = [{**g, **c} for g in out or [{}] for c in configs]
    out = _unique(out + [dict(p) for p in points])
    if not out:
        raise ValueError("the grid defines no points")
    if allowed is not None:
        for point in out:
            for key in point:
                if key not in allowed:
                    raise ValueError(f"grid key {key!r} is not a parameter of the notebook "
                                     f"(its parameters: {sorted(allowed)})")
                if key == "result_path":
                    raise ValueError("grid key 'result_path' is set by the sweep itself")
    return out


def _check_name(key, where: str) -> None:
    if not isinstance(key, str) or not key.isidentifier():
        raise ValueError(f"{where} key {key!r} is not a valid parameter name")


def _unique(points: list[dict]) -> list[dict]:
    """The points in order, each identical point once (they would share one run folder)."""
    return list({point_id(p): p for p in points}.values())


_DISTRIBUTIONS = ("choice", "int", "uniform", "loguniform")


def _check_spec(key: str, spec) -> tuple[str, list]:
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in _DISTRIBUTIONS:
        raise ValueError(f"random key {key!r}: a spec is one of {{choice: [values]}}, {{int: [lo, hi]}}, "
                         f"{{uniform: [lo, hi]}} or {{loguniform: [lo, hi]}}; got {spec!r}")
    ((kind, arg),) = spec.items()
    if kind == "choice":
        if not isinstance(arg, list) or not arg:
            raise ValueError(f"random key {key!r}: choice needs a non-empty list of values; got {arg!r}")
        return kind, arg
    number = (int,) if kind == "int" else (int, float)
    if not (isinstance(arg, list) and len(arg) == 2
            and all(isinstance(v, number) and not isinstance(v, bool) for v in arg)):
        kinds = "integers" if kind == "int" else "numbers (YAML reads 1e-3 as text: write 1.0e-3)"
        raise ValueError(f"random key {key!r}: {kind} needs [lo, hi], two {kinds}; got {arg!r}")
    lo, hi = arg
    if lo > hi:
        raise ValueError(f"random key {key!r}: {kind} needs lo <= hi; got [{lo}, {hi}]")
    if kind == "loguniform" and lo <= 0:
        raise ValueError(f"random key {key!r}: loguniform needs bounds > 0; got [{lo}, {hi}]")
    return kind, arg


def _space_size(kind: str, arg: list) -> float:
    if kind == "choice":
        return len(arg)
    if kind == "int":
        return arg[1] - arg[0] + 1
    return 1 if arg[0] == arg[1] else math.inf


def _draw(kind: str, arg: list, rng: np.random.Generator):
    if kind == "choice":
        return arg[int(rng.integers(len(arg)))]
    lo, hi = arg
    if kind == "int":
        return int(rng.integers(lo, hi + 1))
    x = rng.uniform(lo, hi) if kind == "uniform" else math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return min(max(float(f"{x:.4g}"), lo), hi)


def _random_configs(block, i: int, allowed: set[str] | None) -> list[dict]:
    """The distinct configurations of one ``random`` block, in the order they were drawn."""
    where = f"random block {i}"
    if not isinstance(block, dict) or not set(block) <= {"n", "seed", "space", "fixed"}:
        raise ValueError(f"{where}: a block is a mapping with keys n, seed, space and fixed; got {block!r}")
    n, seed, space, fixed = block.get("n"), block.get("seed", 0), block.get("space"), block.get("fixed") or {}
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{where}: n must be an integer >= 1; got {n!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"{where}: seed must be an integer >= 0; got {seed!r}")
    if not isinstance(space, dict) or not space:
        raise ValueError(f"{where}: 'space' must map parameter names to distributions; got {space!r}")
    if not isinstance(fixed, dict):
        raise ValueError(f"{where}: 'fixed' must map parameter names to values; got {fixed!r}")
    for key in (*space, *fixed):
        _check_name(key, "random")
        if allowed is not None and key not in allowed:
            raise ValueError(f"random key {key!r} is not a parameter of the notebook "
                             f"(its parameters: {sorted(allowed)})")
    if set(space) & set(fixed):
        raise ValueError(f"{where}: {sorted(set(space) & set(fixed))} both fixed and sampled")
    specs = {key: _check_spec(key, spec) for key, spec in space.items()}
    target = min(n, math.prod(_space_size(*s) for s in specs.values()))
    rng = np.random.default_rng(seed)
    out: dict[str, dict] = {}
    for _ in range(100 * n):  # bounded: rounding can make a narrow float range smaller than n
        if len(out) >= target:
            break
        config = {**fixed, **{key: _draw(*s, rng) for key, s in specs.items()}}
        out.setdefault(point_id(config), config)
    return list(out.values())


def point_id(params: dict) -> str:
    """A stable id of a parameter point (hash of its sorted JSON)."""
    blob = json.dumps(params, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


#: the lock file a running sweep holds in its output folder
LOCK_NAME = "sweep.lock"

#: hidden files of a run folder: the attempt in progress, and the executed notebook while it runs
_RUNNING, _PARTIAL_NOTEBOOK = ".running", ".notebook.partial.ipynb"


class SweepLockError(RuntimeError):
    """Another sweep holds the lock on the output folder."""


class _FolderLock:
    """An exclusive ``flock`` on ``<out>/sweep.lock`` holding the owner's pid, host and start time.

    The kernel drops the lock when its holder exits, however it exits, so the lock of a sweep that was
    killed is free: the next sweep takes it over (and reports whose it was).
    """

    def __init__(self, folder: Path):
        self.path = folder / LOCK_NAME
        self.fd: int | None = None

    def acquire(self, log) -> None:
        import fcntl

        for _ in range(20):  # only a lock released and removed between our open and flock makes us retry
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _lock_holder(fd)
                os.close(fd)
                raise SweepLockError(
                    f"another sweep is writing to {self.path.parent}: it holds the lock {self.path} "
                    f"({holder}); wait for it to finish or use another output folder") from None
            except OSError as exc:  # a file system without locks
                os.close(fd)
                log(f"cannot lock {self.path} ({exc}); running without a lock: run one sweep at a time here")
                return
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the holder removed the file as we opened it: lock the new one
                os.close(fd)
                continue
            previous = _lock_info(fd)
            if previous.get("pid") is not None:
                log(f"took over the lock {self.path} left by a sweep that no longer runs ({_describe(previous)})")
            info = {"pid": os.getpid(), "host": socket.gethostname(),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
            os.fsync(fd)
            self.fd = fd
            return
        raise SweepLockError(f"cannot take the lock {self.path}: it keeps being replaced")

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # removed while still held: a waiting opener sees it is gone
        finally:
            os.close(self.fd)
            self.fd = None


def _lock_info(fd: int) -> dict:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _describe(info: dict) -> str:
    return f"pid {info.get('pid')} on {info.get('host')}, started {info.get('started')}"


def _lock_holder(fd: int) -> str:
    info = _lock_info(fd)
    if info.get("pid") is None:
        return "pid not yet written: it is starting"
    text = _describe(info)
    if info.get("host") == socket.gethostname() and not _alive(info["pid"]):
        text += "; that process has exited, but a process it started still holds the lock"
    return text


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError, OverflowError):
        return True
    return True


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text)


def _read_json(path: Path):
    """``(value, problem)``: the JSON in ``path``, or None and why it cannot be used (``"missing"``, ...)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, "missing"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable ({exc})"
    if not text.strip():
        return None, "empty"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc})"


def _read_result(path: Path):
    """``(record, problem)`` for a run's ``result.json`` (a JSON object whose ``results`` is a mapping)."""
    record, problem = _read_json(path)
    if problem is None and not (isinstance(record, dict) and isinstance(record.get("results", {}), dict)):
        record, problem = None, "not a record (a JSON object with a 'results' mapping)"
    return record, problem


_PRELOADS: dict = {}


class SweepRun(NamedTuple):
    """One run folder of a sweep, as :func:`read_runs` reads it."""

    name: str  #: the point's id (its folder's name)
    params: dict  #: the point notebook's defaults, overridden by the run's ``params.json``
    record: dict | None  #: ``result.json`` (None: the point did not finish, or its record cannot be read)
    seconds: float  #: the run's wall time from ``run.json`` (NaN where the folder has none)


def read_runs(folder, notebook) -> list[SweepRun]:
    """The run folders (``runs/<id>/``: ``params.json``, ``result.json``, ``run.json``, the files a sweep
    commits) of a sweep of the point notebook ``notebook`` in ``folder``, sorted by id. A parameter absent
    from a run's ``params.json`` has the notebook's default value; a folder without readable parameters is
    left out. No results table is needed: a fresh clone of committed run folders reads the same."""
    import ast

    defaults = {k: ast.literal_eval(v) for k, v in notebook_parameters(notebook).items()}
    root = Path(folder) / "runs"
    runs = []
    for run in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        params, _ = _read_json(run / "params.json")
        if not isinstance(params, dict):
            continue
        record, problem = _read_result(run / "result.json")
        info, _ = _read_json(run / "run.json")
        seconds = info.get("seconds") if isinstance(info, dict) else None
        runs.append(SweepRun(run.name, {**defaults, **params}, record if problem is None else None,
                             float(seconds) if isinstance(seconds, (int, float)) else float("nan")))
    return runs


def _warm_server(nb: str, cwd: str):
    """This worker's fork server for ``nb`` (None: fresh kernels)."""
    from . import forkserver
    from .notebooks import drop_headless_backend

    if not forkserver.supported():
        return None
    drop_headless_backend()  # before the template starts, so that it has the kernels' environment
    key = (nb, cwd)
    if key not in _PRELOADS:
        _PRELOADS[key] = forkserver.notebook_preload(nb, cwd)
    return forkserver.server_for(_PRELOADS[key], log=_report)


class _PointFailed(Exception):
    """A point whose notebook failed in a forked child: its error and traceback, as the child reported them."""

    def __init__(self, error: str, trace: str):
        super().__init__(error)
        self.error, self.trace = error, trace


def _run_forked(nb: str, partial: Path, params: dict, cwd: str, run: Path) -> bool:
    """Execute the point in a child of this worker's fork server, without a kernel
    (:meth:`treebook.forkserver.ForkServer.run_notebook`); False when no fork server can serve it (the
    point then needs a fresh kernel). Raises :class:`_PointFailed` when the point failed."""
    error_path = run / ".error.json"
    error_path.unlink(missing_ok=True)
    for _attempt in range(2):  # a template that retired (a source file changed) is replaced once
        try:
            server = _warm_server(nb, cwd)
        except Exception as exc:  # noqa: BLE001 - a fork server that cannot serve leaves fresh kernels
            _report(f"fork server unavailable ({type(exc).__name__}: {exc}); this point gets a fresh kernel")
            return False
        if server is None:
            return False
        with open(run / "kernel.log", "ab") as log:
            reply = server.run_notebook(nb, partial, params, cwd, log.fileno(), error_path)
        if "fresh" in reply:
            with open(run / "kernel.log", "a") as log:
                log.write(f"treebook: not run in a forked process: {reply['fresh']}\n")
            continue
        code = reply["exit"]
        if code == 0:
            return True
        report, _ = _read_json(error_path)
        error_path.unlink(missing_ok=True)
        if isinstance(report, dict) and code == 1:
            raise _PointFailed(str(report.get("error", "")), str(report.get("traceback", "")))
        how = ("its fork server went away while it ran" if code is None else
               f"killed by signal {-code}" if code < 0 else f"exited with code {code}")
        raise _PointFailed(f"DeadKernelError: the point's process (forked, no kernel) died: {how}", "")
    return False


def _run_point(nb: str, run_dir: str, params: dict, cwd: str, token: str = "", warm: bool = True) -> dict:
    """Execute one point (runs on a Dask worker). Never raises: errors are recorded.

    Every file is written whole (temporary file and rename): ``params.json`` first, then the notebook's
    ``result.json`` (through :func:`treebook.results.save_results`) or ``error.txt``, then the executed
    ``notebook.ipynb``. A run that fails after its notebook wrote ``result.json`` keeps that file as
    ``result.json.failed``, so that only a finished point has a ``result.json``. ``run.json`` then records
    the point's wall seconds, status and kernel (forked or fresh), so that a later sweep's table still
    has the time of a point it skipped, and the machine's 1-minute load average as the point started and
    ended beside its number of CPUs (a point whose work runs under a wall-clock limit got that much less
    of the machine when the load exceeded the CPUs). ``.running`` names the attempt (``token``) while it runs, so that the sweep can
    tell a point whose worker died while running it from one that never started.

    With ``warm``, the point runs in a child of this worker's fork server (:mod:`treebook.forkserver`),
    which has done the notebook's imports, and the child executes the cells without a kernel
    (:mod:`treebook._inprocess`); without it (or where fork servers are not supported) it gets a fresh
    kernel.
    """
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    result_path = run / "result.json"
    partial = run / _PARTIAL_NOTEBOOK
    (run / "error.txt").unlink(missing_ok=True)
    _write_text(run / _RUNNING, json.dumps({"token": token, "pid": os.getpid(), "host": socket.gethostname()}))
    _write_text(run / "params.json", json.dumps(params, sort_keys=True, default=str))
    t0 = time.perf_counter()
    load_start = _load()
    status, error, trace = "ok", "", ""
    kind = "fresh"
    saved = None
    parameters = {**params, "result_path": str(result_path)}
    try:
        if warm and _run_forked(nb, partial, parameters, cwd, run):
            kind = "forked"
        else:
            # the kernel process inherits this worker's stderr: send its log to the run folder instead of
            # the console (or of the notebook that started the cluster)
            saved = os.dup(2)
            with open(run / "kernel.log", "ab") as log:
                os.dup2(log.fileno(), 2)
                execute_notebook(nb, partial, parameters=parameters, cwd=cwd, progress_bar=False,
                                 kernel_name="python3")
        _record, problem = _read_result(result_path)
        if problem == "missing":
            raise RuntimeError("the notebook wrote no result JSON")
        if problem is not None:
            raise RuntimeError(f"the notebook wrote a result JSON that cannot be read: {problem}")
    except Exception as exc:  # noqa: BLE001 - any failure of a run is recorded, not raised
        status = "failed"
        if isinstance(exc, _PointFailed):
            error, trace = exc.error.strip()[:2000], exc.trace
        else:
            error, trace = error_line(exc)[:2000], f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
        # the table gets one line; error.txt the line and the whole traceback
        _write_text(run / "error.txt", error + "\n\n" + trace)
        if result_path.exists():  # written before a later cell failed: not a finished point
            os.replace(result_path, run / "result.json.failed")
    finally:
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)
        if partial.is_file():
            os.replace(partial, run / "notebook.ipynb")
        seconds = time.perf_counter() - t0
        _write_text(run / "run.json", json.dumps({"seconds": round(seconds, 3), "status": status,
                                                  "kernel": kind,
                                                  "end_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                  "load": [load_start, _load()], "cpus": os.cpu_count()},
                                                 sort_keys=True) + "\n")
        (run / _RUNNING).unlink(missing_ok=True)
    return {"status": status, "error": error, "seconds": seconds}


def _load() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _started(run_dir: Path, token: str) -> bool:
    info, _ = _read_json(run_dir / _RUNNING)
    return isinstance(info, dict) and info.get("token") == token


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, (list, tuple)):
            out[key] = json.dumps(v)
        else:
            out[key] = v
    return out


def _check_workers(workers) -> None:
    if workers is None:
        return
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be a positive integer (the LocalCluster's worker processes); got {workers!r}")


def _report(message: str) -> None:
    print(f"treebook sweep: {message}", file=sys.stderr)


def _clean_leftovers(folder: Path) -> None:
    """Remove the temporary files of writes that a killed sweep did not finish (under the folder's lock)."""
    for tmp in folder.glob(".*.tmp"):
        tmp.unlink(missing_ok=True)


def _plan(out: Path, points: list[dict], base: dict, log) -> tuple[dict, list]:
    """The current grid's points (``{id: (point, full params)}``) and those to run, checking every record.

    A finished point has a readable ``result.json`` (its other files may be missing: the records kept in
    the repository have only ``params.json`` and ``result.json``). A damaged ``result.json`` is reported
    by path, kept beside as ``result.json.damaged`` and the point runs again; so does a point whose run
    was interrupted before it wrote its result.
    """
    rows, todo = {}, []
    for params in points:
        full = {**base, **params}
        pid = point_id(full)
        rows[pid] = (params, full)
        run_dir = out / "runs" / pid
        if run_dir.is_dir():
            _clean_leftovers(run_dir)
            (run_dir / _RUNNING).unlink(missing_ok=True)
        result = run_dir / "result.json"
        record, problem = _read_result(result)
        if record is not None:
            partial = run_dir / _PARTIAL_NOTEBOOK
            if partial.is_file():  # killed after the result was written, before the notebook was moved
                if (run_dir / "notebook.ipynb").is_file():
                    partial.unlink()
                else:
                    os.replace(partial, run_dir / "notebook.ipynb")
            stored, p_problem = _read_json(run_dir / "params.json")
            if p_problem is not None or stored != json.loads(json.dumps(full, sort_keys=True, default=str)):
                why = p_problem or "differs from the point"
                log(f"{run_dir / 'params.json'}: {why}; written again from the grid (the result is kept)")
                _write_text(run_dir / "params.json", json.dumps(full, sort_keys=True, default=str))
            continue
        if problem != "missing":
            log(f"{result}: damaged record ({problem}); kept as result.json.damaged, the point runs again")
            os.replace(result, run_dir / "result.json.damaged")
        elif run_dir.is_dir() and not (run_dir / "error.txt").is_file():
            log(f"{result}: missing (its run did not finish); the point runs again")
        todo.append((pid, full))
    return rows, todo


def _execute(nb: Path, out: Path, todo: list, scheduler, workers, progress: bool, total: int, log,
             warm: bool = True) -> dict:
    """Run the points of ``todo`` on Dask; return ``{id: status}``.

    A worker that dies while running a point makes Dask run that point again, on another worker, up to
    ``distributed.scheduler.allowed-failures`` times before it gives up with ``KilledWorker``: that point
    is then recorded as failed. The points a dead worker held without having started them are submitted
    again, so a point that kills its worker never takes the others down with it (the ``LocalCluster``
    also hands each worker one point at a time).
    """
    if scheduler is None and warm and _warm_server(str(nb), str(nb.parent)) is not None:
        return _execute_forked(nb, out, todo, workers, progress, total)
    import dask
    from dask.distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm

    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
            cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        client = Client(cluster)
    statuses: dict[str, dict] = {}
    resubmits = {pid: 0 for pid, _ in todo}
    try:
        def submit(pid, full):
            token = f"{pid}-{resubmits[pid]}-{secrets.token_hex(4)}"
            fut = client.submit(_run_point, str(nb), str(out / "runs" / pid), full, str(nb.parent), token,
                                warm, pure=False, key=f"sweep-point-{token}")
            futures[fut] = (pid, full, token)
            return fut

        futures: dict = {}
        queue = as_completed([submit(pid, full) for pid, full in todo])
        bar = tqdm(total=total, initial=total - len(todo), desc=f"sweep {nb.stem}", disable=not progress,
                   unit="run")
        for fut in queue:
            pid, full, token = futures.pop(fut)
            try:
                statuses[pid] = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker is recorded like a failure
                lost = type(exc).__name__ == "KilledWorker"
                if lost and not _started(out / "runs" / pid, token) and resubmits[pid] < 3:
                    resubmits[pid] += 1
                    log(f"point {pid} was held by a worker that died before it started; submitted again")
                    queue.add(submit(pid, full))
                    continue
                what = ("the worker running this point died every time it ran it; " if lost else "")
                statuses[pid] = {"status": "failed", "error": f"{type(exc).__name__}: {what}{exc}"[:2000],
                                 "seconds": None}
                if (out / "runs" / pid).is_dir():
                    _write_text(out / "runs" / pid / "error.txt", statuses[pid]["error"] + "\n")
            bar.update(1)
        bar.close()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return statuses


def _execute_forked(nb: Path, out: Path, todo: list, workers, progress: bool, total: int) -> dict:
    """Run the points of ``todo`` on this machine without Dask: ``workers`` threads of this process, each
    asking this process's fork server for a child per point (:func:`_run_forked`); return ``{id: status}``.

    The children are the workers' processes: a point that kills its process, or runs out of memory,
    fails alone, and the template stays. A sweep that is killed takes the template and its children
    with it (the template exits when this process is gone)."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from tqdm import tqdm

    from . import forkserver

    statuses: dict[str, dict] = {}
    stop = threading.Event()

    def point(pid, full):
        if stop.is_set():  # interrupted before it started: no run folder, it runs in the next sweep
            return None
        return _run_point(str(nb), str(out / "runs" / pid), full, str(nb.parent), f"{pid}-0-{secrets.token_hex(4)}",
                          True)

    bar = tqdm(total=total, initial=total - len(todo), desc=f"sweep {nb.stem}", disable=not progress, unit="run")
    pool = ThreadPoolExecutor(max_workers=workers or 2, thread_name_prefix="treebook-sweep")
    futures = {pool.submit(point, pid, full): pid for pid, full in todo}
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                statuses[futures[fut]] = fut.result()
                bar.update(1)
    except BaseException:
        # an interrupt: no point starts any more, and the running ones' processes are stopped (closing the
        # template kills its children), so that their threads return; a thread that was just starting a
        # template is caught by closing again
        stop.set()
        for fut in futures:
            fut.cancel()
        deadline = time.monotonic() + 60
        while True:
            forkserver._close_server()
            running = [f for f in futures if not f.done()]
            if not running or time.monotonic() > deadline:
                break
            wait(running, timeout=0.5)
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        bar.close()
    return statuses


def _row(out: Path, pid: str, full: dict | None, status: dict | None, log) -> dict:
    run_dir = out / "runs" / pid
    if full is None:
        full, problem = _read_json(run_dir / "params.json")
        if problem is not None or not isinstance(full, dict):
            log(f"{run_dir / 'params.json'}: {problem or 'not a mapping'}; the run's parameters are not in the table")
            full = {}
    rec = {"run_id": pid, **full}
    record, problem = _read_result(run_dir / "result.json")
    if record is not None:
        if not (status and status["status"] == "ok"):  # finished by an earlier sweep: its run.json has the time
            info, _ = _read_json(run_dir / "run.json")
            seconds = info.get("seconds") if isinstance(info, dict) else None
            status = {"status": "ok", "error": "", "seconds": seconds}
        rec.update(status)
        rec.update(_flatten(record.get("results", {})))
    else:
        if status is None:
            err = ""
            if (run_dir / "error.txt").is_file():
                err = (run_dir / "error.txt").read_text(errors="replace").partition("\n")[0]
            elif problem == "missing":
                err = "the run did not finish (no result.json)"
            else:
                err = f"result.json: {problem}"
            status = {"status": "failed", "error": err, "seconds": None}
        rec.update(status)
    rec["notebook"] = str(run_dir / "notebook.ipynb")
    return rec


def _gather(out: Path, rows: dict, statuses: dict, log) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The current grid's table and the table of every run folder in ``out/runs`` (the grid's rows first)."""
    current = [_row(out, pid, full, statuses.get(pid), log) for pid, (_params, full) in rows.items()]
    others = []
    for run_dir in sorted(p for p in (out / "runs").iterdir() if p.is_dir() and p.name not in rows):
        if not (run_dir / "params.json").exists() and not (run_dir / "result.json").exists():
            log(f"{run_dir}: neither params.json nor result.json; not in the table")
            continue
        others.append(_row(out, run_dir.name, None, None, log))
    return pd.DataFrame.from_records(current), pd.DataFrame.from_records(current + others)


def _write_tables(out: Path, table: pd.DataFrame) -> None:
    import io

    write_atomic(out / "results.csv", table.to_csv(index=False))
    buf = io.BytesIO()
    table.astype({c: str for c in table.columns if table[c].dtype == object}).to_parquet(buf, index=False)
    write_atomic(out / "results.parquet", buf.getvalue())


def run_sweep(notebook, grid, out, *, base_params=None, scheduler: str | None = None,
              workers: int | None = None, progress: bool = True, log=None, warm: bool = True) -> pd.DataFrame:
    """Run ``notebook`` at every grid point and return the results table of the grid's points.

    Parameters
    ----------
    notebook : str or path
        A notebook path or stem (``01-nominal-partitions``).
    grid : dict or path
        The grid (see :func:`expand_grid`), or a YAML file holding it.
    out : path
        Output folder: ``runs/<id>/`` per point (executed notebook, params, kernel log, result or error),
        and ``results.csv`` / ``results.parquet``, which hold every run folder of ``out`` (the points of
        earlier sweeps into the same folder too), this grid's points first.
    base_params : dict or path, optional
        Parameters common to every point (a flat mapping, or a profile file such as
        ``notebooks/params/smoke.yml`` whose section for this notebook is used).
    scheduler : str, optional
        Address of an existing Dask scheduler. By default the points run on this machine: ``workers``
        threads of this process, each point in a child of this process's template (or, with fresh
        kernels, on a ``LocalCluster`` of ``workers`` workers).
    workers : int, optional
        Points run at once on this machine (threads, or the ``LocalCluster``'s workers of one thread
        each); a positive integer, 2 by default.
    log : callable, optional
        Receives one message per damaged or missing record (named by path) and per lock taken over;
        printed to stderr by default.
    warm : bool, default True
        Run each point in a child forked from a template process that has done the notebook's imports,
        without a kernel (:mod:`treebook.forkserver`, :mod:`treebook._inprocess`; Linux only, fresh
        kernels elsewhere). False starts a fresh kernel per point.

    Notes
    -----
    The sweep holds ``out/sweep.lock`` while it runs: a second sweep on the same folder raises
    :class:`SweepLockError` naming the holder's pid; the lock of a sweep that was killed is taken over.
    Every record is written whole (temporary file and rename), so a sweep killed at any moment leaves
    finished points that the next run keeps, and points that it runs again.
    """
    _check_workers(workers)
    log = log or _report
    from ._inprocess import import_nbformat

    import_nbformat()  # before papermill (notebook_parameters) imports it
    nb = notebook_path(notebook)
    allowed = set(notebook_parameters(nb))
    grid_dict = load_grid(grid) if not isinstance(grid, dict) else grid
    points = expand_grid(grid_dict, allowed)
    base = _base_params(base_params, nb.stem, allowed)
    out = Path(out).resolve()
    (out / "runs").mkdir(parents=True, exist_ok=True)

    lock = _FolderLock(out)
    lock.acquire(log)
    try:
        _clean_leftovers(out)
        rows, todo = _plan(out, points, base, log)
        statuses = _execute(nb, out, todo, scheduler, workers, progress, len(points), log, warm) if todo else {}
        table, everything = _gather(out, rows, statuses, log)
        _write_tables(out, everything)
    finally:
        lock.release()
    return table


def _base_params(base_params, stem: str, allowed: set[str]) -> dict:
    if base_params is None:
        return {}
    if not isinstance(base_params, dict):
        path = Path(base_params)
        if not path.is_absolute() and not path.is_file():
            path = project_root() / path
        if not path.is_file():
            raise FileNotFoundError(f"parameters file {path} does not exist")
        base_params = read_yaml(path) or {}
        if not isinstance(base_params, dict):
            raise ValueError(f"{path}: base parameters must be a mapping")
    if stem in base_params and isinstance(base_params[stem], dict):
        base_params = base_params[stem]
    for key in base_params:
        if key not in allowed:
            raise ValueError(f"base parameter {key!r} is not a parameter of the notebook "
                             f"(its parameters: {sorted(allowed)})")
    return dict(base_params)
