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

import numbers
from pathlib import Path

import pandas as pd

from .._inprocess import import_nbformat
from ..notebooks import notebook_parameters, notebook_path, project_root, read_yaml
from .execute import _execute, _report
from .grid import expand_grid, load_grid, point_id
from .lock import LOCK_NAME, SweepLockError, _FolderLock
from .records import SweepRun, _clean_leftovers, _gather, _plan, _write_tables, copy_finished, read_runs

__all__ = ["load_grid", "expand_grid", "run_sweep", "run_points", "point_id", "read_runs", "copy_finished",
           "SweepRun", "SweepLockError", "LOCK_NAME"]


def _check_workers(workers) -> None:
    if workers is None:
        return
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be a positive integer (the LocalCluster's worker processes); got {workers!r}")


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


def run_points(notebook, points, out, *, cache=None, workers: int | None = None, scheduler: str | None = None,
               progress: bool = False) -> tuple[list[SweepRun], int]:
    """Run ``points`` of ``notebook`` as a sweep into ``out`` (:func:`run_sweep`; its finished points are
    skipped), after copying into it those that the sweep folder ``cache`` holds finished
    (:func:`copy_finished`: they are read, not run). Raises ``RuntimeError`` naming the failed points, if any.
    Returns the points' runs (:class:`SweepRun`, in the points' order) and the number read from ``cache``."""
    points = list(points)
    cached = copy_finished(cache, out, points) if cache else []
    table = run_sweep(notebook, {"points": points}, out, scheduler=scheduler, workers=workers, progress=progress)
    failed = table[table.status != "ok"]
    if len(failed):
        raise RuntimeError(f"{len(failed)} point(s) of {notebook} failed: {failed.error.tolist()[:3]}")
    runs = {run.name: run for run in read_runs(out, notebook)}
    return [runs[point_id(p)] for p in points], len(cached)
