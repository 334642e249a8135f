"""The cross-validation protocol of the paper's section 5.3 (Figure 5).

Outer K-fold CV; inside every training fold each method picks its hyper-parameters by an inner CV
on the interval MSE, is refit on the whole training fold and scored on the held-out fold.

Two method builders:

- :func:`make_methods`: the book's first, small-scale protocol (CV-pruned MMIT, a few margins).
- :func:`paper_methods`: the methods of Figure 5 as the authors' scripts run them (GitHub
  ``tdhock/mmit-paper``; package ``aldro61/mmit``), with explicit parameters to shrink their grids.

What the authors' scripts do (the files read):

- ``mmit.predictions.py`` (its last stored version): for every outer fold of the data set's fixed
  ``folds.csv``, the margin grid is ``[0] + logspace(log10(smallest positive gap between the sorted
  finite training limits), log10(their range), 20)``; the unpruned methods ``mmit.linear.hinge`` and
  ``mmit.squared.hinge`` search ``max_depth`` in ``[1, 2, 3, 4, 6, 9, 12, 16, 22, 30]`` and
  ``min_samples_split`` in ``logspace(log10(2), log10(n_train), 10).astype(uint)``, with
  ``mmit.model_selection.GridSearchCV(..., cv=KFold(n_splits=10, shuffle=True, random_state=42),
  scoring=-MSE, pruning=False)`` (the ``*.pruning`` variants fix ``max_depth=30``,
  ``min_samples_split=2`` and prune by CV instead). ``figure-evaluate-predictions.R`` draws Figure 5
  from the unpruned ``mmit.squared.hinge``, ``IntervalRegressionCV`` (L1-Linear), ``cart``,
  ``trafotree`` and ``constant`` on simulated abs / sin / linear, UCI servo, the
  H3K27ac-H3K4me3_TDHAM_BP_FPOP changepoint set and neuroblastomaProcessed, one point per test fold.
- ``aldro61/mmit``, ``mmit/model_selection.py``: the CV score of a candidate is the mean over the
  inner folds of minus the interval MSE (``mmit/metrics.py``); candidates are visited in
  ``ParameterGrid`` order and a candidate replaces the best one when its score is greater, or equal
  (``float_equal``; ``np.allclose`` in an older version) with a tree of fewer rules (``len(tree_)``,
  ``mmit/model.py``). The stored versions of that file only have the pruning path; the unpruned
  score used here -- the mean fold score of the trees as grown -- is that path without pruning.
  ``mmit/learning.py``: a node at depth ``max_depth`` or with fewer than ``min_samples_split``
  examples (or cost 0) is not split, as in :class:`~treebook.interval.tree.MMITRegressor`.
- ``cart.predictions.py``: Interval-CART is scikit-learn's ``DecisionTreeRegressor`` fit on the finite
  limits moved inwards by the margin (``lower + margin``, ``upper - margin``), grid-searched by
  scikit-learn's ``GridSearchCV`` over the same ``max_depth`` list, the same ``min_samples_split``
  grid and 20 log-spaced margins **without** 0, with the same inner ``KFold`` and scoring.
- ``constant.predictions.R``: the Figure 5 ``constant`` is the threshold, among the sorted unique
  finite training limits but the largest (``limit.vec[-1]-diff(limit.vec)``), that the fewest training
  intervals exclude (first minimum); ``constantMSE`` is the squared-hinge, margin-0 minimiser.
- ``penaltyLearning.predictions.R``: L1-Linear is ``penaltyLearning::IntervalRegressionCV(feature.mat,
  target.mat)`` with its defaults (squared hinge, margin 1, the L1 penalty selected on its own path by
  5-fold CV), ``set.seed(1)`` before each fit; no outer grid search.
- ``make.data.sets.R`` / ``simulated.datasets.py``: the outer folds are fixed per data set: 5 folds,
  ``sample(rep(1:5, l=n))`` after ``set.seed(1)`` for the real sets (neuroblastoma: 3,418 rows, 117
  features) and a shuffled ``arange(n) % 5 + 1`` for the simulated linear / sin / abs sets (200 rows,
  20 features).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, KFold

from ..datasets.mmit import load_neuroblastoma, neuroblastoma_authors_folds
from ..notebooks import notebook_parameters
from ..results import to_jsonable
from ..sweep import read_runs, run_points
from ..validation import check_random_state
from .baselines import (
    ConstantIntervalRegressor,
    IntervalCARTRegressor,
    L1LinearIntervalRegressor,
    MinErrorConstantRegressor,
)
from .losses import check_intervals, check_X_intervals
from .metrics import interval_mse, interval_mse_scorer
from .selection import MMITGridSearchCV, MMITPrunedCV, check_param_grid, predict_at_depths
from .simulate import simulated_dataset
from .tree import MMITForestRegressor

__all__ = [
    "SIMULATED",
    "figure5_data",
    "figure5_point",
    "load_figure5_sweep",
    "figure5_points",
    "run_figure5",
    "FIGURE5_NOTEBOOK",
    "FOLD_KINDS",
    "NOISE_METHODS",
    "load_fold_draws",
    "fold_draw_differences",
    "difference_interval",
    "AUTHORS_MAX_DEPTHS",
    "AUTHORS_PROTOCOL",
    "margin_grid",
    "min_samples_split_grid",
    "paper_param_grid",
    "cart_grid_search_nested",
    "MinErrorConstantRegressor",
    "l1_linear_paper",
    "l1_linear_lp",
    "paper_methods",
    "paper_protocol_summary",
    "authors_fold_ids",
    "make_methods",
    "cross_validate_methods",
]

#: ``max_depth`` values of the unpruned MMIT and of Interval-CART
#: (``mmit.predictions.py``, ``cart.predictions.py``)
AUTHORS_MAX_DEPTHS = (1, 2, 3, 4, 6, 9, 12, 16, 22, 30)

#: the sizes of the authors' Figure 5 protocol
AUTHORS_PROTOCOL = {
    "outer_folds": 5,
    "inner_folds": 10,
    "inner_random_state": 42,
    "n_margins": 20,
    "n_min_samples_split": 10,
    "max_depths": AUTHORS_MAX_DEPTHS,
    "l1_folds": 5,
    "l1_margin": 1.0,
}


def margin_grid(y, n_values, *, include_zero=False):
    """The authors' margin grid: ``n_values`` log-spaced values from the smallest positive gap between
    the sorted finite limits of ``y`` to their range (largest minus smallest finite limit), with 0
    prepended when ``include_zero``.

    ``include_zero=True``, ``n_values=20`` is the MMIT grid of ``mmit.predictions.py``;
    ``include_zero=False``, ``n_values=20`` the Interval-CART grid of ``cart.predictions.py``;
    ``include_zero=False``, ``n_values=10`` the Figure 3 (left) grid of ``moves.R`` (``tdhock/mmit-paper``).
    With fewer than two distinct finite limits the grid is ``[0]``.
    """
    y = check_intervals(y)
    lim = np.sort(y[np.isfinite(y)])
    gaps = np.diff(lim)
    gaps = gaps[gaps > 0]
    if gaps.size == 0:
        return np.zeros(1)
    grid = np.logspace(np.log10(gaps.min()), np.log10(lim[-1] - lim[0]), int(n_values))
    return np.concatenate([[0.0], grid]) if include_zero else grid


def min_samples_split_grid(n_samples, n_values=10):
    """The authors' ``min_samples_split`` grid: ``logspace(log10(2), log10(n_samples), n_values)`` truncated
    to integers (``astype(np.uint)`` in ``mmit.predictions.py`` and ``cart.predictions.py``), at least 2;
    repeated values are dropped (they are identical candidates and never change the selection)."""
    n_samples = int(n_samples)
    if n_samples < 2:
        return [2]
    vals = np.logspace(np.log10(2), np.log10(n_samples), int(n_values)).astype(np.uint64)
    return [int(v) for v in dict.fromkeys(np.maximum(vals, 2).tolist())]


def paper_param_grid(y, n_samples=None, *, n_margins=20, n_min_samples_split=10,
                     max_depths=AUTHORS_MAX_DEPTHS, include_zero=True):
    """The unpruned-MMIT grid of ``mmit.predictions.py`` computed on a training fold: ``margin`` from
    :func:`margin_grid` (with 0), ``max_depth`` from ``max_depths``, ``min_samples_split`` from
    :func:`min_samples_split_grid` of ``n_samples`` (default: the rows of ``y``)."""
    y = check_intervals(y)
    n = y.shape[0] if n_samples is None else int(n_samples)
    return {"margin": margin_grid(y, n_margins, include_zero=include_zero).tolist(),
            "max_depth": [None if d is None else int(d) for d in max_depths],
            "min_samples_split": min_samples_split_grid(n, n_min_samples_split)}


def cart_grid_search_nested(X, y, param_grid, cv):
    """scikit-learn's ``GridSearchCV(IntervalCARTRegressor(), param_grid, scoring=interval_mse_scorer,
    cv=cv, refit=True)``, with one tree grown per (margin, min_samples_split, fold) to the largest
    ``max_depth`` and scored cut at every depth of the grid.

    The selection is GridSearchCV's: candidates in ``ParameterGrid`` order (margin slowest, then
    ``max_depth``, then ``min_samples_split``), each scored by ``np.average`` over the folds of minus the
    interval MSE on the held-out part, the first best mean wins, and the winner is refit on all the data.
    The core's greedy tree (no feature sampling, no random tie-breaking) grown to depth ``d`` is the
    deeper tree cut at ``d``, and an internal node holds the value it would predict as a leaf, so the
    scores -- and the chosen candidate -- are GridSearchCV's to the last bit (``tests/test_interval_paper.py``
    compares the two); ``len(max_depth)`` times fewer trees are grown.

    Returns ``(best_estimator, best_params, mean_test_score)`` (the scores in ``ParameterGrid`` order).
    """
    X, y = check_X_intervals(X, y)
    grid = check_param_grid(param_grid, {"margin", "max_depth", "min_samples_split"})
    margins = list(grid.get("margin", [0.0]))
    depths = [None if d is None else int(d) for d in grid.get("max_depth", [None])]
    splits = list(grid.get("min_samples_split", [2]))
    deepest = None if any(d is None for d in depths) else max(depths)
    folds = list(cv.split(X, y))
    scores = np.zeros((len(margins), len(depths), len(splits), len(folds)))
    for i, m in enumerate(margins):
        for k, s in enumerate(splits):
            for f, (tr, te) in enumerate(folds):
                est = IntervalCARTRegressor(margin=m, max_depth=deepest, min_samples_split=s).fit(X[tr], y[tr])
                pred = predict_at_depths(est.tree_model_, X[te], depths) * est.y_scale_
                for j in range(len(depths)):
                    scores[i, j, k, f] = -interval_mse(y[te], pred[j])
    mean = np.average(scores.reshape(-1, len(folds)), axis=1)
    best = int(np.argmax(mean))
    i, j, k = np.unravel_index(best, (len(margins), len(depths), len(splits)))
    params = {"margin": margins[i], "max_depth": depths[j], "min_samples_split": splits[k]}
    return IntervalCARTRegressor(**params).fit(X, y), params, mean


# ----------------------------------------------------------------------------------------------
# the constant and L1-Linear baselines as the authors run them


def l1_linear_paper(random_state=None):
    """L1-Linear as ``penaltyLearning.predictions.R`` runs it: ``IntervalRegressionCV`` with its defaults
    (squared hinge, margin 1, the L1 penalty selected on its own path by 5-fold validation), i.e.
    ``L1LinearIntervalRegressor(loss="squared_hinge", margin=1.0, penalty=None)``; ``random_state`` draws its
    validation folds (the authors call ``set.seed(1)`` before every fit).
    """
    return L1LinearIntervalRegressor(loss="squared_hinge", margin=1.0, penalty=None, random_state=random_state)


def l1_linear_lp(penalty=0.01, margin=0.0):
    """The book's first L1-Linear, the variant "L1-LP, linear hinge, margin 0": the linear-hinge LP at a fixed
    ``penalty``."""
    return L1LinearIntervalRegressor(loss="linear_hinge", penalty=penalty, margin=margin)


def _inner_kfold(inner_folds, inner_random_state):
    return KFold(int(inner_folds), shuffle=True, random_state=inner_random_state)


def paper_methods(*, n_margins=20, n_min_samples_split=10, max_depths=AUTHORS_MAX_DEPTHS, inner_folds=10,
                  inner_random_state=42, mmit_losses=("linear", "squared"), tie_break="smallest_tree",
                  nested_depths=True, cart=True, cart_zero_margin=False, l1="auto",
                  l1_lp_penalties=(1e-3, 1e-2, 1e-1), constant_mse=False, random_state=None):
    """The Figure 5 methods as the authors run them, each a function ``(X_train, y_train) -> (fitted
    estimator, chosen params)`` for :func:`cross_validate_methods`.

    - ``"MMIT-linear"``, ``"MMIT-squared"`` (``mmit_losses``): unpruned :class:`MMITGridSearchCV` over
      :func:`paper_param_grid` computed on the training fold (0 and ``n_margins`` margins,
      ``n_min_samples_split`` split sizes, ``max_depths``), ``inner_folds``-fold inner CV seeded
      ``inner_random_state``, validation by the interval MSE, the authors' ``tie_break``.
    - ``"Interval-CART"`` (``cart``): scikit-learn ``GridSearchCV`` of
      :class:`~treebook.interval.baselines.IntervalCARTRegressor` over ``n_margins`` margins (0 prepended
      only if ``cart_zero_margin``; the authors' has none), the same depths and split sizes, the same
      inner folds and criterion; with ``nested_depths`` through :func:`cart_grid_search_nested` (the same
      scores and choice, one tree per margin, split size and fold).
    - ``"L1-Linear"``: :func:`l1_linear_paper` (no outer grid search); ``"L1-LP"``: the book's first one,
      ``GridSearchCV`` of :func:`l1_linear_lp` over ``l1_lp_penalties`` with margin 0 and the same inner
      folds, selected by the interval MSE. ``l1``: ``"paper"`` (``"auto"`` is the same), ``"lp"``,
      ``"both"`` or ``None``.
      ``random_state`` seeds L1-Linear's validation folds (the same seed for every fit).
    - ``"constant"``: :class:`MinErrorConstantRegressor`; ``"constant-MSE"`` (``constant_mse``): the
      squared-hinge, margin-0 minimiser (the scripts' ``constantMSE``).

    The MMIT and Interval-CART functions carry ``param_grid(X, y)`` (the grid they search on a training
    fold) and ``inner_cv`` (the inner splitter). The authors' sizes are the defaults
    (:data:`AUTHORS_PROTOCOL`); smaller ``n_margins``, ``n_min_samples_split``, ``max_depths`` or
    ``inner_folds`` shrink the run, and :func:`paper_protocol_summary` states by how much.
    """
    if l1 not in ("auto", "paper", "lp", "both", None):
        raise ValueError(f"l1 must be 'auto', 'paper', 'lp', 'both' or None; got {l1!r}")
    if l1 == "auto":
        l1 = "paper"
    inner = _inner_kfold(inner_folds, inner_random_state)
    # every fit draws its validation folds from the same seed, as the authors call set.seed(1) before each
    # fit: a fit's result then does not depend on which fits ran before it (a sweep point runs alone)
    l1_seed = int(check_random_state(random_state).integers(2**31 - 1))

    def mmit_grid(X, y):
        return paper_param_grid(y, X.shape[0], n_margins=n_margins, n_min_samples_split=n_min_samples_split,
                                max_depths=max_depths)

    def cart_grid(X, y):
        return {"margin": margin_grid(y, n_margins, include_zero=cart_zero_margin).tolist(),
                "max_depth": [None if d is None else int(d) for d in max_depths],
                "min_samples_split": min_samples_split_grid(X.shape[0], n_min_samples_split)}

    def mmit(loss):
        def fit(X, y):
            gs = MMITGridSearchCV(loss=loss, param_grid=mmit_grid(X, y), cv=inner_folds,
                                  random_state=inner_random_state, tie_break=tie_break,
                                  nested_depths=nested_depths).fit(X, y)
            return gs.best_estimator_, gs.best_params_
        fit.param_grid, fit.inner_cv = mmit_grid, inner
        return fit

    def fit_cart(X, y):
        if nested_depths:
            est, params, _ = cart_grid_search_nested(X, y, cart_grid(X, y), inner)
            return est, params
        gs = GridSearchCV(IntervalCARTRegressor(), cart_grid(X, y), scoring=interval_mse_scorer, cv=inner)
        gs.fit(X, y)
        return gs.best_estimator_, gs.best_params_
    fit_cart.param_grid, fit_cart.inner_cv = cart_grid, inner

    def fit_l1_paper(X, y):
        est = l1_linear_paper(random_state=l1_seed).fit(X, y)
        params = {"loss": "squared_hinge", "margin": 1.0, "penalty": None}
        chosen = getattr(est, "penalty_", None)
        if chosen is not None:
            params["penalty"] = float(chosen)
        return est, params

    def fit_l1_lp(X, y):
        gs = GridSearchCV(l1_linear_lp(margin=0.0), {"penalty": list(l1_lp_penalties)},
                          scoring=interval_mse_scorer, cv=inner).fit(X, y)
        return gs.best_estimator_, {**gs.best_params_, "margin": 0.0}

    def fit_constant(X, y):
        est = MinErrorConstantRegressor().fit(X, y)
        return est, {"constant": est.constant_}

    def fit_constant_mse(X, y):
        return ConstantIntervalRegressor(loss="squared", margin=0.0).fit(X, y), {}

    methods = {f"MMIT-{loss}": mmit(loss) for loss in mmit_losses}
    if l1 in ("paper", "both"):
        methods["L1-Linear"] = fit_l1_paper
    if l1 in ("lp", "both"):
        methods["L1-LP"] = fit_l1_lp
    if cart:
        methods["Interval-CART"] = fit_cart
    methods["constant"] = fit_constant
    if constant_mse:
        methods["constant-MSE"] = fit_constant_mse
    return methods


def paper_protocol_summary(n_train=None, *, n_margins=20, n_min_samples_split=10,
                           max_depths=AUTHORS_MAX_DEPTHS, inner_folds=10, outer_folds=5, nested_depths=True):
    """The grid sizes of a :func:`paper_methods` run beside the authors' (:data:`AUTHORS_PROTOCOL`), with
    the shrink factor of each (authors' / used). ``n_train``: training-fold size, to count the distinct
    split sizes."""
    a = AUTHORS_PROTOCOL

    def n_split(k):
        return len(min_samples_split_grid(n_train, k)) if n_train is not None else k

    used = {"outer folds": outer_folds, "inner folds": inner_folds,
            "MMIT margins (with 0)": n_margins + 1, "Interval-CART margins": n_margins,
            "min_samples_split values": n_split(n_min_samples_split), "max_depth values": len(max_depths)}
    ref = {"outer folds": a["outer_folds"], "inner folds": a["inner_folds"],
           "MMIT margins (with 0)": a["n_margins"] + 1, "Interval-CART margins": a["n_margins"],
           "min_samples_split values": n_split(a["n_min_samples_split"]),
           "max_depth values": len(a["max_depths"])}
    for d in (used, ref):
        d["MMIT candidates"] = (d["MMIT margins (with 0)"] * d["min_samples_split values"]
                                * d["max_depth values"])
        d["MMIT inner fits per outer fold"] = d["MMIT candidates"] * d["inner folds"]
        d["Interval-CART candidates"] = (d["Interval-CART margins"] * d["min_samples_split values"]
                                         * d["max_depth values"])
    rows = [{"setting": k, "authors": ref[k], "used": used[k], "shrink factor": ref[k] / used[k]}
            for k in ref]
    if nested_depths:
        trees = used["MMIT margins (with 0)"] * used["min_samples_split values"] * used["inner folds"]
        rows.append({"setting": "MMIT trees grown per outer fold (depths nested)",
                     "authors": ref["MMIT inner fits per outer fold"], "used": trees,
                     "shrink factor": ref["MMIT inner fits per outer fold"] / trees})
    return pd.DataFrame(rows)


def authors_fold_ids(n, n_folds=5, random_state=None):
    """Fixed fold ids 1..``n_folds`` in the authors' way: a random permutation of ``arange(n) % n_folds + 1``
    (``simulated.datasets.py``; the same distribution as ``sample(rep(1:n.folds, l=n))`` of
    ``make.data.sets.R``, not the same draw -- R's generator is not reproduced)."""
    rng = check_random_state(random_state)
    return rng.permutation(np.arange(int(n)) % int(n_folds) + 1)


# ----------------------------------------------------------------------------------------------
# the book's first protocol


def make_methods(*, n_margins=3, inner_cv=3, max_depth=10, min_samples_split=(2,), l1_penalties=(1e-3, 1e-2, 1e-1),
                 l1_margins=(0.0,), cart_depths=(2, 4, 6), cart_min_samples_split=(2,), forest=None,
                 random_state=None):
    """The compared methods, each a function ``(X_train, y_train) -> (fitted estimator, chosen params)``.

    MMIT-linear / MMIT-squared: :class:`~treebook.interval.tree.MMITPrunedCV` over the paper's margin grid
    with pruning selected by CV; L1-Linear: the linear-hinge LP (:func:`l1_linear_lp`) over ``l1_penalties`` x
    ``l1_margins`` selected by the interval MSE; Interval-CART over
    ``cart_depths`` x ``cart_min_samples_split`` x the margin grid; constant: squared hinge, no margin.
    ``forest``: dict of :class:`~treebook.interval.tree.MMITForestRegressor` parameters (adds "MMIT-forest").
    The methods of Figure 5 as the authors run them are :func:`paper_methods`.
    """
    seed = int(check_random_state(random_state).integers(2**31 - 1))

    def mmit(loss):
        def fit(X, y):
            grid = {"margin": margin_grid(y, n_margins).tolist(), "max_depth": [max_depth],
                    "min_samples_split": list(min_samples_split)}
            est = MMITPrunedCV(loss=loss, param_grid=grid, cv=inner_cv, random_state=seed).fit(X, y)
            return est, est.best_params_
        return fit

    def grid_fit(est, grid):
        def fit(X, y):
            g = {k: (v(y) if callable(v) else list(v)) for k, v in grid.items()}
            gs = GridSearchCV(est, g, scoring=interval_mse_scorer, cv=KFold(inner_cv, shuffle=True, random_state=seed))
            gs.fit(X, y)
            return gs.best_estimator_, gs.best_params_
        return fit

    def constant(X, y):
        return ConstantIntervalRegressor().fit(X, y), {}

    methods = {
        "MMIT-linear": mmit("linear"),
        "MMIT-squared": mmit("squared"),
        "L1-Linear": grid_fit(l1_linear_lp(), {"penalty": l1_penalties, "margin": l1_margins}),
        "Interval-CART": grid_fit(IntervalCARTRegressor(), {
            "max_depth": cart_depths, "min_samples_split": cart_min_samples_split,
            "margin": lambda y: margin_grid(y, n_margins).tolist()}),
        "constant": constant,
    }
    if forest is not None:
        def fit_forest(X, y):
            return MMITForestRegressor(random_state=seed, **forest).fit(X, y), dict(forest)
        methods["MMIT-forest"] = fit_forest
    return methods


def cross_validate_methods(X, y, methods, *, n_folds=5, dataset="", random_state=None, progress=False,
                           fold_ids=None, only_folds=None):
    """Outer ``n_folds``-fold CV of every method; one row per (method, fold) with the test interval MSE,
    the chosen hyper-parameters and the fit time. ``only_folds``: run only these fold labels (the others
    are drawn all the same, so a fold's rows do not depend on which folds run).

    ``fold_ids``: fixed fold ids, one per row (the authors' ``folds.csv``; e.g. :func:`authors_fold_ids`);
    the folds are then its distinct values in increasing order, ``fold`` is the id and ``n_folds`` and
    ``random_state`` are not used. Without it the folds are a shuffled ``KFold(n_folds)``.
    """
    if fold_ids is None:
        seed = int(check_random_state(random_state).integers(2**31 - 1))
        folds = list(KFold(n_folds, shuffle=True, random_state=seed).split(X))
        labels = list(range(1, n_folds + 1))
    else:
        fold_ids = np.asarray(fold_ids)
        if fold_ids.shape != (len(X),):
            raise ValueError(f"fold_ids must have one id per row ({len(X)}); got shape {fold_ids.shape}")
        labels = np.unique(fold_ids).tolist()
        folds = [(np.flatnonzero(fold_ids != k), np.flatnonzero(fold_ids == k)) for k in labels]
    if only_folds is not None:
        unknown = set(only_folds) - set(labels)
        if unknown:
            raise ValueError(f"only_folds {sorted(unknown)} are not folds (the folds are {labels})")
    jobs = [(name, k) for k in range(len(folds)) for name in methods
            if only_folds is None or labels[k] in only_folds]
    if progress:
        from tqdm.auto import tqdm
        jobs = tqdm(jobs, desc=f"CV {dataset}")
    rows = []
    for name, k in jobs:
        tr, te = folds[k]
        t0 = time.perf_counter()
        est, params = methods[name](X[tr], y[tr])
        secs = time.perf_counter() - t0
        mse = interval_mse(y[te], est.predict(X[te]))
        rows.append({"dataset": dataset, "method": name, "fold": labels[k], "mse": mse,
                     "log10_mse": float(np.log10(max(mse, 1e-12))), "params": params, "seconds": secs})
    return pd.DataFrame(rows)


#: the simulated data sets of Figures 4 and 5, in the order their seeds are drawn (``seed + index``)
SIMULATED = ("linear", "sin", "abs")


def figure5_data(dataset, *, seed=2017, sim_n_samples=200):
    """``(X, y)`` of a Figure 5 data set as the chapter draws it: ``"neuroblastoma"`` (every profile) or
    ``"simulated.<pattern>"`` (:func:`~treebook.interval.simulate.simulated_dataset` with
    ``random_state=seed + index`` of the pattern in :data:`SIMULATED`)."""

    if dataset == "neuroblastoma":
        return load_neuroblastoma()
    pattern = dataset.removeprefix("simulated.")
    if not dataset.startswith("simulated.") or pattern not in SIMULATED:
        raise ValueError(f"dataset must be 'neuroblastoma' or one of "
                         f"{[f'simulated.{p}' for p in SIMULATED]}; got {dataset!r}")
    X, y, _ = simulated_dataset(pattern, n_samples=sim_n_samples, random_state=seed + SIMULATED.index(pattern))
    return X, y


#: how the outer folds of a Figure 5 point are drawn
FOLD_KINDS = ("seeded", "authors")


def figure5_point(dataset, fold, method, *, n_outer_folds=5, seed=2017, sim_n_samples=200, n_margins=20,
                  n_min_samples_split=10, max_depths=AUTHORS_MAX_DEPTHS, inner_folds=10, variant_margins=3,
                  variant_inner_cv=3, variant_max_depth=10, variant_l1_penalties=(1e-3, 1e-2, 1e-1),
                  folds="seeded"):
    """One cell of Figure 5: ``method`` trained on the other folds of outer fold ``fold`` of ``dataset`` and
    tested on it, exactly as chapter 2 runs it (:func:`figure5_data`, :func:`paper_methods` with these grids).
    ``folds="seeded"`` draws the outer folds from ``seed``; ``folds="authors"`` (neuroblastoma only) takes
    the authors' fixed folds (:func:`~treebook.datasets.mmit.neuroblastoma_authors_folds`, the draw of their
    ``make.data.sets.R``), and ``seed`` then seeds only the inner CV. ``method`` is one of the authors'
    methods or one of our two variants, ``"MMIT-squared (pruned, ours)"`` and ``"L1-LP, linear hinge,
    margin 0"`` (:func:`make_methods` with the ``variant_*`` settings). Returns the test interval MSE, its
    log10 and the chosen parameters; one point of a sweep, deterministic."""
    if folds not in FOLD_KINDS:
        raise ValueError(f"folds must be one of {FOLD_KINDS}; got {folds!r}")
    if folds == "authors" and dataset != "neuroblastoma":
        raise ValueError(f"the authors' fixed folds are available for neuroblastoma only; got {dataset!r}")
    if folds == "authors" and int(n_outer_folds) != 5:
        raise ValueError(f"the authors' folds are 5; got n_outer_folds={n_outer_folds}")
    X, y = figure5_data(dataset, seed=seed, sim_n_samples=sim_n_samples)
    methods = paper_methods(n_margins=n_margins, n_min_samples_split=n_min_samples_split,
                            max_depths=list(max_depths), inner_folds=inner_folds, random_state=seed)
    ours = make_methods(n_margins=variant_margins, inner_cv=variant_inner_cv, max_depth=variant_max_depth,
                        l1_penalties=tuple(variant_l1_penalties), random_state=seed)
    methods.update({"MMIT-squared (pruned, ours)": ours["MMIT-squared"],
                    "L1-LP, linear hinge, margin 0": ours["L1-Linear"]})
    if method not in methods:
        raise ValueError(f"method must be one of {sorted(methods)}; got {method!r}")
    fold_ids = neuroblastoma_authors_folds() if folds == "authors" else None
    row = cross_validate_methods(X, y, {method: methods[method]}, n_folds=n_outer_folds, dataset=dataset,
                                 random_state=seed, only_folds=[int(fold)], fold_ids=fold_ids).iloc[0]

    return {"mse": float(row.mse), "log10_mse": float(row.log10_mse), "params": to_jsonable(row.params)}


def _figure5_row(dataset, method, fold, run) -> dict:
    """The :func:`cross_validate_methods` row of a finished Figure 5 point (``seconds``: its wall time)."""
    res = run.record["results"]
    return {"dataset": dataset, "method": method, "fold": fold, "mse": float(res["mse"]),
            "log10_mse": float(res["log10_mse"]), "seconds": run.seconds, "params": dict(res.get("params", {}))}


def load_figure5_sweep(folder, datasets, methods, n_folds, **expected):
    """The rows of :func:`cross_validate_methods` for Figure 5, read from the run folders of a
    ``treebook sweep`` of ``notebooks/sweeps/02-figure5-point.ipynb`` in ``folder`` (``runs/<id>/`` with
    ``params.json`` and ``result.json``, the files a sweep commits; the results table is not needed).

    Every (data set, fold ``1..n_folds``, method) must have a finished run whose parameters in ``expected``
    (``seed``, the grids, ...) have the given values (a parameter absent from ``params.json`` has the
    point notebook's default): a sweep made with other settings is refused with the points or parameters
    that differ. ``seconds`` is the run's wall time where the run folder records it (``run.json``), else NaN.
    """

    unknown = [name for name in expected if name not in notebook_parameters("sweeps/02-figure5-point")]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a parameter of the Figure 5 point notebook")
    runs = read_runs(folder, "sweeps/02-figure5-point")
    rows, missing, unfinished, mismatched = [], [], [], {}
    for d in datasets:
        for f in range(1, n_folds + 1):
            for m in methods:
                same = [r for r in runs
                        if r.params["dataset"] == d and int(r.params["fold"]) == f and r.params["method"] == m]
                match = [r for r in same if all(r.params[k] == v for k, v in expected.items())]
                if not match:
                    if same:
                        for k, v in expected.items():
                            if same[0].params[k] != v:
                                mismatched.setdefault(k, set()).add(str(same[0].params[k]))
                    else:
                        missing.append((d, f, m))
                    continue
                done = [r for r in match if r.record is not None]
                if not done:
                    unfinished.append({"dataset": d, "fold": f, "method": m})
                    continue
                rows.append(_figure5_row(d, m, f, done[0]))
    if mismatched:
        k = sorted(mismatched)[0]
        raise ValueError(f"the sweep in {folder} ran with {k} = {sorted(mismatched[k])}, not {expected[k]!r}")
    if missing:
        raise ValueError(f"the sweep in {folder} lacks {len(missing)} point(s), e.g. {sorted(missing)[:3]}")
    if unfinished:
        raise ValueError(f"{len(unfinished)} point(s) of the sweep in {folder} failed or did not run: "
                         f"{unfinished[:5]}")
    return pd.DataFrame(rows)


#: Figure 5's point notebook (a path under ``notebooks/``): one data set, outer fold and method
FIGURE5_NOTEBOOK = "sweeps/02-figure5-point"


def figure5_points(datasets, methods, n_folds, *, seed, nb_folds="seeded", sim_n_samples=200, fig5_margins=20,
                   fig5_min_samples_split=10, fig5_depths=AUTHORS_MAX_DEPTHS, fig5_inner_folds=10, n_margins=3,
                   inner_cv=3, mmit_max_depth=10, l1_penalties=(0.001, 0.01, 0.1)) -> list[dict]:
    """The points of a sweep of :data:`FIGURE5_NOTEBOOK` that make Figure 5 of ``datasets`` x folds
    ``1..n_folds`` x ``methods``, with the chapter's parameter names, every one explicit (so a point keeps its
    id whatever the point notebook's defaults); neuroblastoma takes the outer folds ``nb_folds``, the
    simulated sets folds drawn from ``seed``."""
    common = {"seed": int(seed), "n_outer_folds": int(n_folds), "sim_n_samples": int(sim_n_samples),
              "fig5_margins": int(fig5_margins), "fig5_min_samples_split": int(fig5_min_samples_split),
              "fig5_depths": [int(d) for d in fig5_depths], "fig5_inner_folds": int(fig5_inner_folds),
              "n_margins": int(n_margins), "inner_cv": int(inner_cv), "mmit_max_depth": int(mmit_max_depth),
              "l1_penalties": [float(v) for v in l1_penalties]}
    return [{"dataset": d, "fold": f, "method": m, "folds": nb_folds if d == "neuroblastoma" else "seeded", **common}
            for d in datasets for f in range(1, int(n_folds) + 1) for m in methods]


def run_figure5(points, out, workers: int = 2, cache=None) -> pd.DataFrame:
    """Run the points of :func:`figure5_points` as a sweep into ``out`` (finished ones skipped; those that
    the sweep folder ``cache`` holds copied first and so read, not run: :func:`treebook.sweep.copy_finished`).
    Returns the rows of :func:`cross_validate_methods` (``seconds``: the point's wall time) in the points'
    order, ``attrs["cached"]`` the number of points read from ``cache``."""
    runs, cached = run_points(FIGURE5_NOTEBOOK, points, out, cache=cache, workers=workers)
    frame = pd.DataFrame([_figure5_row(p["dataset"], p["method"], int(p["fold"]), run) for p, run in zip(points, runs)])
    frame.attrs["cached"] = cached
    return frame


# ----------------------------------------------------------------------------------------------
# fold noise: the neuroblastoma comparison of Figure 5 over several draws of the outer folds

#: the methods whose neuroblastoma comparison the fold-noise study repeats
NOISE_METHODS = ("MMIT-linear", "MMIT-squared", "Interval-CART")


def load_fold_draws(draws, methods=NOISE_METHODS, n_folds=5, dataset="neuroblastoma", **expected):
    """The test MSE of ``methods`` on every outer fold of several draws of the folds, read from sweeps of
    ``notebooks/sweeps/02-figure5-point.ipynb``.

    ``draws`` maps a label to ``(folder, parameters)``: the runs of the point notebook in ``folder`` whose
    parameters have those values (e.g. ``{"folds": "authors"}`` or ``{"seed": 2018}``) besides ``expected``
    (the grids, which every draw shares). A draw is kept only when all its ``n_folds x len(methods)``
    points have finished, so that every draw compares the methods on the same folds. Returns the rows
    (``draw``, ``method``, ``fold``, ``mse``, ``seconds``) and, per label, how many points had finished.
    """

    rows, finished = [], {}
    cache = {}
    for label, (folder, params) in draws.items():
        if folder not in cache:
            cache[folder] = read_runs(folder, "sweeps/02-figure5-point") if folder else []
        want = {**expected, **params, "dataset": dataset}
        found = {}
        for r in cache[folder]:
            if r.record is None or r.params.get("method") not in methods:
                continue
            if all(r.params.get(k) == v for k, v in want.items()) and 1 <= int(r.params["fold"]) <= n_folds:
                found[(r.params["method"], int(r.params["fold"]))] = r
        finished[label] = len(found)
        if len(found) < n_folds * len(methods):
            continue
        for (m, f), r in sorted(found.items()):
            rows.append({"draw": label, "method": m, "fold": f, "mse": float(r.record["results"]["mse"]),
                         "seconds": r.seconds})
    return pd.DataFrame(rows, columns=["draw", "method", "fold", "mse", "seconds"]), finished


def fold_draw_differences(rows, mmits=("MMIT-linear", "MMIT-squared"), other="Interval-CART"):
    """Per draw of the folds, as Figure 5 scores a method: log10 of the mean test MSE over the outer folds of
    each method, of the best MMIT (the lower of ``mmits``), and ``difference`` = best MMIT - ``other``
    (negative: the MMIT is better)."""
    if not len(rows):
        raise ValueError("no finished draw of the folds to compare")
    table = np.log10(rows.pivot_table(index="draw", columns="method", values="mse", aggfunc="mean"))
    missing = [m for m in (*mmits, other) if m not in table.columns]
    if missing:
        raise ValueError(f"the rows lack the method(s) {missing}")
    table = table[[*mmits, other]]
    table["best MMIT"] = table[list(mmits)].min(axis=1)
    table["difference"] = table["best MMIT"] - table[other]
    return table.loc[list(dict.fromkeys(rows.draw))]


def difference_interval(differences, level=0.95):
    """Mean of ``differences`` over the draws with its two-sided Student-t interval at ``level``, the number
    of draws and of negative ones (NaN bounds for fewer than two draws)."""
    from scipy import stats

    d = np.asarray(differences, dtype=float)
    if d.size == 0 or not np.isfinite(d).all():
        raise ValueError(f"differences must be finite and non-empty; got {d!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    mean = float(d.mean())
    if d.size < 2:
        lo = hi = sd = float("nan")
    else:
        sd = float(d.std(ddof=1))
        half = float(stats.t.ppf(0.5 + level / 2, d.size - 1)) * sd / np.sqrt(d.size)
        lo, hi = mean - half, mean + half
    return {"mean": mean, "sd": sd, "low": lo, "high": hi, "level": level, "n": int(d.size),
            "negative": int((d < 0).sum())}
