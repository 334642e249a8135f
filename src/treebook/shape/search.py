"""The random hyperparameter search of chapter 3's test-accuracy protocol.

The paper's protocol: for each data set and each fold seed of ``FOLD_SEEDS`` (a stratified 70/10/20
split, :func:`~treebook.datasets.shape_trees.paper_split`), a random search of 200 configurations per
method within 15 minutes per fold; the configuration with the best validation accuracy is kept and its
test accuracy is reported.

Here one run of the point notebook ``notebooks/sweeps/03-search-point.ipynb`` is one (data set, fold,
method): it draws the method's configurations (:func:`search_configs`, the ``random`` form of a sweep grid
of :mod:`treebook.sweep`, so that each method samples only its own parameters) and fits them all in one
process (:func:`search_fold`, which calls :func:`evaluate_config` on data loaded once), recording one row per
configuration. Literati's budget is a number of expanded states per configuration, so a record is the same
on any machine. :func:`read_search` collects the rows of a sweep's run folders, and
:func:`select_on_validation` and :func:`summarize_selection` turn them into the reported numbers;
:func:`random_search` does all of it from Python. ``notebooks/sweeps/03-search.yml`` is the paper's grid for
``treebook sweep``.
"""

from __future__ import annotations

import functools
import time

import numpy as np
import pandas as pd

from ..datasets.shape_trees import SHAPE_DATASETS, load_shape_dataset, paper_split
from ..sweep import expand_grid, read_runs, run_sweep
from ..tree import CARTClassifier
from .literati import LiteratiClassifier
from .shapecart import ShapeCARTClassifier

__all__ = ["METHODS", "PAPER_TIME_LIMIT", "POINT_NOTEBOOK", "evaluate_config", "paper_search_space", "random_search",
           "read_search", "search_configs", "search_fold", "search_grid", "select_on_validation",
           "summarize_selection"]

METHODS = ("CART", "ShapeCART", "Literati")
#: seconds per Literati configuration when :func:`evaluate_config` is given no budget: 200 x 4 s = 13.3 min,
#: within the paper summary's 15 min per fold (the search sweeps use an expansion budget instead)
PAPER_TIME_LIMIT = 4.0
#: the sweep's point notebook (a path under ``notebooks/``): one data set, fold and method
POINT_NOTEBOOK = "sweeps/03-search-point"
_KEYS = ["dataset", "fold_seed", "method"]
#: the harness's choices of CART's ``min_impurity_decrease`` and ``ccp_alpha``
_SMALL = (0.0, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2)


def paper_search_space() -> dict[str, dict]:
    """The space each method's configurations are drawn from (sweep specs, see :mod:`treebook.sweep`).

    - ``max_depth``: an integer in 2..6 for every method (the depths of the paper's experiments);
    - CART, as the SGT authors' harness draws it: ``criterion`` gini or entropy, ``min_samples_split`` from
      ``{2, 4, 8, 16, 32}``, ``min_samples_leaf`` an integer in 1..32, ``min_impurity_decrease`` and
      ``ccp_alpha`` from ``{0, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2}``;
    - ShapeCART (ours): ``max_breakpoints`` ``K`` in 1..3 and, as the harness draws them for its
      ShapeCART, ``min_samples_split`` from ``{2, 4, 8, 16, 32, 64}`` and ``min_samples_leaf`` from
      ``{1, 2, 4, 8, 16, 32}``; the harness also varies the criterion, ``min_impurity_decrease`` and the
      inner trees' leaf size, which our ShapeCART does not have;
    - Literati: ``K`` in 1..3 (``K = 1`` is a threshold tree; the paper's shape functions have at most 3
      breakpoints) and its penalties, in misclassified training samples: the per-node ``lam`` from
      ``{0, 0.5, 1, 2, 5, 10, 20, 50}`` and the per-breakpoint ``alpha`` from ``{0, 0.5, 1, 2, 5}``,
      roughly log-spaced choices that include 0 (no penalty, which a log-uniform draw cannot give); the
      paper does not publish Literati's space.

    Every space has more than 200 distinct configurations (Literati's has 600).
    """
    depth, K = {"int": [2, 6]}, {"int": [1, 3]}
    return {
        "CART": {"max_depth": depth, "criterion": {"choice": ["gini", "entropy"]},
                 "min_samples_split": {"choice": [2, 4, 8, 16, 32]}, "min_samples_leaf": {"int": [1, 32]},
                 "min_impurity_decrease": {"choice": list(_SMALL)}, "ccp_alpha": {"choice": list(_SMALL)}},
        "ShapeCART": {"max_depth": depth, "max_breakpoints": K,
                      "min_samples_split": {"choice": [2, 4, 8, 16, 32, 64]},
                      "min_samples_leaf": {"choice": [1, 2, 4, 8, 16, 32]}},
        "Literati": {"max_depth": depth, "max_breakpoints": K,
                     "lam": {"choice": [0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]},
                     "alpha": {"choice": [0.0, 0.5, 1.0, 2.0, 5.0]}},
    }


