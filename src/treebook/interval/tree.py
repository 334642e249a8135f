"""Maximum margin interval trees (MMIT): growth, cost-complexity pruning and forests (their model selection is
:mod:`treebook.interval.selection`).

Section 3 of Drouin, Hocking & Laviolette (2017): a leaf predicting ``mu`` costs the sum of the hinge
losses of its intervals (equation (2)); a node is split by the threshold rule ``x_j <= delta`` that
minimises the total cost of the two children (equation (4)). For one feature, the costs of all the
left children are the prefix minima of the solver run over the samples sorted by ``x_j``, and the
costs of the right children are the prefix minima of the reversed order, so one forward and one
backward sweep (section 4) evaluate every threshold of a feature in O(n log n).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from ..tree import BaseTree, Candidate, ThresholdSplit, Tree
from ..tree import prune as core_pruning
from ..tree.cart import GROWTH_CONSTRAINTS, MAX_FEATURES_CONSTRAINT, resolve_max_features
from ..tree.grow import Splitter, grow
from ..validation import (
    RANDOM_STATE,
    check_random_state,
    check_X_fitted,
    int_interval,
    real_interval,
    validate_fit,
)
from .losses import (
    LOSS_CONSTRAINTS,
    check_limit_size,
    check_loss,
    check_margin,
    check_X_intervals,
)
from .metrics import interval_mse
from .solver import breakpoints, sweep

__all__ = [
    "MMITRegressor",
    "MMITForestRegressor",
    "pruning_alphas",
    "prune_tree",
    "node_collapse_alphas",
    "grow_mmit",
    "MMITSplitter",
]


@njit(cache=True)
def _node_search(Xn, orders, feats, rank_lo, rank_hi, bps, is_up, wr, squared, min_leaf):
    """Best threshold split of a node: (feature, position in sorted order, children's total cost)."""
    n = orders.shape[0]
    cf = np.empty(n)
    cb = np.empty(n)
    pr = np.empty(n)
    lm = np.empty((n, 2), dtype=np.int32)
    rev = np.empty(n, dtype=np.int64)
    best = np.inf
    bf = -1
    bi = -1
    for jj in range(feats.shape[0]):
        f = feats[jj]
        order = orders[:, jj]
        if Xn[order[0], f] == Xn[order[n - 1], f]:
            continue
        for k in range(n):
            rev[k] = order[n - 1 - k]
        sweep(order, rank_lo, rank_hi, bps, is_up, wr, squared, cf, pr, lm)
        sweep(rev, rank_lo, rank_hi, bps, is_up, wr, squared, cb, pr, lm)
        for i in range(min_leaf - 1, n - min_leaf):
            if Xn[order[i], f] == Xn[order[i + 1], f]:
                continue
            c = cf[i] + cb[n - 2 - i]
            if c < best:
                best = c
                bf = jj
                bi = i
    return bf, bi, best


def _node_solve(y, squared, margin):
    """Minimum total cost and minimiser of the hinge losses of a node's intervals."""
    rank_lo, rank_hi, bps, is_up, wr = breakpoints(y[:, 0], y[:, 1], margin)
    n = y.shape[0]
    cost = np.empty(n)
    pred = np.empty(n)
    lm = np.empty((n, 2), dtype=np.int32)
    sweep(np.arange(n, dtype=np.int64), rank_lo, rank_hi, bps, is_up, wr, squared, cost, pred, lm)
    return float(cost[-1]), float(pred[-1]), (rank_lo, rank_hi, bps, is_up, wr)


class MMITSplitter(Splitter):
    """The MMIT split search of equation (4) for :func:`treebook.tree.grow.grow`.

    A node's handle carries its row numbers and its solve -- minimum total hinge loss, minimiser and the
    breakpoints of its intervals -- computed once, when its parent is split, and used both for the node's
    value and cost and for the sweeps of its own split search. A node is split only when the best split
    lowers its total cost (by more than a relative 1e-10); a node of cost at most 1e-10 is pure.
    """

    def __init__(self, X, y, squared: bool, margin: float):
        self.X, self.y, self.squared, self.margin = X, y, squared, margin
        self.n_samples, self.n_features = X.shape

    def _handle(self, idx):
        cost, pred, bp = _node_solve(self.y[idx], self.squared, self.margin)
        return idx, cost, pred, bp

    def root(self):
        return self._handle(np.arange(self.n_samples))

    def node(self, handle):
        idx, cost, pred, _ = handle
        return [pred], idx.size, cost / idx.size

    def is_pure(self, handle, impurity):
        cost = handle[1]
        return cost <= 1e-10 * max(1.0, cost)

    def find(self, handle, features, min_samples_leaf):
        idx, cost, _, bp = handle
        feats = np.asarray(features, dtype=np.int64)
        Xn = self.X[idx]
        orders = np.argsort(Xn[:, feats], axis=0)
        jj, pos, best = _node_search(Xn, orders, feats, *bp, self.squared, min_samples_leaf)
        if jj < 0 or not best < cost - 1e-10 * max(1.0, cost):
            return None
        f = int(feats[jj])
        order = orders[:, jj]
        x_lo = Xn[order[pos], f]
        x_hi = Xn[order[pos + 1], f]
        thr = 0.5 * (x_lo + x_hi)
        if not x_lo <= thr < x_hi:
            thr = x_lo
        return Candidate(ThresholdSplit(f, float(thr)), float(best), Xn[:, f] > thr)

    def children(self, handle, cand):
        idx = handle[0]
        return self._handle(idx[~cand.right]), self._handle(idx[cand.right])


def grow_mmit(X, y, *, loss="linear", margin=0.0, **growth):
    """Grow an MMIT greedily (section 3); returns a :class:`~treebook.tree.Tree`.

    :func:`treebook.tree.grow.grow` with an :class:`MMITSplitter`; ``growth`` are its keyword arguments
    (``max_depth``, ``min_samples_split``, ``min_samples_leaf``, ``max_features``, ``random_state``).
    Node ``impurity`` is the node's minimum total hinge loss divided by its number of samples, so
    ``impurity * n_node_samples`` is the leaf cost of equation (2) (used by pruning).
    """
    return grow(MMITSplitter(X, y, check_loss(loss) == "squared", check_margin(margin)), **growth)


# ----------------------------------------------------------------------------------------------
# minimal cost-complexity pruning (Breiman et al. 1984, chapter 3), used by the paper's protocol: the tree
# core's weakest-link pruning (treebook.tree.prune) with the node hinge loss as the node cost


def node_collapse_alphas(tree: Tree) -> np.ndarray:
    """Alpha at which each internal node stops being internal under weakest-link pruning (``-1`` at leaves).

    A node's cost is its minimum total hinge loss (``impurity * n_node_samples``) divided by the number of
    training samples at the root, as scikit-learn normalises its costs, so that alphas of trees grown on
    different folds are comparable (:func:`treebook.tree.prune.node_costs`). Breiman et al.'s grouped
    book-keeping (``method="grouped"``): branches whose ``g`` ties within a relative 1e-12 are pruned
    together and the alphas increase strictly.
    """
    return core_pruning.collapse_alphas(tree, method="grouped")


def pruning_alphas(tree: Tree) -> np.ndarray:
    """The increasing sequence 0 = alpha_0 < alpha_1 < ... of the weakest-link pruning path."""
    return core_pruning.pruning_alphas(tree, collapse=node_collapse_alphas(tree))


def prune_tree(tree: Tree, alpha: float, collapse=None) -> Tree:
    """The smallest minimal cost-complexity subtree for ``alpha`` (internal nodes with collapse alpha
    ``<= alpha`` become leaves; ``collapse`` from :func:`node_collapse_alphas` saves recomputing it)."""
    if collapse is None:
        collapse = node_collapse_alphas(tree)
    return core_pruning.prune_tree(tree, alpha, collapse=collapse)


# ----------------------------------------------------------------------------------------------
# estimators


#: scikit-learn ``_parameter_constraints`` of the growth of an MMIT (CART's, without
#: ``min_impurity_decrease``)
MMIT_GROWTH_CONSTRAINTS = {k: v for k, v in GROWTH_CONSTRAINTS.items() if k != "min_impurity_decrease"}


class MMITRegressor(RegressorMixin, BaseTree):
    """Maximum margin interval tree (Drouin, Hocking & Laviolette 2017).

    Fits a regression tree to interval targets ``y[i] = [lower_i, upper_i]`` (``-inf`` / ``+inf``
    allowed) by minimising the total hinge loss with margin (equation (2)); each split is the best
    threshold of equation (4), found with one forward and one backward sweep of the solver of
    section 4 per feature; a leaf predicts the minimiser of its intervals' hinge losses.

    Parameters
    ----------
    loss : {"linear", "squared"}
        hinge ``(x)_+`` or ``(x)_+^2``.
    margin : float >= 0
        the margin epsilon of equation (1).
    max_depth : int or None
    min_samples_split, min_samples_leaf : int
    ccp_alpha : float >= 0
        cost-complexity pruning parameter (costs per training sample); 0 keeps the grown tree.
    max_features : None, int, float, "sqrt" or "log2"
        features drawn at each node (used by :class:`MMITForestRegressor`).
    random_state : seed of the feature draws.

    Attributes
    ----------
    tree_ : the (pruned) :class:`~treebook.tree.Tree`; ``full_tree_`` : the tree before pruning.
    n_features_in_, feature_names_in_ : the number of features and (DataFrame input) their names, checked
        at predict time.
    """

    _parameter_constraints = {
        **LOSS_CONSTRAINTS,
        **MMIT_GROWTH_CONSTRAINTS,
        "ccp_alpha": [real_interval(0.0)],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, loss="linear", margin=0.0, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 ccp_alpha=0.0, max_features=None, random_state=None):
        self.loss = loss
        self.margin = margin
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.max_features = max_features
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the tree on ``X`` (n, p) and interval targets ``y`` (n, 2), then prune it at ``ccp_alpha``.

        Limits so large that a node's hinge losses would overflow are refused (``ValueError``)."""
        X, y = validate_fit(self, X, y, check_X_intervals)
        check_limit_size(y, check_margin(self.margin), squared=self.loss == "squared")
        self.n_features_in_ = X.shape[1]
        self.full_tree_ = grow_mmit(
            X, y, loss=self.loss, margin=self.margin, max_depth=self.max_depth,
            min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
            max_features=resolve_max_features(self.max_features, X.shape[1]), random_state=self.random_state)
        self._collapse = node_collapse_alphas(self.full_tree_)
        self.tree_ = self.prune(self.ccp_alpha)
        return self

    def prune(self, alpha):
        """The fitted full tree pruned at ``alpha`` (minimal cost-complexity subtree)."""
        check_is_fitted(self, "full_tree_")
        if alpha <= 0:
            return self.full_tree_
        return prune_tree(self.full_tree_, alpha, self._collapse)

    def cost_complexity_pruning_path(self):
        """The alphas at which the fitted full tree loses nodes (weakest-link pruning)."""
        check_is_fitted(self, "full_tree_")
        return pruning_alphas(self.full_tree_)

    def predict(self, X):
        """The leaf minimiser reached by each sample."""
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)[:, 0]

    def score(self, X, y, sample_weight=None):
        """Minus the interval mean squared error (greater is better, as scikit-learn expects)."""
        return -interval_mse(y, self.predict(X))


