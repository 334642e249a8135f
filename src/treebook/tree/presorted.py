"""CART growth on presorted features: the same trees as :func:`~treebook.tree.grow.grow_tree` with
:func:`~treebook.tree.grow.best_threshold_split`, to the last bit, in O(n p) per tree level.

Every feature is sorted once, at the root (a stable sort, so equal values keep the order of their row
numbers). A node owns one segment of a ``(p + 1, n)`` index array: row ``f`` lists the node's samples in
the order of feature ``f`` and row ``p`` lists them by row number. A split partitions every row of the
segment stably into left and right, so each child's segment is again sorted by every feature -- the order
that a stable sort of the child's own samples gives (ties broken by row number), with no sort below the
root. At each node a compiled scan walks every feature's order once, accumulating the children's
statistics and evaluating the criterion at every cut point between distinct values.

The scan evaluates the criterion with the operations, in the order, of the vectorised search
(``_children_cost`` in :mod:`treebook.tree.grow`), including numpy's pairwise summation over classes or
outputs, so the costs, the chosen split and its tie-breaking (first feature visited, then the leftmost
cut) are identical; ``tests/test_tree_presorted.py`` checks the two growers tree for tree. It serves the
``"gini"`` and ``"mse"`` criteria with up to :data:`MAX_TERMS` classes or outputs; entropy (numpy's
``log2`` is not the compiled one in the last bits) and wider targets use the vectorised search.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..validation import check_random_state
from .grow import _EPSILON, FEATURE_THRESHOLD
from .splits import ThresholdSplit
from .structure import LEAF, Tree, TreeBuilder

__all__ = ["MAX_TERMS", "grow_presorted", "presorted_supports"]

#: classes (Gini) or outputs (squared error) the compiled scan sums in numpy's order
MAX_TERMS = 128

_GINI, _MSE = 0, 1


@njit(cache=True)
def _np_sum(v, k):
    # numpy's pairwise summation of k <= 128 terms: a plain loop below 8 terms, else eight accumulators
    if k < 8:
        r = 0.0
        for j in range(k):
            r += v[j]
        return r
    r0, r1, r2, r3, r4, r5, r6, r7 = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
    i = 8
    lim = k - k % 8
    while i < lim:
        r0 += v[i]
        r1 += v[i + 1]
        r2 += v[i + 2]
        r3 += v[i + 3]
        r4 += v[i + 4]
        r5 += v[i + 5]
        r6 += v[i + 6]
        r7 += v[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < k:
        res += v[i]
        i += 1
    return res


@njit(cache=True)
def _node_total(S, idx, crit):
    """The node's statistics summed over its samples in row order -- numpy's ``st[idx].sum(axis=0)`` of
    the vectorised search, which adds the rows of an array of two or more columns one after another."""
    if crit == _MSE:
        q = S.shape[1]
        total = np.zeros(2 * q)
        for j in range(idx.size):
            for o in range(q):
                v = S[idx[j], o]
                total[2 * o] += v
                total[2 * o + 1] += v * v
        return total
    k = S.shape[1]
    total = np.zeros(k)
    for j in range(idx.size):
        for c in range(k):
            total[c] += S[idx[j], c]
    return total


@njit(cache=True)
def _best_split(X, order, start, end, S, total, feats, min_samples_leaf, crit, feature_threshold):
    """First (feature, cut) of least children's cost over ``feats``; ``(-1, -1, inf)`` without a valid cut.

    ``S``: one-hot classes (Gini) or targets (squared error, whose squares are formed here)."""
    m = end - start
    k = total.size
    q = k // 2
    left = np.empty(k)
    terms = np.empty(k)
    best_cost = np.inf
    best_f = -1
    best_pos = -1
    for fi in range(feats.size):
        f = feats[fi]
        for c in range(k):
            left[c] = 0.0
        for pos in range(m - 1):
            i = order[f, start + pos]
            if crit == _MSE:
                for o in range(q):
                    v = S[i, o]
                    left[2 * o] += v
                    left[2 * o + 1] += v * v
            else:
                for c in range(k):
                    left[c] += S[i, c]
            if pos < min_samples_leaf - 1 or pos >= m - min_samples_leaf:
                continue
            if not X[order[f, start + pos + 1], f] > X[i, f] + feature_threshold:
                continue
            nl = pos + 1.0
            nr = m - nl
            if crit == _MSE:
                for o in range(q):
                    s_l = left[2 * o]
                    q_l = left[2 * o + 1]
                    s_r = total[2 * o] - s_l
                    q_r = total[2 * o + 1] - q_l
                    terms[o] = (q_l - s_l * s_l / nl) + (q_r - s_r * s_r / nr)
                cost = _np_sum(terms, q) / q
            else:
                for c in range(k):
                    a = left[c] / nl
                    terms[c] = a * a
                gl = 1.0 - _np_sum(terms, k)
                for c in range(k):
                    a = (total[c] - left[c]) / nr
                    terms[c] = a * a
                cost = nl * gl + nr * (1.0 - _np_sum(terms, k))
            if cost < best_cost:
                best_cost = cost
                best_f = f
                best_pos = pos
    return best_f, best_pos, best_cost


@njit(cache=True)
def _route_right(X, idx, f, threshold, goes_right):
    """``goes_right[i] = X[i, f] > threshold`` for the node's samples; the number that go right."""
    n_right = 0
    for j in range(idx.size):
        i = idx[j]
        r = X[i, f] > threshold
        goes_right[i] = r
        n_right += r
    return n_right