def evaluate_config(dataset: str, fold_seed: int, method: str, max_depth: int, max_breakpoints: int = 3,
                    lam: float = 0.0, alpha: float = 0.0, time_limit: float | None = PAPER_TIME_LIMIT,
                    candidates: str = "cart", max_expansions: int | None = None, criterion: str = "gini",
                    min_samples_split: int = 2, min_samples_leaf: int = 1, min_impurity_decrease: float = 0.0,
                    ccp_alpha: float = 0.0) -> dict:
    """Fit one configuration on a fold's training part; return its accuracies and size.

    ``max_breakpoints`` is used by ShapeCART and Literati, ``lam``, ``alpha``, ``time_limit``,
    ``max_expansions`` (with ``time_limit=None``: a deterministic budget) and ``candidates`` by Literati only;
    ``min_samples_split`` and ``min_samples_leaf`` by CART and ShapeCART; ``criterion``,
    ``min_impurity_decrease`` and ``ccp_alpha`` by CART only. Returns ``train_acc``, ``val_acc``, ``test_acc``, ``n_leaves``,
    ``fit_time`` (seconds) and ``proved`` (Literati proved its tree optimal; ``None`` for the others).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {list(METHODS)}")
    X, y, tr, va, te = _fold(dataset, int(fold_seed))
    if method == "CART":
        est = CARTClassifier(max_depth=max_depth, criterion=criterion, min_samples_split=int(min_samples_split),
                             min_samples_leaf=int(min_samples_leaf),
                             min_impurity_decrease=float(min_impurity_decrease), ccp_alpha=float(ccp_alpha))
    elif method == "ShapeCART":
        est = ShapeCARTClassifier(max_depth=max_depth, max_breakpoints=max_breakpoints,
                                  min_samples_split=int(min_samples_split), min_samples_leaf=int(min_samples_leaf),
                                  random_state=0)
    else:
        est = LiteratiClassifier(max_depth=max_depth, max_breakpoints=max_breakpoints, lam=lam, alpha=alpha,
                                 time_limit=time_limit, max_expansions=max_expansions, candidates=candidates,
                                 random_state=0)
    t0 = time.perf_counter()
    est.fit(X[tr], y[tr])
    fit_time = time.perf_counter() - t0
    return {"train_acc": float(est.score(X[tr], y[tr])), "val_acc": float(est.score(X[va], y[va])),
            "test_acc": float(est.score(X[te], y[te])), "n_leaves": int(est.tree_.n_leaves),
            "fit_time": fit_time, "proved": bool(est.proved_optimal_) if method == "Literati" else None}


@functools.lru_cache(maxsize=2)
def _fold(dataset: str, fold_seed: int):
    """A data set and its (train, validation, test) indices for one fold seed, loaded once per process."""
    X, y = load_shape_dataset(dataset)
    return (X, y, *paper_split(y, fold_seed))


def search_configs(method: str, n_configs: int = 200, seed: int = 0) -> list[dict]:
    """The ``n_configs`` distinct configurations of ``method`` a search draws (with ``method`` in each): the
    ``random`` block ``{n, seed, fixed: {method}, space: paper_search_space()[method]}`` of a sweep grid."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {list(METHODS)}")
    block = {"n": int(n_configs), "seed": int(seed), "fixed": {"method": method},
             "space": paper_search_space()[method]}
    return expand_grid({"random": [block]})


