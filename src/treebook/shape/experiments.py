"""The experiments of chapter 3.

Training-set protocol: each fold is a stratified 70/10/20 split (fold ``f`` uses the seed
``FOLD_SEEDS[f]``; the paper reports 5 folds); each method is fitted on the 70 % training part and judged by
its training errors, time to its best tree and (for exact methods) whether optimality was proved within the
budget.  Literati's budget is a number of expanded states (``max_expansions``, deterministic) or a time
limit; the peers take a time limit.  The peers ``pycontree`` (ConTree), ``pystreed``
(STreeD) and ``sgtlearn`` (ShapeCART / ShapeTAO) are used only when installed.

:func:`training_benchmark` runs the training-set comparison (Literati and the baselines and peers on every
data set, depth and fold) and :func:`load_train_sweep` reads it back from its sweep.

The single-fit experiments (anytime traces, the ablation, compression, ``K = 1`` over every
midpoint beside ConTree, the similarity bounds) are run as one sweep so that a paper-scale run resumes.
Each experiment is a set of Literati fits on one fold's training part, each under a budget of expanded
states (deterministic: the same tree and trace on any machine; only the seconds depend on it). One fit is
one point of a ``treebook sweep`` of ``notebooks/sweeps/03-fit-point.ipynb``, which calls :func:`fit_point`;
:func:`experiment_points` lists the points of the chapter's experiments for a set of the notebook's
parameters, and :func:`run_experiments` runs them (skipping the points already finished in the output
folder, e.g. a committed paper-scale sweep) and reads them back as one table.

The kinds of fit (``experiment``):

``anytime``
    Literati at ``K``; its trace (seconds, upper bound, lower bound, states expanded) is the result.
``ablation``
    Literati with the OR choice ``heuristic`` and the AND choice ``and_rule``, without the ``K = 1`` warm
    start (``warm_start = 0``), as the paper's ablation compares the search rules alone.
``compression``
    Literati with the per-node penalty ``lam``: its number of leaves and training accuracy.
``k1``
    Literati with ``K = 1`` over every midpoint (the optimal threshold tree) and, when
    ``contree_time_limit > 0`` and ``pycontree`` is installed, ConTree on the same data in the same process
    under that many seconds, both timed in wall and CPU seconds.
``similarity``
    Literati with ``K = 1`` over every midpoint with the similarity bounds and exact depth-2 states switched
    on or off (``similarity``).

:func:`root_attribution` splits a difference between two OR rules of the ablation into the root split each
takes first and the search below it (fits with the root restricted to one split); :func:`rank_at_budget` and
:func:`rank_at_time` rank the variants from their traces.
"""

from __future__ import annotations

import importlib.util
import time
import warnings

import numpy as np
import pandas as pd

from ..datasets.shape_trees import load_shape_dataset, paper_split
from ..memory import peak_rss_mib
from ..notebooks import notebook_parameters
from ..sweep import read_runs, run_points
from ..tree import CARTClassifier
from .literati import LiteratiClassifier, LiteratiSearch
from .shapecart import ShapeCARTClassifier

__all__ = ["ABLATION_VARIANTS", "EXPERIMENTS", "POINT_NOTEBOOK", "TRAIN_NOTEBOOK", "available_peers",
           "compression_match", "experiment_points", "fit_outcome", "fit_point", "fold_data", "literati_run",
           "load_train_sweep", "outcome", "peer_run", "rank_at_budget", "rank_at_time", "read_experiments",
           "root_attribution", "run_experiments", "run_training", "training_benchmark", "training_points"]

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


def _training_frame(rows) -> pd.DataFrame:
    """The rows of :func:`training_benchmark` read back from sweep records, as a frame with numeric columns."""
    frame = pd.DataFrame(rows)
    for col in ("lower_bound", "n_expanded", "n_leaves", "time", "time_to_best", "errors", "accuracy"):
        if col in frame:
            frame[col] = pd.to_numeric(frame[col], errors="coerce")  # the records write NaN as "nan"
    return frame


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
    frame = _training_frame(rows)
    frame.attrs.update(points=len(found), total=len(wanted),
                       datasets_complete=[d for d in datasets
                                          if all((d, int(f), int(D)) in found for f in folds for D in depths)],
                       seconds=float(np.nansum([r.seconds for r in found.values()])))
    return frame