@njit(cache=True)
def _partition(order, start, end, goes_right, buf):
    """Stable partition of every row of ``order[:, start:end]``: left samples first, then right ones."""
    for r in range(order.shape[0]):
        n_left = 0
        n_right = 0
        for j in range(start, end):
            i = order[r, j]
            if goes_right[i]:
                buf[n_right] = i
                n_right += 1
            else:
                order[r, start + n_left] = i
                n_left += 1
        for j in range(n_right):
            order[r, start + n_left + j] = buf[j]


def presorted_supports(criterion: str, n_terms: int) -> bool:
    """Whether :func:`grow_presorted` grows the tree of ``criterion`` with ``n_terms`` classes or outputs."""
    return criterion in ("gini", "mse") and 1 <= n_terms <= MAX_TERMS


def grow_presorted(X, stats, *, criterion: str, leaf_value, node_impurity, max_depth=None, min_samples_split=2,
                   min_samples_leaf=1, min_impurity_decrease=0.0, max_features=None, random_state=None) -> Tree:
    """:func:`~treebook.tree.grow.grow_tree` with the CART threshold search, on presorted features.

    ``stats``: one-hot classes (n, k) for ``"gini"``, targets (n, q) for ``"mse"``; ``X`` finite.
    The growth parameters, the node order (depth first, left child first), the stopping rules, the
    per-node feature draw of ``max_features`` and the tree are those of ``grow_tree``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)  # no copy of a C-ordered float matrix
    n_total, p = X.shape
    stats = np.asarray(stats, dtype=np.float64)
    if criterion == "mse":
        S = stats.reshape(n_total, -1)
        crit = _MSE
    elif criterion == "gini":
        S = stats
        crit = _GINI
    else:
        raise ValueError(f"the presorted growth serves 'gini' and 'mse'; got {criterion!r}")
    S = np.ascontiguousarray(S)
    rng = check_random_state(random_state)
    depth_limit = np.inf if max_depth is None else max_depth
    all_features = np.arange(p)
    index = np.int32 if n_total < 2**31 - 1 else np.int64
    order = np.empty((p + 1, n_total), dtype=index)
    for f in range(p):
        order[f] = np.argsort(X[:, f], kind="stable")
    order[p] = np.arange(n_total)
    goes_right = np.zeros(n_total, dtype=np.bool_)
    buf = np.empty(n_total, dtype=index)

    first_value = np.asarray(leaf_value(stats), dtype=float).ravel()
    builder = TreeBuilder(n_outputs=first_value.size)
    stack = [(0, n_total, LEAF, False)]
    while stack:
        start, end, parent, is_right = stack.pop()
        idx = order[p, start:end]
        # the root's rows are all rows in order: the statistics themselves, not a copy (same values, layout)
        y_node = stats if (end - start == n_total and stats.flags.c_contiguous) else stats[idx]
        n = end - start
        imp = float(node_impurity(y_node))
        node = builder.add_node(leaf_value(y_node), n, imp, parent=parent, is_right=is_right)
        depth = builder._depth[node]
        if (depth >= depth_limit or n < min_samples_split or n < 2 * min_samples_leaf or imp <= _EPSILON
                or n < 2):
            continue
        if max_features is None or max_features >= p:
            feats = all_features
        else:
            feats = np.sort(rng.choice(p, size=max_features, replace=False))
        total = _node_total(S, idx, crit)
        f, pos, cost = _best_split(X, order, start, end, S, total, np.asarray(feats, dtype=np.intp),
                                   int(min_samples_leaf), crit, FEATURE_THRESHOLD)
        if f < 0:
            continue
        lo = X[order[f, start + pos], f]
        hi = X[order[f, start + pos + 1], f]
        thr = lo / 2.0 + hi / 2.0
        if thr == hi or not np.isfinite(thr):
            thr = lo
        thr = float(thr)
        n_right = int(_route_right(X, idx, f, thr, goes_right))
        if n_right == 0 or n_right == n:
            continue
        improvement = (imp * n - float(cost)) / n_total
        if improvement + _EPSILON < min_impurity_decrease:
            continue
        builder.set_split(node, ThresholdSplit(int(f), thr))
        _partition(order, start, end, goes_right, buf)
        n_left = n - n_right
        stack.append((start + n_left, end, node, True))
        stack.append((start, start + n_left, node, False))
    return builder.build()
