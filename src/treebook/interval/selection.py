"""Model selection of MMITs: the CV-pruned MMIT of the paper (:class:`MMITPrunedCV`) and the unpruned grid
search of the authors' scripts (:class:`MMITGridSearchCV`), both searches with a ``best_estimator_``."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.model_selection import KFold
from sklearn.utils._param_validation import HasMethods, StrOptions

from ..validation import RANDOM_STATE, check_random_state, check_X_fitted, int_interval, validate_fit
from .losses import LOSS_CONSTRAINTS, check_X_intervals
from .metrics import interval_mse
from .tree import MMITRegressor

__all__ = ["BestEstimatorMixin", "MMITGridSearchCV", "MMITPrunedCV", "check_param_grid", "predict_at_depths"]


class BestEstimatorMixin:
    """``predict`` and ``score`` (minus the interval MSE) of a search through its ``best_estimator_``."""

    def predict(self, X):
        X = check_X_fitted(self, X, "best_estimator_")
        return self.best_estimator_.predict(X)

    def score(self, X, y, sample_weight=None):
        """Minus the interval mean squared error."""
        return -interval_mse(y, self.predict(X))


def check_param_grid(param_grid, allowed) -> dict:
    """The lists of a search's ``param_grid`` (``None``: ``{"margin": [0.0]}``): keys among ``allowed``, each
    value a non-empty sequence (a ``TypeError`` / ``ValueError`` names the key). The values themselves are
    validated by the estimators fitted with them."""
    grid = {"margin": [0.0]} if param_grid is None or len(param_grid) == 0 else dict(param_grid)
    unknown = sorted(set(map(str, grid)) - set(allowed))
    if unknown:
        raise ValueError(f"param_grid keys must be among {sorted(allowed)}; got unknown keys {unknown}")
    out = {}
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"param_grid[{key!r}] must be a list of values; got {values!r}")
        values = list(values)
        if not values:
            raise ValueError(f"param_grid[{key!r}] is empty: every list of param_grid needs at least one value")
        out[key] = values
    return out


class MMITPrunedCV(BestEstimatorMixin, RegressorMixin, BaseEstimator):
    """MMIT with hyper-parameters and pruning level chosen by K-fold cross-validation.

    The paper's protocol (section 5): for every combination of ``param_grid`` (e.g. margins), a full
    tree is grown on all the data and its weakest-link alphas ``alpha_k`` are computed; trees grown on
    each training fold are pruned at the geometric means ``sqrt(alpha_k alpha_{k+1})`` and scored on the
    held-out fold (interval MSE); the combination and alpha with the lowest mean CV error are refit.

    Parameters
    ----------
    loss : {"linear", "squared"}
    param_grid : dict of lists over ``margin``, ``max_depth``, ``min_samples_split``, ``min_samples_leaf``
    cv : int, folds of the inner cross-validation
    prune : bool, select the pruning level (otherwise alpha = 0)
    random_state : seeds the fold assignment.
    """

    _parameter_constraints = {
        "loss": LOSS_CONSTRAINTS["loss"],
        "param_grid": [dict, None],
        "cv": [int_interval(2)],
        "prune": ["boolean"],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, loss="linear", param_grid=None, cv=5, prune=True, random_state=None):
        self.loss = loss
        self.param_grid = param_grid
        self.cv = cv
        self.prune = prune
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)  # the grid's values are validated by each MMIT
    def fit(self, X, y):
        X, y = validate_fit(self, X, y, check_X_intervals)
        grid = check_param_grid(self.param_grid, {"margin", "max_depth", "min_samples_split", "min_samples_leaf"})
        if X.shape[0] < self.cv:
            raise ValueError(f"{X.shape[0]} samples cannot be split into cv={self.cv} folds")
        names = sorted(grid)
        combos = [dict(zip(names, vals)) for vals in itertools.product(*(grid[k] for k in names))]
        seed = int(check_random_state(self.random_state).integers(2**31 - 1))
        folds = list(KFold(self.cv, shuffle=True, random_state=seed).split(X))
        results = []
        for params in combos:
            full = MMITRegressor(loss=self.loss, **params).fit(X, y)
            if self.prune:
                alphas = full.cost_complexity_pruning_path()
                betas = np.sqrt(alphas[:-1] * alphas[1:]) if alphas.size > 1 else np.zeros(0)
                betas = np.concatenate([[0.0], betas, [alphas[-1]]])
            else:
                betas = np.array([0.0])
            errs = np.zeros(betas.size)
            for tr, te in folds:
                est = MMITRegressor(loss=self.loss, **params).fit(X[tr], y[tr])
                for k, beta in enumerate(betas):
                    tree = est.prune(beta)
                    errs[k] += interval_mse(y[te], tree.predict(X[te])[:, 0]) / len(folds)
            k = int(np.argmin(errs))
            results.append({**params, "alpha": float(betas[k]), "cv_mse": float(errs[k]), "_full": full})
        best = min(range(len(results)), key=lambda i: results[i]["cv_mse"])
        self.best_params_ = {k: v for k, v in results[best].items() if k not in ("_full", "cv_mse")}
        self.best_score_ = -results[best]["cv_mse"]
        self.cv_results_ = [{k: v for k, v in r.items() if k != "_full"} for r in results]
        full = results[best]["_full"]
        full.ccp_alpha = self.best_params_["alpha"]
        full.tree_ = full.prune(full.ccp_alpha)
        self.best_estimator_ = full
        self.n_features_in_ = X.shape[1]
        return self



# ----------------------------------------------------------------------------------------------
# unpruned MMIT grid search


def _close(a, b):
    # the tolerance of ``np.allclose``, which the stored mmit GridSearchCV uses for equal scores
    return bool(np.isclose(a, b, rtol=1e-5, atol=1e-8))


def _path_matrix(est, X):
    """Node reached at every depth by every row of ``X`` and each row's leaf depth."""
    tree = est.tree_
    dp = est.decision_path(X).tocoo()
    node_depth = tree.depth
    path = np.zeros((X.shape[0], int(node_depth.max()) + 1), dtype=np.intp)
    path[dp.row, node_depth[dp.col]] = dp.col
    leaf_depth = np.zeros(X.shape[0], dtype=np.intp)
    np.maximum.at(leaf_depth, dp.row, node_depth[dp.col])
    return path, leaf_depth


