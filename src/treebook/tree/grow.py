"""Greedy top-down growth with pluggable split search.

:func:`grow_tree` knows nothing of what a node tests or what a leaf costs: it asks a
``find_split`` callable for the best candidate at each node, and ``leaf_value`` /
``node_impurity`` callables for what a node predicts and costs. CART, the nominal trees of
chapter 1, the interval trees of chapter 2, ShapeCART (chapter 3) and the oblique trees of
chapter 4 are all this loop with a different ``find_split``.

:func:`best_threshold_split` is the CART split search (Breiman et al. 1984), vectorised over
all features and all cut points of a node: one sort per feature, cumulative statistics, and
the children's impurity at every cut point in one numpy expression.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..validation import check_random_state
from .criteria import impurity as _impurity
from .splits import Split, ThresholdSplit
from .structure import LEAF, Tree, TreeBuilder

__all__ = ["Candidate", "grow_tree", "best_threshold_split", "FEATURE_THRESHOLD"]

#: Two feature values closer than this are treated as equal (scikit-learn's ``FEATURE_THRESHOLD``).
FEATURE_THRESHOLD = 1e-7
_EPSILON = np.finfo(float).eps


class Candidate(NamedTuple):
    """A proposed split of a node.

    ``cost`` is the children's total cost ``n_L * i_L + n_R * i_R`` (the same units as
    ``n * node_impurity``); ``right`` is a boolean mask over the node's samples.
    """

    split: Split
    cost: float
    right: np.ndarray


def _children_cost(left: np.ndarray, total: np.ndarray, n_left: np.ndarray, n: int, criterion: str):
    """Children's cost ``n_L i_L + n_R i_R`` at many cut points.

    ``left`` holds the left child's statistics (..., k); ``total`` the node's (k,).
    """
    right = total - left
    n_right = n - n_left
    if criterion == "mse":
        # left[..., 0] = sum y, left[..., 1] = sum y^2 (per output, interleaved last axis)
        s_l, q_l = left[..., 0::2], left[..., 1::2]
        s_r, q_r = right[..., 0::2], right[..., 1::2]
        nl = n_left[..., None]
        nr = n_right[..., None]
        cost = (q_l - s_l * s_l / nl) + (q_r - s_r * s_r / nr)
        return cost.mean(axis=-1)
    nl = n_left[..., None]
    nr = n_right[..., None]
    if criterion == "gini":
        return n_left * (1.0 - np.sum((left / nl) ** 2, axis=-1)) + n_right * (
            1.0 - np.sum((right / nr) ** 2, axis=-1))
    return n_left * _impurity(left / nl, "entropy") + n_right * _impurity(right / nr, "entropy")


def best_threshold_split(X: np.ndarray, stats: np.ndarray, features, criterion: str,
                         min_samples_leaf: int = 1, chunk_elements: int = 4_000_000) -> Candidate | None:
    """Best axis-aligned split of a node over ``features`` (CART's exhaustive search).

    Parameters
    ----------
    X : (n, p) array
        The node's samples.
    stats : array
        One-hot class matrix (n, k) for ``"gini"`` / ``"entropy"``; targets (n,) or (n, q) for ``"mse"``.
    features : sequence of int
        Features to consider, in visiting order (ties go to the first feature visited, then
        the leftmost cut point, as in scikit-learn's splitter).
    criterion : {"gini", "entropy", "mse"}
    min_samples_leaf : int
        Each child must keep at least this many samples.

    Returns
    -------
    Candidate or None
        ``None`` when no feature has a valid cut point (constant features, too few samples).
    """
    n = X.shape[0]
    if n < 2 * min_samples_leaf or n < 2:
        return None
    if criterion == "mse":
        y = stats.reshape(n, -1)
        st = np.empty((n, 2 * y.shape[1]))
        st[:, 0::2] = y
        st[:, 1::2] = y * y
    else:
        st = np.asarray(stats, dtype=float)
    total = st.sum(axis=0)
    k = st.shape[1]
    features = np.asarray(features, dtype=np.intp)
    chunk = max(1, chunk_elements // max(1, n * k))
    best = (np.inf, -1, -1)  # cost, feature, position
    n_left_all = np.arange(1, n, dtype=float)
    for start in range(0, features.size, chunk):
        fs = features[start:start + chunk]
        Xs = X[:, fs]
        order = np.argsort(Xs, axis=0, kind="stable")
        xs = np.take_along_axis(Xs, order, axis=0)
        cum = np.cumsum(st[order], axis=0)[:-1]           # (n-1, f, k): left stats with p = 1..n-1 samples
        valid = xs[1:] > xs[:-1] + FEATURE_THRESHOLD      # a cut between distinct values
        valid[: min_samples_leaf - 1] = False
        if min_samples_leaf > 1:
            valid[n - min_samples_leaf:] = False
        if not valid.any():
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = _children_cost(cum, total, n_left_all[:, None], n, criterion)
        cost = np.where(valid, cost, np.inf)
        flat = np.argmin(cost.T)                          # feature-major: first feature, then first cut
        fi, pos = divmod(int(flat), n - 1)
        c = cost[pos, fi]
        if c < best[0]:
            lo, hi = xs[pos, fi], xs[pos + 1, fi]
            thr = lo / 2.0 + hi / 2.0
            if thr == hi or not np.isfinite(thr):
                thr = lo
            best = (float(c), int(fs[fi]), float(thr))
    if best[1] < 0:
        return None
    cost, f, thr = best
    return Candidate(ThresholdSplit(f, thr), cost, X[:, f] > thr)


def grow_tree(X, y, *, find_split: Callable, leaf_value: Callable, node_impurity: Callable,
              max_depth: int | None = None, min_samples_split: int = 2, min_samples_leaf: int = 1,
              min_impurity_decrease: float = 0.0, max_features: int | None = None,
              random_state=None) -> Tree:
    """Grow a binary tree greedily, depth first (left child before right, as scikit-learn numbers nodes).

    A node becomes a leaf when it is at ``max_depth``, has fewer than ``min_samples_split`` or
    ``2 * min_samples_leaf`` samples, is pure (impurity <= machine epsilon), when ``find_split``
    returns ``None``, or when the weighted impurity decrease
    ``n/N * (i - n_L/n i_L - n_R/n i_R)`` is below ``min_impurity_decrease``.

    ``find_split(X_node, y_node, features, min_samples_leaf)`` returns a :class:`Candidate`;
    ``features`` is all features in order, or ``max_features`` of them drawn per node with
    ``random_state``.
    """
    X = np.asarray(X)
    n_total, p = X.shape
    rng = check_random_state(random_state)
    depth_limit = np.inf if max_depth is None else max_depth
    all_features = np.arange(p)
    first_value = np.asarray(leaf_value(y), dtype=float).ravel()
    builder = TreeBuilder(n_outputs=first_value.size)

    stack = [(np.arange(n_total), LEAF, False)]
    while stack:
        idx, parent, is_right = stack.pop()
        y_node = y[idx]
        n = idx.size
        imp = float(node_impurity(y_node))
        node = builder.add_node(leaf_value(y_node), n, imp, parent=parent, is_right=is_right)
        depth = builder._depth[node]
        if (depth >= depth_limit or n < min_samples_split or n < 2 * min_samples_leaf or imp <= _EPSILON):
            continue
        if max_features is None or max_features >= p:
            feats = all_features
        else:
            feats = np.sort(rng.choice(p, size=max_features, replace=False))
        cand = find_split(X[idx], y_node, feats, min_samples_leaf)
        if cand is None:
            continue
        right = np.asarray(cand.right, dtype=bool)
        n_right = int(right.sum())
        if n_right == 0 or n_right == n:
            continue
        improvement = (imp * n - cand.cost) / n_total
        if improvement + _EPSILON < min_impurity_decrease:
            continue
        builder.set_split(node, cand.split)
        stack.append((idx[right], node, True))
        stack.append((idx[~right], node, False))
    return builder.build()
