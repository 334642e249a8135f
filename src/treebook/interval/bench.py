"""Timing of the solver and of MMIT fitting (the paper's Figure 3 and the chapter's speed targets).

The notebook calls these functions at small scale; ``benchmarks/bench_interval.py`` runs them at
full scale and writes a JSON.

Figure 3 in the authors' scripts (GitHub ``tdhock/mmit-paper``):

- right (``figure-simulated-seconds.R``): rows of the neuroblastoma targets resampled with replacement,
  each row shifted by one ``U(0, 1)`` draw (both limits alike), solved with margin 1 by both losses on
  prefixes of one draw of ``1e3 .. 1e7`` rows (:func:`solver_timing`, generator ``"authors"``, the default);
- left (``moves.R``, ``figure-moves.R``): every real data set, every feature and both directions, 10
  margins log-spaced from the smallest positive gap between the sorted finite limits to their range,
  both losses; per sweep the maximum over rows of (moves of the row / finite limits of the row) and
  the total moves over the total finite limits; the figure plots medians and quartiles over sweeps,
  grouped by the number of finite limits (:func:`moves_over_orderings`; :func:`moves_over_sizes` runs
  the same protocol on resampled sets of growing size). Note: the stored ``moves.R`` sorts the
  targets by each feature (``ord.mat``) but passes the unsorted ``target.mat`` to
  ``compute_optimal_costs``, so all its orderings of one data set are the file's row order; ours sort.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pandas as pd

from ..datasets.mmit import load_neuroblastoma
from ..validation import check_random_state
from .experiments import margin_grid
from .simulate import (
    AUTHORS_TIMING_MARGIN,
    GENERATORS,
    authors_resampled_limits,
    random_intervals,
    resampled_limits,
)
from .solver import prefix_solve
from .tree import MMITRegressor


def _warm_up():
    y = random_intervals(50, random_state=0)
    for loss in ("linear", "squared"):
        prefix_solve(y[:, 0], y[:, 1], loss=loss)
    MMITRegressor(max_depth=1).fit(np.arange(100.0).reshape(50, 2), y)


def _check_generator(generator):
    if generator not in GENERATORS:
        raise ValueError(f"generator must be one of {GENERATORS}; got {generator!r}")


def generator_margin(generator, margin=None):
    """The margin of a Figure 3 (right) generator: ``margin`` when given, else 1 for ``"authors"``
    (their ``compute_optimal_costs(..., 1, loss)``) and 0 for ``"ours"``."""
    _check_generator(generator)
    if margin is not None:
        return float(margin)
    return AUTHORS_TIMING_MARGIN if generator == "authors" else 0.0


def _neuroblastoma_targets(y_source):
    if y_source is not None:
        return np.asarray(y_source, dtype=float)

    return load_neuroblastoma()[1]


def _rows_for_limits(y, n_limits):
    """Rows of ``y`` that carry about ``n_limits`` finite limits (one row per limit for neuroblastoma)."""
    per_row = float(np.isfinite(y).sum(axis=1).mean())
    return max(1, int(round(n_limits / per_row)))


def intervals_with_limits(n_limits, data="random", y_source=None, random_state=None, *, generator="authors"):
    """Intervals holding (about) ``n_limits`` finite limits.

    ``data="random"``: :func:`~treebook.interval.simulate.random_intervals` (1.6 limits per interval);
    ``data="neuroblastoma"``: intervals made from ``y_source`` (the neuroblastoma targets, loaded when
    ``None``) by the generator: ``"authors"`` -- rows resampled and jittered by
    :func:`~treebook.interval.simulate.authors_resampled_limits`; ``"ours"`` -- one-sided intervals
    resampled from the pool of limits by :func:`~treebook.interval.simulate.resampled_limits`.
    """
    rng = check_random_state(random_state)
    _check_generator(generator)
    if data == "random":
        return random_intervals(max(1, int(round(n_limits / 1.6))), random_state=rng)
    if data == "neuroblastoma":
        y_source = _neuroblastoma_targets(y_source)
        if generator == "authors":
            return authors_resampled_limits(y_source, _rows_for_limits(y_source, n_limits), random_state=rng)
        return resampled_limits(y_source, int(n_limits), random_state=rng)
    raise ValueError(f"data must be 'random' or 'neuroblastoma'; got {data!r}")


def _move_stats(res, y):
    """Pointer moves per finite limit: the mean, the maximum over limits and the authors' maximum over
    rows of (moves of the row / finite limits of the row) (``moves.R``)."""
    per_row = np.isfinite(y).sum(axis=1)
    limits = int(per_row.sum())
    return {"n_limits": limits, "mean_moves": float(res.limit_moves.sum() / limits),
            "max_moves": int(res.limit_moves.max()),
            "max_moves_row": float(np.max(res.moves / np.maximum(per_row, 1)))}


def solver_timing(n_limits, *, losses=("linear", "squared"), data=("neuroblastoma",), y_source=None,
                  margin=None, generator="authors", repeats=1, random_state=None, progress=False):
    """Time one solver sweep for every size in ``n_limits``, loss and data kind (Figure 3, right).

    ``generator="authors"`` (default) follows ``figure-simulated-seconds.R`` of ``tdhock/mmit-paper``:
    ``data="neuroblastoma"`` intervals are rows of the neuroblastoma targets (``y_source``, loaded when
    ``None``) resampled with replacement and shifted by ``U(0, 1)`` (both limits alike), every size is a
    prefix of one draw, and the margin is 1. ``generator="ours"`` is the book's first version: limits
    resampled one by one, a fresh draw per size, margin 0. ``margin`` overrides the generator's margin
    (for every data kind). ``data="random"`` draws :func:`~treebook.interval.simulate.random_intervals`
    for every size under both generators.

    Returns a DataFrame with columns ``data, loss, n_limits, seconds`` (wall clock, best of ``repeats``),
    ``cpu_seconds`` (CPU time of the process: the one-core cost, robust to a shared machine),
    ``mean_moves`` and ``max_moves`` (pointer moves per finite limit: mean, maximum over limits),
    ``max_moves_row`` (the authors' maximum over rows of moves / finite limits of the row),
    ``generator`` and ``margin``.
    """
    rng = check_random_state(random_state)
    _check_generator(generator)
    margin = generator_margin(generator, margin)
    _warm_up()
    sizes = [int(n) for n in n_limits]
    prefix_source = None
    if generator == "authors" and "neuroblastoma" in data and sizes:
        y_nb = _neuroblastoma_targets(y_source)
        prefix_source = authors_resampled_limits(y_nb, _rows_for_limits(y_nb, max(sizes)), random_state=rng)
        rows_of = {n: _rows_for_limits(y_nb, n) for n in sizes}
    rows = []
    jobs = [(d, n) for d in data for n in sizes]
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, desc="solver timing")
    for d, n in jobs:
        if d == "neuroblastoma" and prefix_source is not None:
            y = np.ascontiguousarray(prefix_source[:rows_of[n]])
        else:
            y = intervals_with_limits(n, d, y_source, rng, generator=generator)
        lo, hi = np.ascontiguousarray(y[:, 0]), np.ascontiguousarray(y[:, 1])
        for loss in losses:
            best = best_cpu = np.inf
            for _ in range(repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                res = prefix_solve(lo, hi, loss=loss, margin=margin)
                best = min(best, time.perf_counter() - t0)
                best_cpu = min(best_cpu, time.process_time() - c0)
            stats = _move_stats(res, y)
            row = {"data": d, "loss": loss, "n_limits": stats["n_limits"], "seconds": best,
                   "cpu_seconds": best_cpu, "mean_moves": stats["mean_moves"],
                   "max_moves": stats["max_moves"],
                   "max_moves_row": stats["max_moves_row"], "generator": generator, "margin": margin}
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
    (the sweeps a tree's root makes), for every margin: the paper's Figure 3 (left) protocol
    (``moves.R`` of ``tdhock/mmit-paper``: every feature, both directions, 10 margins from
    :func:`~treebook.interval.experiments.margin_grid` ``(y, 10)``, both losses).

    One row per (loss, margin, feature, direction) with ``mean_moves`` and ``max_moves`` per finite limit
    and ``max_moves_row``, the authors' statistic (maximum over rows of moves / finite limits of the row).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    orders = np.argsort(X, axis=0, kind="stable")
    rows = []
    for loss in losses:
        for margin in margins:
            for j in range(X.shape[1]):
                for direction, order in (("forward", orders[:, j]), ("backward", orders[::-1, j])):
                    yo = y[order]
                    res = prefix_solve(yo[:, 0], yo[:, 1], loss=loss, margin=float(margin))
                    rows.append({"dataset": dataset, "loss": loss, "margin": float(margin), "feature": j,
                                 "direction": direction, **_move_stats(res, yo)})
    return pd.DataFrame(rows)


def moves_over_sizes(X, y, sizes, *, generator="authors", margins=None, n_margins=10, features=None,
                     losses=("linear", "squared"), dataset="", jitter=1.0, random_state=None, progress=False):
    """Figure 3 (left) over a range of data-set sizes: rows of ``(X, y)`` resampled to every size in
    ``sizes``, then :func:`moves_over_orderings` on each resampled set.

    The sizes are prefixes of one draw of ``max(sizes)`` rows (as in the authors' timing script).
    ``generator="authors"``: every drawn row's limits are shifted by one ``U(0, jitter)`` draw (the
    ``figure-simulated-seconds.R`` jitter, applied to the targets only); ``"ours"``: the same rows, no
    jitter. ``margins=None``: for every resampled set, the authors' ``moves.R`` grid of ``n_margins``
    values from the smallest positive gap between sorted finite limits to their range
    (:func:`~treebook.interval.experiments.margin_grid`); or a fixed sequence of margins for every size.
    ``features``: ``None`` (all columns), an int (that many columns drawn at random) or column indices.

    Returns the rows of :func:`moves_over_orderings` with ``n_rows`` and ``generator`` added.
    """

    _check_generator(generator)
    rng = check_random_state(random_state)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    p = X.shape[1]
    if features is None:
        feats = np.arange(p)
    elif isinstance(features, (int, np.integer)):
        feats = np.sort(rng.choice(p, size=min(int(features), p), replace=False))
    else:
        feats = np.asarray(features, dtype=np.intp)
    sizes = [int(n) for n in sizes]
    n_max = max(sizes)
    idx = rng.integers(0, X.shape[0], n_max)
    shift = jitter * rng.random(n_max) if generator == "authors" else np.zeros(n_max)
    it = sizes
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(sizes, desc=f"moves over sizes {dataset}")
    out = []
    for n in it:
        ys = y[idx[:n]] + shift[:n, None]
        Xs = X[idx[:n]][:, feats]
        m = margin_grid(ys, n_margins) if margins is None else np.asarray(margins, dtype=float)
        df = moves_over_orderings(Xs, ys, m, losses=losses, dataset=dataset)
        df["feature"] = feats[df["feature"].to_numpy()]
        df["n_rows"] = n
        df["generator"] = generator
        out.append(df)
    return pd.concat(out, ignore_index=True)


_MEMORY_PROBE = """
import sys
import numpy as np
from treebook.interval import prefix_solve
from treebook.interval.simulate import random_intervals
from treebook.memory import peak_rss_mib as hwm


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