#: the training study's point notebook (a path under ``notebooks/``): one data set, fold and depth
TRAIN_NOTEBOOK = "sweeps/03-train-point"


def training_points(datasets, depths, fold: int, *, Ks, expansions: int, candidates: str = "cart",
                    baselines=("CART", "ShapeCART"), peers=(), peer_time_limit: float = 60.0) -> list[dict]:
    """The points of a sweep of :data:`TRAIN_NOTEBOOK` that make :func:`training_benchmark` of
    ``datasets`` x ``depths`` on fold ``fold`` (``FOLD_SEEDS[fold]``), every parameter explicit (so a
    point keeps its id whatever the point notebook's defaults)."""
    return [{"dataset": d, "fold": int(fold), "depth": int(D), "Ks": [int(K) for K in Ks],
             "expansions": int(expansions), "candidates": candidates, "baselines": list(baselines),
             "peers": list(peers), "peer_time_limit": float(peer_time_limit)} for d in datasets for D in depths]


def run_training(points, out, workers: int = 2, progress: bool = False, cache=None) -> pd.DataFrame:
    """Run the points of :func:`training_points` as a sweep into ``out`` (finished ones skipped; those that
    ``cache`` holds copied first and read, as in :func:`run_experiments`); return their
    :func:`training_benchmark` rows (with ``fold``), in the points' order, ``attrs["cached"]`` the number
    of points read from ``cache``."""
    runs, cached = run_points(TRAIN_NOTEBOOK, points, out, cache=cache, workers=workers, progress=progress)
    frame = _training_frame([row for run in runs for row in run.record["results"]["rows"]])
    frame.attrs["cached"] = cached
    return frame


#: the sweep's point notebook (a path under ``notebooks/``): one fit
POINT_NOTEBOOK = "sweeps/03-fit-point"
EXPERIMENTS = ("anytime", "ablation", "compression", "k1", "similarity")
#: the paper's seven (OR choice, AND choice) variants of its ablation table; the first is Literati
ABLATION_VARIANTS = (("cart", "round_robin"), ("cart", "worst_primal"), ("cart", "worst_informative"),
                     ("admissible", "round_robin"), ("admissible", "worst_primal"), ("impurity", "round_robin"),
                     ("primal", "round_robin"))
#: every parameter of a point, with the value it has when an experiment does not set it
_DEFAULTS = {"fold_seed": 42, "K": 1, "candidates": "cart", "heuristic": "cart", "and_rule": "round_robin",
             "lam": 0.0, "warm_start": 0.25, "similarity": True, "contree_time_limit": 0.0}
_KEYS = ("experiment", "dataset", "fold_seed", "depth", "K", "expansions", "candidates", "heuristic", "and_rule",
         "lam", "warm_start", "similarity", "contree_time_limit")


