"""Experiment and benchmark drivers of chapter 3 (used by the notebook at small scale and by
``benchmarks/bench_shape.py`` at full scale).

Training-set protocol: each fold is a stratified 70/10/20 split (fold ``f`` uses the seed
``FOLD_SEEDS[f]``; the paper reports 5 folds); each method is fitted on the 70 % training part and judged by
its training errors, time to its best tree and (for exact methods) whether optimality was proved within the
budget.  Literati's budget is a number of expanded states (``max_expansions``, deterministic) or a time
limit; the peers take a time limit.  The peers ``pycontree`` (ConTree), ``pystreed``
(STreeD) and ``sgtlearn`` (ShapeCART / ShapeTAO) are used only when installed.
"""

from __future__ import annotations

import importlib.util
import time
import warnings

import numpy as np
import pandas as pd

from ..datasets.shape_trees import load_shape_dataset, paper_split
from ..memory import peak_rss_mib, rss_mib
from ..tree import CARTClassifier
from .literati import LiteratiClassifier
from .shapecart import ShapeCARTClassifier

__all__ = ["available_peers", "fold_data", "literati_run", "load_train_sweep", "memory_run", "peer_run",
           "training_benchmark"]


def available_peers() -> list[str]:
    """Names of the optional peer packages that can be imported here."""
    return [m for m in ("pycontree", "pystreed", "sgtlearn") if importlib.util.find_spec(m) is not None]


def fold_data(name: str, seed: int = 42):
    """``(X_train, y_train, X_val, y_val, X_test, y_test)`` of one data set and fold seed."""
    X, y = load_shape_dataset(name)
    tr, va, te = paper_split(y, seed)
    return X[tr], y[tr], X[va], y[va], X[te], y[te]


def literati_run(X, y, *, max_depth, max_breakpoints, time_limit=None, max_expansions=None, candidates="cart",
                 lam=0.0, alpha=0.0, **kwargs) -> dict:
    """Fit Literati once; return errors, objective, bounds, proof flag, times and the fitted estimator.

    ``max_expansions`` alone gives a deterministic run; ``time_limit`` (seconds) alone a wall-clock one.
    """
    est = LiteratiClassifier(max_depth=max_depth, max_breakpoints=max_breakpoints, lam=lam, alpha=alpha,
                             time_limit=time_limit, max_expansions=max_expansions, candidates=candidates,
                             random_state=0, **kwargs)
    t0 = time.perf_counter()
    est.fit(X, y)
    elapsed = time.perf_counter() - t0
    tr = est.trace_
    final = tr[-1, 1]
    t_best = float(tr[np.argmax(tr[:, 1] <= final + 1e-9), 0])
    return {
        "errors": int(est.train_errors_), "objective": est.objective_, "lower_bound": est.lower_bound_,
        "proved": est.proved_optimal_, "time": elapsed, "time_to_best": t_best, "n_expanded": est.n_expanded_,
        "n_leaves": int(est.tree_.n_leaves), "n_breakpoints": est.n_breakpoints_, "estimator": est,
    }


def peer_run(method: str, X, y, *, max_depth, time_limit) -> dict | None:
    """Fit a baseline or an installed peer; ``None`` when the peer package is missing."""
    t0 = time.perf_counter()
    proved = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "CART":
            est = CARTClassifier(max_depth=max_depth).fit(X, y)
        elif method.startswith("ShapeCART"):
            K = int(method.split("K=")[1].rstrip(")")) if "K=" in method else 3
            est = ShapeCARTClassifier(max_depth=max_depth, max_breakpoints=K, random_state=0).fit(X, y)
        elif method == "ConTree":
            if importlib.util.find_spec("pycontree") is None:
                return None
            from pycontree import ConTree
            est = ConTree(max_depth=max_depth, time_limit=time_limit).fit(X, y)
        elif method == "STreeD":
            if importlib.util.find_spec("pystreed") is None:
                return None
            from pystreed import STreeDClassifier
            est = STreeDClassifier(max_depth=max_depth, time_limit=time_limit, cost_complexity=0.0).fit(X, y)
        elif method in ("SGT-ShapeCART", "SGT-ShapeTAO"):
            if importlib.util.find_spec("sgtlearn") is None:
                return None
            from sgtlearn import SGTClassifier
            tao = 10 if method.endswith("TAO") else 0
            # an inner one-feature tree with 4 leaves = a shape function with at most K = 3 breakpoints
            est = SGTClassifier(max_depth=max_depth, random_state=0, tao_n_runs=tao, inner_max_leaf_nodes=4).fit(X, y)
        else:
            raise ValueError(f"unknown method {method!r}")
    elapsed = time.perf_counter() - t0
    errors = int(np.sum(np.asarray(est.predict(X)) != y))
    if method == "ConTree":
        proved = elapsed < time_limit * 0.98
    return {"errors": errors, "time": elapsed, "proved": proved, "estimator": est}


