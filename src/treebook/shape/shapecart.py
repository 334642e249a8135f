"""ShapeCART: greedy top-down induction of shape generalized trees (the greedy SGT baseline).

At every node and for every feature, a one-feature CART with at most ``n_intervals`` leaves proposes
intervals; a coordinate descent on the Gini impurity then assigns each interval to the left or right
child (starting from the best single threshold, flipping one interval at a time while the weighted Gini
decreases and the shape keeps at most ``max_breakpoints`` side changes).  The feature with the lowest
children impurity wins.  Growth uses the tree core's greedy grower; the node test is a
:class:`~treebook.tree.ShapeSplit`.
"""

from __future__ import annotations

from functools import partial
from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context

from ..tree import Candidate, ShapeSplit, grow_tree
from ..tree.cart import BaseTree
from ..tree.criteria import node_impurity_classification, one_hot, weighted_impurity
from ..validation import (
    RANDOM_STATE,
    check_classification_targets,
    check_magnitude,
    check_random_state,
    int_interval,
    validate_fit,
)
from .candidates import cart_candidates

__all__ = ["ShapeCARTClassifier", "shape_coordinate_descent"]


def _wgini(c: np.ndarray) -> float:
    return float(weighted_impurity(c, "gini"))


def shape_coordinate_descent(counts: np.ndarray, max_breakpoints: int, min_leaf: int = 1, max_passes: int = 50):
    """Assign pieces (rows of ``counts``, class counts in order along the feature) to sides.

    Returns ``(sides, cost)`` with ``sides`` a bool array (True = right) whose number of side changes is
    between 1 and ``max_breakpoints`` and ``cost = n_L gini_L + n_R gini_R``, or ``(None, inf)``.
    """
    M = counts.shape[0]
    if M < 2:
        return None, np.inf
    tot = counts.sum(axis=0)
    left = np.cumsum(counts, axis=0)[:-1]
    costs = np.array([_wgini(L) + _wgini(tot - L) for L in left])
    nl = left.sum(axis=1)
    ok = (nl >= min_leaf) & (tot.sum() - nl >= min_leaf)
    if not ok.any():
        return None, np.inf
    q = int(np.argmin(np.where(ok, costs, np.inf)))
    sides = np.arange(M) > q
    best = costs[q]
    R = counts[sides].sum(axis=0)
    for _ in range(max_passes):
        improved = False
        for i in range(M):
            s2 = sides.copy()
            s2[i] = ~s2[i]
            nchg = int(np.count_nonzero(s2[1:] != s2[:-1]))
            if nchg < 1 or nchg > max_breakpoints:
                continue
            R2 = R - counts[i] if sides[i] else R + counts[i]
            nr = R2.sum()
            if nr < min_leaf or tot.sum() - nr < min_leaf:
                continue
            c = _wgini(R2) + _wgini(tot - R2)
            if c < best - 1e-12:
                sides, best, R, improved = s2, c, R2, True
        if not improved:
            break
    return sides, best


def _find_shape_split(Xn, Sn, features, min_samples_leaf, *, max_breakpoints, n_intervals, random_state):
    yc = np.argmax(Sn, axis=1)
    C = Sn.shape[1]
    best = None
    for j in features:
        x = Xn[:, j]
        t = cart_candidates(x[:, None], yc, n_intervals, random_state=random_state)[0]
        if t.size == 0:
            continue
        pos = np.searchsorted(t, x, side="left")
        counts = np.bincount(pos * C + yc, minlength=(t.size + 1) * C).reshape(-1, C)
        sides, cost = shape_coordinate_descent(counts, max_breakpoints, min_samples_leaf)
        if sides is None or (best is not None and cost >= best.cost - 1e-12):
            continue
        change = np.flatnonzero(sides[1:] != sides[:-1])
        split = ShapeSplit(int(j), t[change], np.concatenate(([sides[0]], sides[change + 1])))
        best = Candidate(split, float(cost), sides[pos])
    return best


class ShapeCARTClassifier(ClassifierMixin, BaseTree):
    """Greedy shape generalized tree (ShapeCART-style), Gini impurity.

    Parameters
    ----------
    max_depth : int or None
    max_breakpoints : int
        Maximum breakpoints ``K`` per node (``K = 1`` gives threshold splits, i.e. CART over the proposals).
    n_intervals : int
        Leaves of the one-feature CART that proposes the intervals of a node's shape function.
    min_samples_split, min_samples_leaf : int
    random_state : int, RandomState or None
        Tie breaking in the one-feature trees (an int seeds them all alike; ``None`` draws a seed per fit).
    """

    def __init__(self, max_depth=3, max_breakpoints=3, n_intervals=8, min_samples_split=2, min_samples_leaf=1,
                 random_state=None):
        self.max_depth = max_depth
        self.max_breakpoints = max_breakpoints
        self.n_intervals = n_intervals
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    _parameter_constraints: dict = {
        "max_depth": [int_interval(0, None, closed="left"), None],
        "max_breakpoints": [int_interval(1, None, closed="left")],
        "n_intervals": [int_interval(2, None, closed="left")],
        "min_samples_split": [int_interval(2, None, closed="left")],
        "min_samples_leaf": [int_interval(1, None, closed="left")],
        "random_state": RANDOM_STATE,
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        Xa, y = validate_fit(self, X, y)
        check_magnitude(Xa, float(np.finfo(np.float32).max), name="X",
                        reason="the interval proposals come from single-precision CART trees")
        self.classes_, y_enc = check_classification_targets(y)
        self.n_classes_ = self.classes_.size
        onehot = one_hot(y_enc, self.n_classes_)
        # an int seeds every one-feature tree alike; None or a RandomState gives a seed drawn once per fit
        if isinstance(self.random_state, Integral):
            seed = int(self.random_state)
        else:
            seed = int(check_random_state(self.random_state).integers(2**31 - 1))
        find = partial(_find_shape_split, max_breakpoints=int(self.max_breakpoints),
                       n_intervals=int(self.n_intervals), random_state=seed)
        self.tree_ = grow_tree(
            Xa, onehot, find_split=find, leaf_value=lambda Sn: Sn.sum(axis=0) / Sn.shape[0],
            node_impurity=partial(node_impurity_classification, criterion="gini"), max_depth=self.max_depth,
            min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
        )
        return self

    def apply(self, X) -> np.ndarray:
        """Leaf id reached by each sample."""
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    def decision_path(self, X):
        """Sparse (n_samples x n_nodes) indicator of the nodes each sample passes through."""
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    def predict_proba(self, X) -> np.ndarray:
        """Class fractions of the training samples in the leaf each sample reaches."""
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