def fit_point(experiment: str, dataset: str, depth: int, expansions: int, *, fold_seed: int = 42, K: int = 1,
              candidates: str = "cart", heuristic: str = "cart", and_rule: str = "round_robin", lam: float = 0.0,
              warm_start: float = 0.25, similarity: bool = True, contree_time_limit: float = 0.0) -> dict:
    """Fit Literati once on the training part of ``dataset``'s fold ``fold_seed`` under ``expansions``
    expanded states (no time limit); return what the chapter reads of it.

    The result: ``objective``, ``errors`` (training), ``accuracy`` (training), ``lower_bound``, ``proved``,
    ``n_leaves``, ``n_expanded``, ``seconds`` and ``cpu_seconds`` (the fit's wall and process time on this
    machine, after a throwaway fit on a few rows has loaded the compiled kernels), ``n`` (training rows),
    ``trace`` (rows ``seconds, upper, lower, expansions``) and ``root_choices`` (the estimator's
    ``root_choices_``: the root splits the search went down); for ``k1`` with ConTree also ``contree``,
    ``contree_proved``, ``contree_seconds`` and ``contree_cpu_seconds``. ``k1`` and ``similarity`` fits
    search every midpoint with ``K = 1`` whatever ``K`` and ``candidates`` say.
    """
    if experiment not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {experiment!r}; choose one of {list(EXPERIMENTS)}")
    if int(expansions) < 1:
        raise ValueError(f"expansions must be a positive number of states; got {expansions!r}")
    if experiment in ("k1", "similarity"):
        K, candidates = 1, "all"
    X, y = fold_data(dataset, int(fold_seed))[:2]
    params = dict(max_depth=int(depth), max_breakpoints=int(K), lam=float(lam), alpha=0.0, time_limit=None,
                  candidates=candidates, heuristic=heuristic, and_rule=and_rule, warm_start=float(warm_start),
                  similarity=bool(similarity), random_state=0)
    # numba loads (or compiles) the search's kernels on their first call in a process: a throwaway fit on a
    # few rows of each class does it before the clock starts, so the seconds are the search's alone
    rows = np.concatenate([np.flatnonzero(y == c)[:20] for c in np.unique(y)])
    LiteratiClassifier(**{**params, "max_depth": min(int(depth), 3)}, max_expansions=10).fit(X[rows], y[rows])
    est = LiteratiClassifier(**params, max_expansions=int(expansions))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    est.fit(X, y)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    out = {"n": int(y.size), "objective": float(est.objective_), "errors": int(est.train_errors_),
           "accuracy": float(est.score(X, y)), "lower_bound": float(est.lower_bound_),
           "proved": bool(est.proved_optimal_), "n_leaves": int(est.tree_.n_leaves),
           "n_expanded": int(est.n_expanded_), "seconds": wall, "cpu_seconds": cpu,
           "trace": np.asarray(est.trace_, dtype=float).tolist(),
           "root_choices": [list(r) for r in est.root_choices_]}
    if experiment == "k1" and contree_time_limit > 0 and importlib.util.find_spec("pycontree") is not None:
        cpu0 = time.process_time()
        r = peer_run("ConTree", X, y, max_depth=int(depth), time_limit=float(contree_time_limit))
        out.update(contree=r["errors"], contree_proved=bool(r["proved"]), contree_seconds=r["time"],
                   contree_cpu_seconds=time.process_time() - cpu0)
    return out


def fit_outcome(experiment: str, dataset: str, depth: int, expansions: int, **params) -> dict:
    """The part of :func:`fit_point`'s result that is the same on any machine (no seconds): ``objective``,
    ``errors``, ``lower_bound``, ``proved``, ``n_leaves``, ``n_expanded`` and, without its seconds column,
    the ``trace``. A stored record's slice recomputes it."""
    params = {k: v for k, v in params.items() if k != "contree_time_limit"}  # the peer's time is the machine's
    return outcome(fit_point(experiment, dataset, depth, expansions, **params))


def outcome(fit) -> dict:
    """:func:`fit_outcome` of a fit already made (a result of :func:`fit_point`, or a row of
    :func:`read_experiments`)."""
    out = {k: fit[k] for k in ("objective", "errors", "lower_bound", "proved", "n_leaves", "n_expanded")}
    out = {k: v.item() if hasattr(v, "item") else v for k, v in out.items()}
    out["trace"] = [list(row[1:]) for row in fit["trace"]]
    return out


def _point(**params) -> dict:
    point = {**_DEFAULTS, **params}
    return {k: point[k] for k in _KEYS}