def predict_at_depths(est, X, depths):
    """Predictions of ``est``'s tree cut at every depth of ``depths`` (``None``: not cut), shape
    (len(depths), n). A greedy tree grown to depth ``d`` is the deeper tree cut at ``d``: a node's split
    depends only on the node's samples, and an internal node keeps the value it would predict as a leaf."""
    path, leaf_depth = _path_matrix(est, X)
    rows = np.arange(X.shape[0])
    value = est.tree_.value[:, 0]
    cut = [leaf_depth if d is None else np.minimum(leaf_depth, d) for d in depths]
    return np.array([value[path[rows, k]] for k in cut])


def _n_rules_at_depth(est, depth):
    """Internal nodes (rules) of ``est``'s tree cut at ``depth``."""
    tree = est.tree_
    internal = ~tree.is_leaf
    if depth is None:
        return int(internal.sum())
    return int(np.sum(internal & (tree.depth < depth)))


class MMITGridSearchCV(BestEstimatorMixin, RegressorMixin, BaseEstimator):
    """Grid search of an **unpruned** :class:`~treebook.interval.tree.MMITRegressor` the way the authors'
    ``mmit.model_selection.GridSearchCV(..., pruning=False)`` runs it (``aldro61/mmit``).

    Every combination of ``param_grid`` (keys ``margin``, ``max_depth``, ``min_samples_split``) is scored
    by the mean over the inner folds of the interval MSE on the held-out part; the best combination is
    refit on all the data (``ccp_alpha = 0``: no pruning).

    Parameters
    ----------
    loss : {"linear", "squared"}
    param_grid : dict of lists (e.g. :func:`paper_param_grid`)
    cv : int or a scikit-learn splitter. An int ``k`` means ``KFold(k, shuffle=True, random_state)``,
        the authors' ``KFold(n_splits=10, shuffle=True, random_state=42)`` with the defaults.
    random_state : int or None, passed to ``KFold`` as is (42 reproduces the authors' inner folds).
    tie_break : ``"smallest_tree"`` (the authors': visiting candidates in ``ParameterGrid`` order --
        margin slowest, then ``max_depth``, then ``min_samples_split`` -- a candidate with an equal score,
        within ``np.allclose`` tolerance, replaces the best one only when its tree, refit on all the data,
        has fewer internal nodes) or ``"first"`` (scikit-learn's: the first best score).
    nested_depths : bool
        ``True`` grows one tree per (margin, min_samples_split, fold) to the largest ``max_depth`` and scores
        it cut at every depth of the grid -- the same predictions as growing every depth (a greedy tree
        grown to depth ``d`` is the deeper tree cut at ``d``), ``len(max_depth)`` times fewer fits;
        ``False`` grows every combination.

    Attributes
    ----------
    best_params_, best_score_ (minus the interval MSE), best_estimator_ (an ``MMITRegressor``),
    cv_results_ : DataFrame, one row per candidate in ``ParameterGrid`` order with ``cv_mse``.
    n_features_in_, feature_names_in_ : the number of features and (DataFrame input) their names, checked
        at predict time.
    """

    _parameter_constraints = {
        "loss": LOSS_CONSTRAINTS["loss"],
        "param_grid": [dict, None],
        "cv": [int_interval(2), HasMethods(["split", "get_n_splits"])],  # a str has a split method too
        # passed to KFold as is (scikit-learn's seeds: 42 reproduces the authors' inner folds)
        "random_state": [None, int_interval(0, 2**32 - 1, closed="both"), np.random.RandomState],
        "tie_break": [StrOptions({"smallest_tree", "first"})],
        "nested_depths": ["boolean"],
    }

    def __init__(self, loss="linear", param_grid=None, cv=10, random_state=42, tie_break="smallest_tree",
                 nested_depths=True):
        self.loss = loss
        self.param_grid = param_grid
        self.cv = cv
        self.random_state = random_state
        self.tie_break = tie_break
        self.nested_depths = nested_depths

    def _grid(self):
        grid = check_param_grid(self.param_grid, {"margin", "max_depth", "min_samples_split"})
        # each value is checked by MMITRegressor's constraints when the first candidate is fitted; here only
        # what the conversions below need
        for key, values in grid.items():
            for v in values:
                if key == "max_depth" and v is None:
                    continue
                number = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                if not number or not (key == "margin" or float(v).is_integer()):
                    raise ValueError(f"param_grid[{key!r}] holds {v!r}, which is not a valid {key} "
                                     f"({'a number >= 0' if key == 'margin' else 'an int'})")
        margins = [float(m) for m in grid.get("margin", [0.0])]
        depths = [None if d is None else int(d) for d in grid.get("max_depth", [None])]
        splits = [int(s) for s in grid.get("min_samples_split", [2])]
        return margins, depths, splits

    def _folds(self, X):
        if isinstance(self.cv, (int, np.integer)):
            if X.shape[0] < self.cv:
                raise ValueError(f"{X.shape[0]} samples cannot be split into cv={self.cv} folds")
            return list(KFold(int(self.cv), shuffle=True, random_state=self.random_state).split(X))
        return list(self.cv.split(X))

    @_fit_context(prefer_skip_nested_validation=False)  # the grid's values are validated by each MMIT
    def fit(self, X, y):
        X, y = validate_fit(self, X, y, check_X_intervals)
        margins, depths, splits = self._grid()
        folds = self._folds(X)
        deepest = None if any(d is None for d in depths) else max(depths)
        mse = {}
        for m in margins:
            for s in splits:
                err = np.zeros(len(depths))
                for tr, te in folds:
                    if self.nested_depths:
                        est = MMITRegressor(loss=self.loss, margin=m, max_depth=deepest, min_samples_split=s)
                        pred = predict_at_depths(est.fit(X[tr], y[tr]), X[te], depths)
                    else:
                        pred = [MMITRegressor(loss=self.loss, margin=m, max_depth=d, min_samples_split=s)
                                .fit(X[tr], y[tr]).predict(X[te]) for d in depths]
                    err += np.array([interval_mse(y[te], p) for p in pred]) / len(folds)
                for d, e in zip(depths, err):
                    mse[(m, d, s)] = float(e)
        full_trees = {}

        def n_rules(m, d, s):
            # internal nodes of the candidate's tree refit on all the data (cached per margin and split size)
            if self.nested_depths:
                key = (m, s)
                if key not in full_trees:
                    full_trees[key] = MMITRegressor(loss=self.loss, margin=m, max_depth=deepest,
                                                    min_samples_split=s).fit(X, y)
                return _n_rules_at_depth(full_trees[key], d)
            key = (m, d, s)
            if key not in full_trees:
                full_trees[key] = MMITRegressor(loss=self.loss, margin=m, max_depth=d,
                                                min_samples_split=s).fit(X, y)
            return _n_rules_at_depth(full_trees[key], None)

        order = [(m, d, s) for m in margins for d in depths for s in splits]  # ParameterGrid order
        best = order[0]
        for cand in order[1:]:
            a, b = -mse[cand], -mse[best]
            if _close(a, b):
                if self.tie_break == "smallest_tree" and n_rules(*cand) < n_rules(*best):
                    best = cand
            elif a > b:
                best = cand
        self.cv_results_ = pd.DataFrame([{"margin": m, "max_depth": d, "min_samples_split": s,
                                          "cv_mse": mse[(m, d, s)], "mean_test_score": -mse[(m, d, s)]}
                                         for m, d, s in order])
        self.best_params_ = {"margin": best[0], "max_depth": best[1], "min_samples_split": best[2]}
        self.best_score_ = -mse[best]
        self.best_estimator_ = MMITRegressor(loss=self.loss, **self.best_params_).fit(X, y)
        self.n_features_in_ = X.shape[1]
        return self