def search_fold(dataset: str, fold_seed: int, method: str, n_configs: int = 200, seed: int = 0, *,
                first_config: int = 0, max_expansions: int | None = None, time_limit: float | None = None,
                candidates: str = "cart", progress: bool = False) -> list[dict]:
    """Fit the configurations ``first_config, ..., n_configs - 1`` of :func:`search_configs` on one fold:
    one row per configuration, its position in the draw (``config_index``) and parameters beside
    :func:`evaluate_config`'s result. Literati runs under ``max_expansions`` expanded states and/or
    ``time_limit`` seconds per configuration (one of them is required).

    The first ``m`` configurations of a draw of ``n >= m`` are the draw of ``m``, so a search can be split
    into parts (``first_config`` 0 to 100, then 100 to 200) whose rows together are the whole search."""
    if method == "Literati" and max_expansions is None and time_limit is None:
        raise ValueError("Literati's search needs a budget: max_expansions or time_limit")
    if not 0 <= int(first_config) < int(n_configs):
        raise ValueError(f"first_config must be in [0, n_configs = {n_configs}); got {first_config!r}")
    configs = search_configs(method, n_configs, seed)
    first = int(first_config)
    indexed = list(enumerate(configs))[first:]
    if progress:
        from tqdm.auto import tqdm

        indexed = tqdm(indexed, desc=f"{dataset} {fold_seed} {method}")
    rows = []
    for i, config in indexed:
        params = {k: v for k, v in config.items() if k != "method"}
        budget = {"max_expansions": max_expansions, "time_limit": time_limit, "candidates": candidates} \
            if method == "Literati" else {}
        rows.append({"dataset": dataset, "fold_seed": int(fold_seed), "config_index": i, **config,
                     **evaluate_config(dataset, fold_seed, method, **params, **budget)})
    return rows


def read_search(folder) -> pd.DataFrame:
    """The rows of every finished point of a search sweep in ``folder`` (run folders of
    :data:`POINT_NOTEBOOK`), with ``status`` ``"ok"``, and the point's parameters (``n_configs``,
    ``config_seed``, ``max_expansions``, ``first_config``) beside them. ``config_index`` is a row's position
    in its method's draw (records written before rows carried it are in draw order from ``first_config``)."""
    rows = []
    for run in read_runs(folder, POINT_NOTEBOOK):
        if run.record is None:
            continue
        extra = {k: run.params[k] for k in ("n_configs", "config_seed", "max_expansions")}
        first = int(run.params.get("first_config", 0))
        rows += [{"config_index": first + i, **row, **extra, "first_config": first, "status": "ok"}
                 for i, row in enumerate(run.record["results"]["rows"])]
    return pd.DataFrame(rows)


def select_on_validation(table: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, fold_seed, method), the row with the best validation accuracy.

    Ties go to the tree with fewer leaves, then to the earlier row. Failed runs (``status`` other than
    ``"ok"``, or no ``val_acc``) are ignored. The rows come back whole, sorted by data set, fold and method;
    their ``test_acc`` is the reported test accuracy.
    """
    if "status" in table:
        table = table[table["status"] == "ok"]
    if table.empty:
        return table.reset_index(drop=True)
    missing = {*_KEYS, "val_acc", "test_acc", "n_leaves"} - set(table.columns)
    if missing:
        raise ValueError(f"the table has no column {sorted(missing)}")
    table = table.dropna(subset=["val_acc"])
    ranked = table.assign(_neg_val=-table["val_acc"], _row=np.arange(len(table)))
    best = ranked.sort_values(["_neg_val", "n_leaves", "_row"]).drop_duplicates(_KEYS)
    return best.sort_values(_KEYS).drop(columns=["_neg_val", "_row"]).reset_index(drop=True)


def summarize_selection(selection: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean test accuracy (and validation accuracy, leaves) over the data sets and folds."""
    summary = selection.groupby("method").agg(
        test_acc=("test_acc", "mean"), val_acc=("val_acc", "mean"), n_leaves=("n_leaves", "mean"),
        datasets=("dataset", "nunique"), folds=("test_acc", "size"))
    order = [m for m in METHODS if m in summary.index] + [m for m in summary.index if m not in METHODS]
    return summary.loc[order]