def experiment_points(*, seed: int = 42, candidates: str = "cart", anytime_dataset: str, anytime_depth: int,
                      anytime_Ks=(1, 2, 3), anytime_expansions: int, ablation_datasets, ablation_depth: int,
                      ablation_expansions: int, compression_dataset: str, compression_depth: int, compression_lams,
                      compression_Ks=(1, 2), compression_expansions: int, k1_datasets, k1_depths,
                      k1_expansions: int, contree_time_limit: float = 0.0, similarity_dataset: str,
                      similarity_depth: int = 3, similarity_expansions: int) -> list[dict]:
    """Every fit of the chapter's experiments (sections 6-8 and 10) as sweep points, with every parameter of
    :func:`fit_point` explicit (so a point keeps its id whatever the point notebook's defaults)."""
    common = {"fold_seed": int(seed)}
    pts = [_point(experiment="anytime", dataset=anytime_dataset, depth=anytime_depth, K=K,
                  expansions=anytime_expansions, candidates=candidates, **common) for K in anytime_Ks]
    pts += [_point(experiment="ablation", dataset=name, depth=ablation_depth, K=3, expansions=ablation_expansions,
                   candidates=candidates, heuristic=h, and_rule=a, warm_start=0.0, **common)
            for name in ablation_datasets for h, a in ABLATION_VARIANTS]
    pts += [_point(experiment="compression", dataset=compression_dataset, depth=compression_depth, K=K,
                   lam=float(lam), expansions=compression_expansions, candidates=candidates, **common)
            for lam in compression_lams for K in compression_Ks]
    pts += [_point(experiment="k1", dataset=name, depth=D, expansions=k1_expansions, candidates="all",
                   contree_time_limit=float(contree_time_limit), **common) for name in k1_datasets for D in k1_depths]
    pts += [_point(experiment="similarity", dataset=similarity_dataset, depth=similarity_depth, candidates="all",
                   similarity=sim, expansions=similarity_expansions, **common) for sim in (True, False)]
    return pts


def read_experiments(folder, points=None, partial: bool = False) -> pd.DataFrame:
    """The finished fits of a sweep of :data:`POINT_NOTEBOOK` in ``folder``: one row per point, its
    parameters beside :func:`fit_point`'s result and the point's wall time (``point_seconds``). With
    ``points``, only those points, in their order, and every one of them must have finished (with
    ``partial``, those of them that have, in their order)."""

    found = {}
    for run in read_runs(folder, POINT_NOTEBOOK):
        if run.record is not None:
            key = tuple(run.params[k] for k in _KEYS)
            found[key] = {**{k: run.params[k] for k in _KEYS}, **run.record["results"]["fit"],
                          "point_seconds": run.seconds}
    if points is None:
        rows = [found[k] for k in sorted(found, key=repr)]
    else:
        keys = [tuple(p[k] for k in _KEYS) for p in points]
        lacking = [dict(zip(_KEYS, k)) for k in keys if k not in found]
        if partial:
            keys = [k for k in keys if k in found]
        elif lacking:
            raise ValueError(f"{len(lacking)} of the {len(keys)} fits have not finished in {folder}, "
                             f"e.g. {lacking[0]}")
        rows = [found[k] for k in keys]
    frame = pd.DataFrame(rows, columns=list(_KEYS) if not rows else None)
    if "lower_bound" in frame:
        frame["lower_bound"] = pd.to_numeric(frame["lower_bound"], errors="coerce")  # NaN is written as "nan"
    return frame


def run_experiments(points, out, workers: int = 2, scheduler=None, progress: bool = True,
                    cache=None) -> pd.DataFrame:
    """Run the fits ``points`` (see :func:`experiment_points`) as a sweep into ``out``, skipping those already
    finished there; return :func:`read_experiments` of them, in their order, with ``attrs["cached"]`` the
    number read from ``cache``.

    ``cache``: a sweep folder (e.g. committed records of the book's defaults) whose finished fits of
    ``points`` are copied into ``out`` first (:func:`treebook.sweep.copy_finished`) and so read, not run."""

    _, cached = run_points(POINT_NOTEBOOK, points, out, cache=cache, workers=workers, scheduler=scheduler,
                           progress=progress)
    frame = read_experiments(out, points)
    frame.attrs["cached"] = cached
    return frame


