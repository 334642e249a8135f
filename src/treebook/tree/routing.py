"""Compiled routing: trees whose internal nodes are all threshold splits, and forests of hyperplane trees.

A tree of :class:`~treebook.tree.splits.ThresholdSplit` nodes is packed into four arrays (left and right
child, feature, threshold) and each row walks from the root to its leaf in a numba loop: one pass over
the rows instead of one vectorised pass per node. The rule is the split's own: ``x[feature] > threshold``
goes right, so a NaN goes left, as ``ThresholdSplit.route`` sends it.

Forests of :class:`~treebook.tree.splits.HyperplaneSplit` trees (chapter 4's encoder) are packed into one
node numbering, the children, and each internal node's row of a weight matrix ``W`` and its bias:
:func:`apply_hyperplanes` projects a batch of rows on every node's weights at once (``X @ W.T``) and a numba
loop walks each row down every tree (``x . w >= bias`` goes right). A single tree of other split kinds --
hyperplanes included, whose nodes each project only the rows that reach them -- keeps the vectorised
node-by-node routing of :class:`~treebook.tree.structure.Tree`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["HyperplaneForest", "apply_hyperplanes", "apply_thresholds", "pack_hyperplane_forest", "threshold_paths"]


@njit(cache=True)
def _apply(X, left, right, feature, threshold, out):
    for i in range(X.shape[0]):
        node = 0
        while left[node] >= 0:
            if X[i, feature[node]] > threshold[node]:
                node = right[node]
            else:
                node = left[node]
        out[i] = node


@njit(cache=True)
def _path_ends(X, left, right, feature, threshold, indptr):
    for i in range(X.shape[0]):
        node = 0
        k = 1
        while left[node] >= 0:
            node = right[node] if X[i, feature[node]] > threshold[node] else left[node]
            k += 1
        indptr[i + 1] = indptr[i] + k


@njit(cache=True)
def _fill_paths(X, left, right, feature, threshold, indptr, indices):
    for i in range(X.shape[0]):
        node = 0
        pos = indptr[i]
        indices[pos] = 0
        while left[node] >= 0:
            node = right[node] if X[i, feature[node]] > threshold[node] else left[node]
            pos += 1
            indices[pos] = node


def _as_float_rows(X):
    X = np.asarray(X)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    return np.ascontiguousarray(X)


def apply_thresholds(X, left, right, feature, threshold) -> np.ndarray:
    """Leaf id reached by every row of ``X`` (2-d, numeric) in the packed threshold tree."""
    X = _as_float_rows(X)
    out = np.empty(X.shape[0], dtype=np.intp)
    _apply(X, left, right, feature, threshold, out)
    return out


def threshold_paths(X, left, right, feature, threshold):
    """The ``(indptr, indices)`` of the CSR decision path: row ``i``'s nodes, root first, are
    ``indices[indptr[i]:indptr[i + 1]]`` (node ids grow along a path, so each row's ids are sorted)."""
    X = _as_float_rows(X)
    indptr = np.zeros(X.shape[0] + 1, dtype=np.intp)
    _path_ends(X, left, right, feature, threshold, indptr)
    indices = np.empty(int(indptr[-1]), dtype=np.intp)
    _fill_paths(X, left, right, feature, threshold, indptr, indices)
    return indptr, indices


@njit(cache=True)
def _apply_projected(P, bias, left, right, node_row, roots, out):
    n, T = out.shape
    for i in range(n):
        for t in range(T):
            node = roots[t]
            while left[node] >= 0:
                r = node_row[node]
                if P[i, r] >= bias[r]:
                    node = right[node]
                else:
                    node = left[node]
            out[i, t] = node - roots[t]


def apply_hyperplanes(X, W, bias, left, right, node_row, roots, max_elements: float = 2e7) -> np.ndarray:
    """Leaf id, counted from its tree's root, reached by every row of ``X`` in every packed hyperplane tree:
    an ``(n, len(roots))`` array. Nodes of all trees share one numbering (tree ``t`` starts at ``roots[t]``;
    ``left`` / ``right`` are node ids, -1 at leaves); internal node ``v`` tests ``X @ W[node_row[v]] >=
    bias[node_row[v]]``. Rows are projected in batches of at most ``max_elements`` projections."""
    X = _as_float_rows(X)
    roots = np.asarray(roots, dtype=np.int64)
    out = np.empty((X.shape[0], roots.size), dtype=np.int64)
    step = max(1, int(max_elements // max(1, W.shape[0])))
    for s in range(0, X.shape[0], step):
        _apply_projected(X[s:s + step] @ W.T, bias, left, right, node_row, roots, out[s:s + step])
    return out


class HyperplaneForest(NamedTuple):
    """Trees of hyperplane splits packed into one node numbering (:func:`pack_hyperplane_forest`)."""

    roots: np.ndarray       #: first node id of each tree
    n_nodes: np.ndarray     #: nodes per tree
    left: np.ndarray        #: global left child of every node, -1 at leaves
    right: np.ndarray       #: global right child, -1 at leaves
    node_row: np.ndarray    #: row of an internal node in ``weights`` / ``bias``, -1 at leaves
    weights: np.ndarray     #: (internal nodes, features)
    bias: np.ndarray        #: (internal nodes,)
    path_rows: np.ndarray   #: per node, the rows of the splits on its path from the root (-1 padding)
    path_signs: np.ndarray  #: per node, the side taken at each of them (-1 left, +1 right; 0 padding)


def pack_hyperplane_forest(trees, n_features: int) -> HyperplaneForest:
    """Pack :class:`~treebook.tree.structure.Tree` objects whose splits are all hyperplanes (weights of
    ``n_features`` entries) for :func:`apply_hyperplanes` and for decoders that read every leaf's path."""
    sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
    roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    left = np.concatenate([np.where(~t.is_leaf, t.children_left + r, -1) for t, r in zip(trees, roots)])
    right = np.concatenate([np.where(~t.is_leaf, t.children_right + r, -1) for t, r in zip(trees, roots)])
    left, right = left.astype(np.int64), right.astype(np.int64)
    internal = left >= 0
    n_internal = int(internal.sum())
    node_row = np.full(len(left), -1, dtype=np.int64)
    node_row[internal] = np.arange(n_internal)
    W = np.zeros((n_internal, n_features))
    bias = np.zeros(n_internal)
    for t, r in zip(trees, roots):
        for nd in np.flatnonzero(~t.is_leaf):
            W[node_row[nd + r]] = t.splits[nd].weights
            bias[node_row[nd + r]] = t.splits[nd].bias
    depth = np.concatenate([t.depth for t in trees])
    max_d = max(int(depth.max()) if len(depth) else 0, 1)
    path_rows = np.full((len(left), max_d), -1, dtype=np.int64)
    path_signs = np.zeros((len(left), max_d), dtype=np.int8)
    for t, r in zip(trees, roots):  # paths by breadth-first propagation (arrays, not per sample)
        for nd in np.argsort(t.depth, kind="stable"):
            if t.is_leaf[nd]:
                continue
            g, dep = nd + r, t.depth[nd]
            for child, sgn in ((t.children_left[nd] + r, -1), (t.children_right[nd] + r, 1)):
                path_rows[child, :dep] = path_rows[g, :dep]
                path_signs[child, :dep] = path_signs[g, :dep]
                path_rows[child, dep] = node_row[g]
                path_signs[child, dep] = sgn
    return HyperplaneForest(roots, sizes, left, right, node_row, W, bias, path_rows, path_signs)