class MMITForestRegressor(RegressorMixin, BaseEstimator):
    """Random forest of MMITs: bootstrap samples, ``max_features`` drawn at each node, mean prediction.

    The paper lists ensembles of MMITs as future work (section 6); this is the random-forest recipe
    of Breiman (2001) applied to :class:`MMITRegressor`.
    """

    _parameter_constraints = {
        "n_estimators": [int_interval(1)],
        **LOSS_CONSTRAINTS,
        **MMIT_GROWTH_CONSTRAINTS,
        "max_features": MAX_FEATURES_CONSTRAINT,
        "bootstrap": ["boolean"],
        "random_state": RANDOM_STATE,
        "progress": ["boolean"],
    }

    def __init__(self, n_estimators=100, loss="linear", margin=0.0, max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, max_features="sqrt", bootstrap=True, random_state=None, progress=False):
        self.n_estimators = n_estimators
        self.loss = loss
        self.margin = margin
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.random_state = random_state
        self.progress = progress

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_fit(self, X, y, check_X_intervals)
        check_limit_size(y, check_margin(self.margin), squared=self.loss == "squared")
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        self.estimators_ = []
        it = range(self.n_estimators)
        if self.progress:
            from tqdm.auto import tqdm
            it = tqdm(it, desc="MMIT forest")
        for _ in it:
            idx = rng.integers(0, n, n) if self.bootstrap else np.arange(n)
            est = MMITRegressor(loss=self.loss, margin=self.margin, max_depth=self.max_depth,
                                min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
                                max_features=self.max_features, random_state=int(rng.integers(2**31 - 1)))
            self.estimators_.append(est.fit(X[idx], y[idx]))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        X = check_X_fitted(self, X, "estimators_")
        return np.mean([e.tree_.predict(X)[:, 0] for e in self.estimators_], axis=0)

    def score(self, X, y, sample_weight=None):
        """Minus the interval mean squared error."""
        return -interval_mse(y, self.predict(X))