def compression_match(fits: pd.DataFrame, k1_leaves: int):
    """The compression claim in the paper's form, read off one path of fits: the ``K = 1`` fit whose number of
    leaves is nearest ``k1_leaves`` (the threshold tree of the paper's example; the fewer leaves on a tie),
    and the fewest leaves of a ``K = 2`` fit at least as accurate on the training set (``None`` when no
    ``K = 2`` fit of the path is).

    ``fits`` has one row per fit with the columns ``K``, ``leaves`` and ``accuracy``. Returns the ``K = 1``
    row and that number of leaves.
    """
    missing = {"K", "leaves", "accuracy"} - set(fits.columns)
    if missing:
        raise ValueError(f"fits lacks the columns {sorted(missing)}")
    k1, k2 = fits[fits.K == 1], fits[fits.K == 2]
    if k1.empty:
        raise ValueError("fits holds no K=1 fit")
    pick = k1.assign(_gap=(k1.leaves - k1_leaves).abs()).sort_values(["_gap", "leaves"], kind="stable").iloc[0]
    pick = pick.drop("_gap")
    match = k2[k2.accuracy >= pick.accuracy - 1e-12]
    return pick, (int(match.leaves.min()) if len(match) else None)


def _checked_trace(name, tr) -> np.ndarray:
    tr = np.asarray(tr, dtype=float)
    if tr.ndim != 2 or tr.shape[1] != 2 or tr.shape[0] == 0 or not np.isfinite(tr).all():
        raise ValueError(f"the trace of {name!r} must be a non-empty (seconds, incumbent) array")
    if np.any(np.diff(tr[:, 0]) < 0):
        raise ValueError(f"the trace of {name!r} is not in time order")
    return tr


def rank_at_time(traces: dict, target, seconds: float, *, break_ties: bool = True,
                 optimum: float | None = None) -> tuple[int, int]:
    """Bounds on the rank of ``target`` among anytime runs by their incumbents at ``seconds`` on their clocks.

    ``traces`` maps each run to its trace, rows ``(seconds, incumbent)`` in time order (lower is better).
    A run whose trace reaches ``seconds`` has a known incumbent there, the last one recorded by then; a run
    that ended sooner is known only from above (its last incumbent), since it could have improved had it gone
    on, unless its last incumbent is ``optimum``, a proved optimum of the problem all the runs solve (no run
    goes below it, so that incumbent is final). Rank 1 is the best. Of two runs with the same incumbent, the
    one that first reached it sooner ranks first when ``break_ties`` (the faster convergence to the same loss);
    otherwise ties share the rank. Returns ``(lo, hi)``: ``lo`` is 1 plus the number of runs surely better than
    ``target`` at that time, ``hi`` 1 plus the number of those that may be.
    """
    if target not in traces:
        raise ValueError(f"{target!r} is not one of the traces")
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds!r}")
    if optimum is not None and not np.isfinite(optimum):
        raise ValueError(f"optimum must be finite or None, got {optimum!r}")
    keys = {}  # (best, worst) possible (incumbent, time it was first reached) at ``seconds``, compared in order
    for name, tr in traces.items():
        tr = _checked_trace(name, tr)
        if optimum is not None and tr[:, 1].min() < optimum - 1e-9:
            raise ValueError(f"the trace of {name!r} goes below the proved optimum {optimum!r}")
        final = optimum is not None and tr[:, 1].min() <= optimum + 1e-9  # at the optimum: it cannot improve
        before = tr[tr[:, 0] <= seconds]
        if before.size:  # its incumbent then, and when it was first reached (rows in time order)
            upper = float(before[:, 1].min())
            worst = (upper, float(before[np.argmax(before[:, 1] <= upper), 0]) if break_ties else 0.0)
        else:  # no incumbent yet: nothing is known from above
            worst = (np.inf, np.inf if break_ties else 0.0)
        if tr[-1, 0] >= seconds or final:
            best = worst
        elif optimum is not None:  # at best it went on to the optimum, reached after it ended (strictly)
            best = (float(optimum), float(np.nextafter(tr[-1, 0], np.inf)) if break_ties else 0.0)
        else:
            best = (-np.inf, -np.inf)
        keys[name] = (best, worst)
    best, worst = keys[target]
    others = [k for name, k in keys.items() if name != target]
    surely = sum(w < best for _, w in others)
    maybe = sum(b < worst for b, _ in others)
    return 1 + surely, 1 + maybe


