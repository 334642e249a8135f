"""Greedy top-down growth: one loop, :func:`grow`, and the split search as a :class:`Splitter`.

:func:`grow` knows nothing of what a node tests or what a leaf costs: it asks a splitter for each
node's value and impurity and for the best candidate split, and owns the rest -- the stopping
rules, the per-node feature draw of ``max_features``, the node order. A splitter keeps the state
it carries from a node to its children, as scikit-learn's Splitter keeps its sample order. CART
on presorted features (:class:`~treebook.tree.presorted.PresortedSplitter`), the MMIT trees of
chapter 2 (their splitter carries each node's solve to the split search) and every search that
works on a node's own samples (:class:`NodeSplitter`: the vectorised CART search below, the
nominal trees of chapter 1, ShapeCART of chapter 3, the oblique trees of chapter 4) are this loop.

:func:`best_threshold_split` is the CART split search (Breiman et al. 1984), vectorised over
all features and all cut points of a node: one sort per feature, cumulative statistics, and
the children's impurity at every cut point in one numpy expression.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..validation import check_random_state
from .criteria import impurity as _impurity
from .splits import Split, ThresholdSplit
from .structure import LEAF, Tree, TreeBuilder

__all__ = ["Candidate", "FEATURE_THRESHOLD", "NodeSplitter", "Splitter", "best_threshold_split", "grow", "grow_tree"]

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


class Splitter(ABC):
    """The split search of one tree, as :func:`grow` asks for it (scikit-learn's Splitter and Criterion).

    A splitter knows the training data and keeps whatever state it carries from a node to its children
    (the presorted orders of :class:`~treebook.tree.presorted.PresortedSplitter`, the node solves of the
    MMIT splitter); :func:`grow` sees a node only as the opaque handle the splitter made for it, and
    decides alone when to stop, which features to offer, and in which order nodes are numbered.

    Subclasses set ``n_samples`` and ``n_features`` and implement the abstract :meth:`root`, :meth:`node`,
    :meth:`find` and :meth:`children` (a splitter missing one cannot be made).
    """

    n_samples: int
    n_features: int

    @abstractmethod
    def root(self):
        """The handle of the root (all training samples)."""

    @abstractmethod
    def node(self, handle) -> tuple[np.ndarray, int, float]:
        """``(value, n_samples, impurity)`` of a node; ``impurity * n_samples`` is its cost."""

    def is_pure(self, handle, impurity: float) -> bool:
        """Whether the node cannot be improved by any split (default: impurity at most machine epsilon)."""
        return impurity <= _EPSILON

    @abstractmethod
    def find(self, handle, features: np.ndarray, min_samples_leaf: int) -> Candidate | None:
        """The best split of the node over ``features`` with both children of ``min_samples_leaf`` samples
        or more, ``None`` when there is none; ``Candidate.cost`` is the children's total cost."""

    @abstractmethod
    def children(self, handle, candidate: Candidate):
        """The handles of the left and right children of the node split by ``candidate`` (the one
        :meth:`find` returned for this node, called right after it)."""


class NodeSplitter(Splitter):
    """A split search that works on each node's own samples: ``find_split(X_node, y_node, features,
    min_samples_leaf)`` returns a :class:`Candidate` whose ``right`` masks the node's samples;
    ``leaf_value(y_node)`` and ``node_impurity(y_node)`` give what a node predicts and costs. A handle is
    the array of the node's row numbers."""

    def __init__(self, X, y, find_split: Callable, leaf_value: Callable, node_impurity: Callable):
        self.X = np.asarray(X)
        self.y = y
        self.n_samples, self.n_features = self.X.shape
        self.find_split, self.leaf_value, self.node_impurity = find_split, leaf_value, node_impurity
        self._last = (None, None)

    def root(self):
        return np.arange(self.n_samples)

    def node(self, idx):
        y_node = self.y[idx]
        self._last = (idx, y_node)  # the node's targets, for the find() that follows on the same node
        return self.leaf_value(y_node), idx.size, float(self.node_impurity(y_node))

    def find(self, idx, features, min_samples_leaf):
        last_idx, y_node = self._last
        if last_idx is not idx:
            y_node = self.y[idx]
        cand = self.find_split(self.X[idx], y_node, features, min_samples_leaf)
        if cand is None:
            return None
        right = np.asarray(cand.right, dtype=bool)
        n_right = int(right.sum())
        if n_right == 0 or n_right == idx.size:
            return None
        return cand._replace(right=right)

    def children(self, idx, cand):
        return idx[~cand.right], idx[cand.right]


def grow(splitter: Splitter, *, max_depth: int | None = None, min_samples_split: int = 2,
         min_samples_leaf: int = 1, min_impurity_decrease: float = 0.0, max_features: int | None = None,
         random_state=None) -> Tree:
    """Grow a binary tree greedily with ``splitter``, depth first (left child before right, as scikit-learn
    numbers nodes). Every tree of the book is grown by this loop.

    A node becomes a leaf when it is at ``max_depth``, has fewer than ``min_samples_split`` or
    ``2 * min_samples_leaf`` samples, is pure (:meth:`Splitter.is_pure`), when :meth:`Splitter.find`
    returns ``None``, or when the weighted impurity decrease ``n/N * (i - n_L/n i_L - n_R/n i_R)`` is
    below ``min_impurity_decrease``. The features offered at a node are all of them in order, or
    ``max_features`` of them drawn per node with ``random_state`` (sorted).
    """
    n_total, p = splitter.n_samples, splitter.n_features
    rng = check_random_state(random_state)
    depth_limit = np.inf if max_depth is None else max_depth
    all_features = np.arange(p)
    builder = None
    stack = [(splitter.root(), LEAF, False)]
    while stack:
        handle, parent, is_right = stack.pop()
        value, n, imp = splitter.node(handle)
        if builder is None:
            builder = TreeBuilder(n_outputs=np.asarray(value, dtype=float).size)
        node = builder.add_node(value, n, imp, parent=parent, is_right=is_right)
        if (builder._depth[node] >= depth_limit or n < min_samples_split or n < 2 * min_samples_leaf or n < 2
                or splitter.is_pure(handle, imp)):
            continue
        if max_features is None or max_features >= p:
            feats = all_features
        else:
            feats = np.sort(rng.choice(p, size=max_features, replace=False))
        cand = splitter.find(handle, feats, min_samples_leaf)
        if cand is None:
            continue
        improvement = (imp * n - cand.cost) / n_total
        if improvement + _EPSILON < min_impurity_decrease:
            continue
        builder.set_split(node, cand.split)
        left, right = splitter.children(handle, cand)
        stack.append((right, node, True))
        stack.append((left, node, False))
    return builder.build()


def grow_tree(X, y, *, find_split: Callable, leaf_value: Callable, node_impurity: Callable, **growth) -> Tree:
    """:func:`grow` with a :class:`NodeSplitter`: the split search given as a function of a node's samples.

    ``find_split(X_node, y_node, features, min_samples_leaf)`` returns a :class:`Candidate`; ``growth``
    are the keyword arguments of :func:`grow`.
    """
    return grow(NodeSplitter(X, y, find_split, leaf_value, node_impurity), **growth)
