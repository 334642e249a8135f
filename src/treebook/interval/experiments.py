"""The cross-validation protocol of the paper's section 5.3 (Figure 5).

Outer K-fold CV; inside every training fold each method picks its hyper-parameters by an inner CV
on the interval MSE, is refit on the whole training fold and scored on the held-out fold.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, KFold

from ..validation import check_random_state
from .baselines import ConstantIntervalRegressor, IntervalCARTRegressor, L1LinearIntervalRegressor
from .losses import check_intervals
from .metrics import interval_mse, interval_mse_scorer
from .tree import MMITForestRegressor, MMITPrunedCV

__all__ = ["margin_grid", "make_methods", "cross_validate_methods"]


def margin_grid(y, n_values):
    """The paper's margin grid: ``n_values`` log-spaced values from the smallest positive gap between
    sorted finite training limits to their range."""
    y = check_intervals(y)
    lim = np.sort(y[np.isfinite(y)])
    gaps = np.diff(lim)
    gaps = gaps[gaps > 0]
    if gaps.size == 0:
        return np.zeros(1)
    return np.logspace(np.log10(gaps.min()), np.log10(lim[-1] - lim[0]), int(n_values))


def make_methods(*, n_margins=3, inner_cv=3, max_depth=10, min_samples_split=(2,), l1_penalties=(1e-3, 1e-2, 1e-1),
                 l1_margins=(0.0,), cart_depths=(2, 4, 6), cart_min_samples_split=(2,), forest=None,
                 random_state=None):
    """The compared methods, each a function ``(X_train, y_train) -> (fitted estimator, chosen params)``.

    MMIT-linear / MMIT-squared: :class:`~treebook.interval.tree.MMITPrunedCV` over the paper's margin grid
    with pruning selected by CV; L1-Linear over ``l1_penalties`` x ``l1_margins``; Interval-CART over
    ``cart_depths`` x ``cart_min_samples_split`` x the margin grid; constant: squared hinge, no margin.
    ``forest``: dict of :class:`~treebook.interval.tree.MMITForestRegressor` parameters (adds "MMIT-forest").
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
        "L1-Linear": grid_fit(L1LinearIntervalRegressor(), {"penalty": l1_penalties, "margin": l1_margins}),
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


def cross_validate_methods(X, y, methods, *, n_folds=5, dataset="", random_state=None, progress=False):
    """Outer ``n_folds``-fold CV of every method; one row per (method, fold) with the test interval MSE,
    the chosen hyper-parameters and the fit time."""
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    folds = list(KFold(n_folds, shuffle=True, random_state=seed).split(X))
    jobs = [(name, k) for k in range(n_folds) for name in methods]
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
        rows.append({"dataset": dataset, "method": name, "fold": k + 1, "mse": mse,
                     "log10_mse": float(np.log10(max(mse, 1e-12))), "params": params, "seconds": secs})
    return pd.DataFrame(rows)
