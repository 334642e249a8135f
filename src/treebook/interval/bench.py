"""Timing of the solver and of MMIT fitting (the paper's Figure 3 and the chapter's speed targets).

The notebook calls these functions at small scale; ``benchmarks/bench_interval.py`` runs them at
full scale and writes a JSON.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pandas as pd

from ..validation import check_random_state
from .simulate import random_intervals, resampled_limits
from .solver import prefix_solve
from .tree import MMITRegressor


def _warm_up():
    y = random_intervals(50, random_state=0)
    for loss in ("linear", "squared"):
        prefix_solve(y[:, 0], y[:, 1], loss=loss)
    MMITRegressor(max_depth=1).fit(np.arange(100.0).reshape(50, 2), y)


def intervals_with_limits(n_limits, data="random", y_source=None, random_state=None):
    """Intervals holding (about) ``n_limits`` finite limits.

    ``data="random"``: :func:`~treebook.interval.simulate.random_intervals` (1.6 limits per interval);
    ``data="neuroblastoma"``: one-sided intervals resampled from the limits of ``y_source``.
    """
    rng = check_random_state(random_state)
    if data == "random":
        return random_intervals(max(1, int(round(n_limits / 1.6))), random_state=rng)
    if data == "neuroblastoma":
        if y_source is None:
            raise ValueError("data='neuroblastoma' needs y_source (the neuroblastoma targets)")
        return resampled_limits(y_source, int(n_limits), random_state=rng)
    raise ValueError(f"data must be 'random' or 'neuroblastoma'; got {data!r}")


def solver_timing(n_limits, *, losses=("linear", "squared"), data=("random",), y_source=None, margin=0.0,
                  repeats=1, random_state=None, progress=False):
    """Time one solver sweep for every size in ``n_limits``, loss and data kind.

    Returns a DataFrame with columns ``data, loss, n_limits, seconds`` (wall clock, best of ``repeats``),
    ``cpu_seconds`` (CPU time of the process: the one-core cost, robust to a shared machine),
    ``mean_moves`` and ``max_moves`` (pointer moves per finite limit).
    """
    rng = check_random_state(random_state)
    _warm_up()
    rows = []
    jobs = [(d, int(n)) for d in data for n in n_limits]
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, desc="solver timing")
    for d, n in jobs:
        y = intervals_with_limits(n, d, y_source, rng)
        limits = int(np.isfinite(y).sum())
        for loss in losses:
            best = best_cpu = np.inf
            for _ in range(repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                res = prefix_solve(y[:, 0], y[:, 1], loss=loss, margin=margin)
                best = min(best, time.perf_counter() - t0)
                best_cpu = min(best_cpu, time.process_time() - c0)
            row = {"data": d, "loss": loss, "n_limits": limits, "seconds": best, "cpu_seconds": best_cpu,
                   "mean_moves": float(res.limit_moves.sum() / limits),
                   "max_moves": int(res.limit_moves.max())}
            del res
            rows.append(row)
    return pd.DataFrame(rows)


def fit_timing(n_samples=100_000, n_features=20, max_depth=5, *, losses=("linear", "squared"), repeats=1,
               random_state=None):
    """Time ``MMITRegressor.fit`` on random intervals with normal features (the chapter's fit target):
    wall-clock ``seconds`` and ``cpu_seconds``, best of ``repeats``."""
    rng = check_random_state(random_state)
    _warm_up()
    X = rng.normal(size=(n_samples, n_features))
    y = random_intervals(n_samples, random_state=rng)
    rows = []
    for loss in losses:
        best = best_cpu = np.inf
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            est = MMITRegressor(loss=loss, max_depth=max_depth).fit(X, y)
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        rows.append({"loss": loss, "n_samples": n_samples, "n_features": n_features, "max_depth": max_depth,
                     "seconds": best, "cpu_seconds": best_cpu, "n_leaves": est.tree_.n_leaves})
    return pd.DataFrame(rows)


def alternating_worst_case(ns, loss="squared"):
    """Total pointer moves on the alternating limits (-1.5)^k (positive: lower, negative: upper limits),
    the squared hinge's quadratic worst case."""
    rows = []
    for n in ns:
        v = (-1.5) ** np.arange(1, int(n) + 1)
        lo = np.where(v > 0, v, -np.inf)
        hi = np.where(v > 0, np.inf, v)
        res = prefix_solve(lo, hi, loss=loss)
        rows.append({"n_limits": int(n), "loss": loss, "total_moves": int(res.moves.sum()),
                     "max_moves": int(res.moves.max())})
    return pd.DataFrame(rows)


def moves_over_orderings(X, y, margins, *, losses=("linear", "squared"), dataset=""):
    """Pointer moves per limit when the solver sweeps ``y`` in the order of each feature of ``X``
    (the sweeps a tree's root makes), for every margin: the paper's Figure 3 (left) protocol.

    One row per (loss, margin, feature, direction) with ``mean_moves`` and ``max_moves`` per finite limit.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    limits = int(np.isfinite(y).sum())
    orders = np.argsort(X, axis=0, kind="stable")
    rows = []
    for loss in losses:
        for margin in margins:
            for j in range(X.shape[1]):
                for direction, order in (("forward", orders[:, j]), ("backward", orders[::-1, j])):
                    yo = y[order]
                    res = prefix_solve(yo[:, 0], yo[:, 1], loss=loss, margin=float(margin))
                    rows.append({"dataset": dataset, "loss": loss, "margin": float(margin), "feature": j,
                                 "direction": direction, "n_limits": limits,
                                 "mean_moves": float(res.limit_moves.sum() / limits),
                                 "max_moves": int(res.limit_moves.max())})
    return pd.DataFrame(rows)


_MEMORY_PROBE = """
import sys
import numpy as np
from treebook.interval import prefix_solve
from treebook.interval.simulate import random_intervals


def hwm():
    # peak resident set of this process image (VmHWM, in kB); unlike ru_maxrss it is not inherited
    # from the parent across fork/exec
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) / 1024


n, loss = int(sys.argv[1]), sys.argv[2]
prefix_solve(np.array([0.0]), np.array([1.0]), loss=loss)
base = hwm()
y = random_intervals(max(1, int(round(n / 1.6))), random_state=0)
lo, hi = np.ascontiguousarray(y[:, 0]), np.ascontiguousarray(y[:, 1])
del y
res = prefix_solve(lo, hi, loss=loss)
print(base, hwm(), res.cost.size)
"""


def sweep_peak_memory(n_limits, losses=("linear", "squared")):
    """Peak resident memory (MB) of a fresh process that draws random intervals with ``n_limits`` limits
    and runs one sweep; also its peak after imports and compilation (``base_mb``). Linux only
    (``VmHWM`` of ``/proc/self/status``)."""
    rows = []
    for loss in losses:
        out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(int(n_limits)), loss],
                             check=True, capture_output=True, text=True)
        base, peak, n = out.stdout.split()
        rows.append({"loss": loss, "n_limits": int(n_limits), "n_intervals": int(n), "base_mb": float(base),
                     "peak_mb": float(peak)})
    return pd.DataFrame(rows)