def search_grid(datasets, fold_seeds, n_configs: int = 200, methods=METHODS, max_expansions: int = 60,
                seed: int = 0, split=()) -> dict:
    """The sweep grid of a random search: data sets x fold seeds x methods, each point one search.

    ``split``: the configuration counts at which the search is cut into parts (e.g. ``(100,)`` for 200
    configurations: 0-99, then 100-199), each its own point per data set, fold and method. The first part is
    the point of a search of that many configurations (the same parameters, so the same point id), and a
    later part adds ``first_config``; with no split, one part."""
    unknown = [m for m in methods if m not in METHODS] + [d for d in datasets if d not in SHAPE_DATASETS]
    if unknown:
        raise ValueError(f"unknown method or data set {unknown}; methods: {list(METHODS)}, "
                         f"data sets: {sorted(SHAPE_DATASETS)}")
    cuts = [int(c) for c in split]
    if any(not 0 < c < int(n_configs) for c in cuts) or cuts != sorted(set(cuts)):
        raise ValueError(f"split must be increasing counts between 0 and n_configs = {n_configs}; got {split!r}")
    common = {"dataset": list(datasets), "fold_seed": [int(s) for s in fold_seeds], "method": list(methods)}
    ends = [*cuts, int(n_configs)]
    parts = [{"grid": {**common, "n_configs": [end], "config_seed": [int(seed)],
                       "max_expansions": [int(max_expansions)], **({"first_config": [start]} if start else {})}}
             for start, end in zip([0, *cuts], ends)]
    if len(parts) == 1:
        return parts[0]
    return {"points": [p for part in parts for p in expand_grid(part)]}


def random_search(datasets, fold_seeds, n_configs, methods, max_expansions, out, workers=2, seed=0,
                  scheduler=None, progress=True, split=()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the random search as a sweep of the point notebook; return ``(table, selection)``.

    ``table`` has one row per configuration of this search (:func:`read_search` of ``out``, less the other
    configurations it may hold; the sweep's own table, one row per point, is written under ``out``),
    ``selection`` the configuration kept per data set, fold and method (:func:`select_on_validation`).
    Rerunning with the same ``out`` skips the finished points; ``split`` runs the search in parts (see
    :func:`search_grid`), so that a search of 200 configurations reuses the finished points of one of 100.
    """
    grid = search_grid(datasets, fold_seeds, n_configs, methods, max_expansions, seed, split)
    points = run_sweep(POINT_NOTEBOOK, grid, out, scheduler=scheduler, workers=workers, progress=progress)
    failed = points[points.status != "ok"]
    if len(failed):
        raise RuntimeError(f"{len(failed)} search point(s) failed: {failed.error.tolist()[:3]}")
    table = read_search(out)
    if len(table):  # the folder may hold other points too (a larger sweep): keep this search's
        table = table[table.dataset.isin(list(datasets)) & table.fold_seed.isin([int(f) for f in fold_seeds])
                      & table.method.isin(list(methods)) & (table.config_index < int(n_configs))
                      & (table.config_seed == int(seed)) & (table.max_expansions == int(max_expansions))]
        # a configuration run by two points (a larger search's first part and this one) counts once
        table = table.drop_duplicates([*_KEYS, "config_index"]).sort_values([*_KEYS, "config_index"], kind="stable")
        table = table.reset_index(drop=True)
        counts = table.groupby(_KEYS).size()
        want = {m: len(search_configs(m, n_configs, seed)) for m in methods}
        short = [key for key, c in counts.items() if c != want[key[2]]]
        if short or len(counts) != len(datasets) * len(fold_seeds) * len(methods):
            raise RuntimeError(f"the search in {out} lacks configurations, e.g. of {short[:1] or 'a point'}")
    return table, select_on_validation(table)