def rank_at_budget(traces: dict, target, budget: float, *, break_ties: bool = True) -> int:
    """The rank of ``target`` among searches by their incumbents after ``budget`` expansions.

    ``traces`` maps each search to its trace, rows ``(expansions, incumbent)`` in order. Each search ran to
    ``budget`` or stopped sooner with its last incumbent final (a proved optimum), so every rank is known.
    Of equal incumbents, the one first reached in fewer expansions ranks first when ``break_ties``; otherwise
    ties share the rank (as in :func:`rank_at_time`).
    """
    if not budget > 0:
        raise ValueError(f"budget must be positive, got {budget!r}")
    reached = {}
    for name, tr in traces.items():
        tr = _checked_trace(name, tr)
        if tr[-1, 0] < budget:  # stopped sooner: its last incumbent holds at the budget
            tr = np.vstack([tr, [budget, tr[-1, 1]]])
        reached[name] = tr
    lo, hi = rank_at_time(reached, target, budget, break_ties=break_ties)
    assert lo == hi, (lo, hi)  # every trace reaches the budget
    return lo


def root_attribution(X, y, expansions: int, *, heuristics=("cart", "impurity"), max_depth: int = 6, K: int = 3,
                     lam: float = 0.0, and_rule: str = "round_robin", progress=None) -> pd.DataFrame:
    """Split a difference between OR rules of the ablation into the root split each takes first and the search
    below it.

    Each rule in ``heuristics`` is fitted as in the ablation (``candidates="cart"``, no warm start,
    ``expansions`` expanded states), once free and once with its root restricted to the first root split of
    each rule (``LiteratiSearch(root_action=...)``); a free fit that never left its first root split is that
    restricted fit already (the search below the root does not see the root's other actions), so it is not
    run twice. One row per fit: ``heuristic``, ``root_of`` (the rule whose first root split the fit is
    restricted to, ``"free"`` for none), ``root_feature``, ``root_threshold`` (the first root split the fit
    took), ``objective``, ``proved``, ``expansions_to_objective`` (when the incumbent first reached it),
    ``root_actions_taken`` (the distinct root splits the iterations went down) and ``share_first_root`` (the
    share of the iterations that went down the first). ``progress``: a callable given a message before each
    fit.
    """
    X = np.ascontiguousarray(X, dtype=float)
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    if classes.size < 2:
        raise ValueError("root_attribution needs at least two classes")
    opts = dict(max_depth=int(max_depth), max_breakpoints=int(K), lam=float(lam), alpha=0.0, candidates="cart",
                and_rule=and_rule, random_state=0)

    def fit(h, root=None):
        if progress is not None:
            progress(f"{h}, root {'free' if root is None else root}")
        search = LiteratiSearch(X, codes, classes.size, heuristic=h, root_action=root, **opts)
        search.run(time_limit=None, max_expansions=int(expansions))
        if not search.root_choices:
            raise ValueError(f"the {h} search never went below the root (solved at once, or a budget of "
                             f"{expansions} too small)")
        return search

    def row(h, root_of, sr):
        tr = np.asarray(sr.trace, dtype=float)
        first = next(iter(sr.root_choices))
        return dict(heuristic=h, root_of=root_of, root_feature=first[0], root_threshold=first[1],
                    objective=float(sr.root.upper), proved=bool(sr.root.solved),
                    expansions_to_objective=int(tr[np.argmax(tr[:, 1] <= sr.root.upper + 1e-9), 3]),
                    root_actions_taken=len(sr.root_choices),
                    share_first_root=sr.root_choices[first] / sum(sr.root_choices.values()))

    free = {h: fit(h) for h in heuristics}
    first = {h: next(iter(sr.root_choices)) for h, sr in free.items()}
    rows = [row(h, "free", sr) for h, sr in free.items()]
    for h in heuristics:
        for r in heuristics:
            stayed = first[r] == first[h] and len(free[h].root_choices) == 1
            rows.append(row(h, r, free[h] if stayed else fit(h, first[r])))
    return pd.DataFrame(rows)