def training_benchmark(datasets, depths, Ks=(1, 2, 3), *, time_limit=None, max_expansions=None, candidates="cart",
                       baselines=("CART", "ShapeCART"), peers=(), peer_time_limit=None, seed=42,
                       progress=False) -> pd.DataFrame:
    """Training errors / accuracy of Literati (each K) beside baselines and peers, one row per run.

    Literati runs under ``max_expansions`` and/or ``time_limit``; the peers under ``peer_time_limit``
    (default: ``time_limit``, or 60 s when that is ``None``).
    """
    if time_limit is None and max_expansions is None:
        time_limit = 10.0
    if peer_time_limit is None:
        peer_time_limit = 60.0 if time_limit is None else time_limit
    rows = []
    jobs = [(d, D) for d in datasets for D in depths]
    it = jobs
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(jobs, desc="benchmark")
    for name, D in it:
        X, y = fold_data(name, seed)[:2]
        n = y.size
        for K in Ks:
            r = literati_run(X, y, max_depth=D, max_breakpoints=K, time_limit=time_limit,
                             max_expansions=max_expansions, candidates=candidates)
            rows.append({"dataset": name, "depth": D, "method": f"Literati K={K}", "K": K, "n": n,
                         "errors": r["errors"], "accuracy": 1 - r["errors"] / n, "proved": r["proved"],
                         "lower_bound": r["lower_bound"], "time": r["time"], "time_to_best": r["time_to_best"],
                         "n_expanded": r["n_expanded"], "n_leaves": r["n_leaves"], "peak_rss_mb": peak_rss_mib()})
        for m in tuple(baselines) + tuple(peers):
            r = peer_run(m, X, y, max_depth=D, time_limit=peer_time_limit)
            if r is None:
                continue
            rows.append({"dataset": name, "depth": D, "method": m, "K": 3 if "Shape" in m else 1, "n": n,
                         "errors": r["errors"], "accuracy": 1 - r["errors"] / n, "proved": r["proved"],
                         "lower_bound": np.nan, "time": r["time"], "time_to_best": r["time"], "n_expanded": np.nan,
                         "n_leaves": np.nan,
                         "peak_rss_mb": peak_rss_mib()})
    return pd.DataFrame(rows)


def load_train_sweep(folder, datasets, depths, folds=(0, 1, 2, 3, 4), *, partial=False, **expected) -> pd.DataFrame:
    """The rows of :func:`training_benchmark` (with ``fold`` and the point's wall time ``point_seconds``) read
    from the run folders of a ``treebook sweep`` of ``notebooks/sweeps/03-train-point.ipynb`` in ``folder``.

    A point is one (data set, fold, depth); its parameters named in ``expected`` (``expansions``,
    ``peer_time_limit``, ``Ks``, ``candidates`` ...; a parameter absent from a run's ``params.json`` has the
    point notebook's default) must have the given values, or the sweep is refused with the parameter that
    differs. Every point of ``datasets`` x ``folds`` x ``depths`` must have finished, unless ``partial``:
    then the finished ones are read. ``attrs`` of the frame: ``points`` (finished points read), ``total``
    (points asked for), ``datasets_complete`` (data sets with every fold and depth finished) and
    ``seconds`` (the points' wall time, summed).
    """
    from ..notebooks import notebook_parameters
    from ..sweep import read_runs

    names = notebook_parameters("sweeps/03-train-point")
    unknown = [k for k in expected if k not in names]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a parameter of the chapter 3 training point notebook")
    wanted = {(d, int(f), int(D)) for d in datasets for f in folds for D in depths}
    found, mismatched = {}, {}
    for run in read_runs(folder, "sweeps/03-train-point"):
        key = (run.params["dataset"], int(run.params["fold"]), int(run.params["depth"]))
        if key not in wanted:
            continue
        differ = {k: run.params[k] for k, v in expected.items() if run.params[k] != v}
        if differ:
            for k, v in differ.items():
                mismatched.setdefault(k, set()).add(str(v))
        elif run.record is not None:
            found[key] = run
    if mismatched:
        k = sorted(mismatched)[0]
        raise ValueError(f"the sweep in {folder} ran with {k} = {sorted(mismatched[k])}, not {expected[k]!r}")
    if not partial and len(found) < len(wanted):
        lacking = sorted(wanted - set(found))
        raise ValueError(f"{len(lacking)} of the {len(wanted)} points of the sweep in {folder} have not finished, "
                         f"e.g. {lacking[:3]} (partial=True reads the finished ones)")
    rows = []
    for key in sorted(found):
        run = found[key]
        for row in run.record["results"]["rows"]:
            rows.append({**row, "fold": key[1], "point_seconds": run.seconds})
    frame = pd.DataFrame(rows)
    for col in ("lower_bound", "n_expanded", "n_leaves", "time", "time_to_best", "errors", "accuracy"):
        if col in frame:
            frame[col] = pd.to_numeric(frame[col], errors="coerce")  # the records write NaN as "nan"
    frame.attrs.update(points=len(found), total=len(wanted),
                       datasets_complete=[d for d in datasets
                                          if all((d, int(f), int(D)) in found for f in folds for D in depths)],
                       seconds=float(np.nansum([r.seconds for r in found.values()])))
    return frame


def memory_run(name: str, depth: int = 6, max_breakpoints: int = 3, time_limit: float | None = 60.0,
               candidates: str = "cart", seed: int = 42, max_expansions: int | None = None,
               interval: float = 0.5) -> dict:
    """Fit Literati on one data set; report the peak resident memory of the process and the resident memory
    sampled every ``interval`` seconds during the search (``curve``: rows ``seconds, MiB``).  Run it in a
    fresh process to measure one data set alone."""
    import threading

    X, y = fold_data(name, seed)[:2]
    before = peak_rss_mib()
    curve, stop = [], threading.Event()
    t0 = time.perf_counter()

    def sample():
        while not stop.is_set():
            curve.append((time.perf_counter() - t0, rss_mib()))
            stop.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        r = literati_run(X, y, max_depth=depth, max_breakpoints=max_breakpoints, time_limit=time_limit,
                         max_expansions=max_expansions, candidates=candidates)
    finally:
        stop.set()
        sampler.join()
    curve.append((time.perf_counter() - t0, rss_mib()))
    return {"dataset": name, "n": int(y.size), "p": int(X.shape[1]), "depth": depth, "K": max_breakpoints,
            "errors": r["errors"], "proved": r["proved"], "time": r["time"], "n_expanded": r["n_expanded"],
            "peak_rss_mb_before": before, "peak_rss_mb": peak_rss_mib(), "curve": curve}
