"""Running a sweep's points: one point in a forked child of the worker's template or in a fresh
kernel (:func:`_run_point`), the points on this machine's threads or on a Dask cluster."""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

from .. import forkserver
from ..notebooks import drop_headless_backend, error_line, execute_notebook
from .records import _PARTIAL_NOTEBOOK, _RUNNING, _read_json, _read_result, _started, _write_text

_PRELOADS: dict = {}


def _warm_server(nb: str, cwd: str):
    """This worker's fork server for ``nb`` (None: fresh kernels)."""
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



def _report(message: str) -> None:
    print(f"treebook sweep: {message}", file=sys.stderr)



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


