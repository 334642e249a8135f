"""Compiled routing for trees whose internal nodes are all threshold splits.

A tree of :class:`~treebook.tree.splits.ThresholdSplit` nodes is packed into four arrays (left and right
child, feature, threshold) and each row walks from the root to its leaf in a numba loop: one pass over
the rows instead of one vectorised pass per node. The rule is the split's own: ``x[feature] > threshold``
goes right, so a NaN goes left, as ``ThresholdSplit.route`` sends it. Trees with other split kinds keep
the vectorised node-by-node routing of :class:`~treebook.tree.structure.Tree`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["apply_thresholds", "threshold_paths"]


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
