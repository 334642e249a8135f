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

from .grow import FEATURE_THRESHOLD, Candidate, Splitter, grow
from .splits import ThresholdSplit
from .structure import Tree

__all__ = ["MAX_TERMS", "PresortedSplitter", "grow_presorted", "mse_leaf_value", "mse_node_impurity", "presorted_supports"]

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


def mse_leaf_value(y):
    """The mean target of a node, (n, q) -> (q,): numpy's ``y.mean(axis=0)`` to the last bit (its sum divided
    by the count) without its per-call bookkeeping."""
    return y.sum(axis=0) / y.shape[0]


def mse_node_impurity(y) -> float:
    """Squared-error impurity of a node in scikit-learn's order of operations: ``sum_k sum_i y_ik^2 / n -
    sum_k (sum_i y_ik / n)^2``, divided by the number of outputs. With one output this is, to the last
    bit, :func:`~treebook.tree.criteria.node_impurity_mse`; with several it is scikit-learn's value, not
    the mean of the per-output impurities (which differs in the last bits), so that cost-complexity
    alphas of multi-output trees match scikit-learn's exactly when the target sums are exact."""
    y = y.reshape(len(y), -1)
    n = y.shape[0]
    if n == 0:
        return 0.0
    sq = (y * y).sum(axis=0)
    s = y.sum(axis=0)
    imp = float(sq.sum()) / n
    for k in range(y.shape[1]):
        mean = float(s[k]) / n
        imp -= mean * mean  # scikit-learn's compiled ``mean ** 2.0`` is this product, not libm's pow
    return imp / y.shape[1]


@njit(cache=True)
def _block_sum(S, idx, lo, n, square):
    # numpy's pairwise sum of n <= 128 terms: a plain loop below 8 terms, else eight accumulators
    if n < 8:
        res = 0.0
        for j in range(lo, lo + n):
            v = S[idx[j], 0]
            res += v * v if square else v
        return res
    r = np.empty(8)
    for u in range(8):
        v = S[idx[lo + u], 0]
        r[u] = v * v if square else v
    i = 8
    lim = n - n % 8
    while i < lim:
        for u in range(8):
            v = S[idx[lo + i + u], 0]
            r[u] += v * v if square else v
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        v = S[idx[lo + i], 0]
        res += v * v if square else v
        i += 1
    return res


@njit(cache=True)
def _pairwise_sum(S, idx, n, square):
    """numpy's pairwise sum of ``S[idx[:n], 0]`` (or of its squares): blocks of at most 128 terms, a longer
    range summed as its two halves (the first a multiple of 8 long) added together. The recursion runs on
    an explicit stack (numba's on-disk cache does not keep recursive functions)."""
    lo_s = np.empty(64, dtype=np.int64)
    n_s = np.empty(64, dtype=np.int64)
    state = np.empty(64, dtype=np.int64)
    vals = np.empty(64)
    top = 0
    nv = 0
    lo_s[0], n_s[0], state[0] = 0, n, 0
    top = 1
    while top > 0:
        t = top - 1
        lo, m = lo_s[t], n_s[t]
        if m <= 128:
            vals[nv] = _block_sum(S, idx, lo, m, square)
            nv += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if state[t] == 0:  # the first half
            state[t] = 1
            lo_s[top], n_s[top], state[top] = lo, half, 0
            top += 1
        elif state[t] == 1:  # the second half
            state[t] = 2
            lo_s[top], n_s[top], state[top] = lo + half, m - half, 0
            top += 1
        else:  # both halves summed: add them
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
            top -= 1
    return vals[0]


@njit(cache=True)
def _mse_node(S, idx):
    """:func:`mse_leaf_value` and :func:`mse_node_impurity` of the one-output node ``S[idx]``, bit for bit,
    without copying its targets (numpy's sums start from 0.0, then add the pairwise sum)."""
    m = idx.size
    s = 0.0 + _pairwise_sum(S, idx, m, False)
    sq = 0.0 + _pairwise_sum(S, idx, m, True)
    mean = s / m
    return mean, sq / m - mean * mean


@njit(cache=True)
def _before(keys, rows, a, b):
    # the order of a stable sort: by key, then by row number
    return keys[a] < keys[b] or (keys[a] == keys[b] and rows[a] < rows[b])


@njit(cache=True)
def _swap(keys, rows, a, b):
    keys[a], keys[b] = keys[b], keys[a]
    rows[a], rows[b] = rows[b], rows[a]


@njit(cache=True)
def _sift_down(keys, rows, lo, root, size):
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and _before(keys, rows, lo + child, lo + child + 1):
            child += 1
        if not _before(keys, rows, lo + root, lo + child):
            return
        _swap(keys, rows, lo + root, lo + child)
        root = child


@njit(cache=True)
def _fill_row_numbers(out):
    for i in range(out.size):
        out[i] = i


@njit(cache=True)
def _argsort_stable(X, f, keys, out):
    """``out[:] = np.argsort(X[:, f], kind="stable")`` for finite values, using ``keys`` (n float64) as the
    only scratch: the (value, row) pairs are distinct, so any correct sort of them by value then row is the
    stable order. Introsort: quicksort (median of three, Hoare partition) on the pairs, heapsort for a
    segment past ``2 log2 n`` levels, insertion sort below 16 pairs."""
    n = X.shape[0]
    for i in range(n):
        keys[i] = X[i, f]
        out[i] = i
    if n < 2:
        return
    limit = 2 * int(np.log2(n)) + 2
    stack = np.empty((128, 3), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n - 1, 0
    top = 1
    while top > 0:
        top -= 1
        lo, hi, level = stack[top, 0], stack[top, 1], stack[top, 2]
        while hi - lo >= 16:
            if level > limit:  # heapsort [lo, hi]
                size = hi - lo + 1
                for root in range(size // 2 - 1, -1, -1):
                    _sift_down(keys, out, lo, root, size)
                for end in range(size - 1, 0, -1):
                    _swap(keys, out, lo, lo + end)
                    _sift_down(keys, out, lo, 0, end)
                hi = lo
                break
            level += 1
            mid = (lo + hi) // 2
            if _before(keys, out, mid, lo):
                _swap(keys, out, mid, lo)
            if _before(keys, out, hi, mid):
                _swap(keys, out, hi, mid)
                if _before(keys, out, mid, lo):
                    _swap(keys, out, mid, lo)
            pk, pr = keys[mid], out[mid]
            i, j = lo - 1, hi + 1
            while True:
                i += 1
                while keys[i] < pk or (keys[i] == pk and out[i] < pr):
                    i += 1
                j -= 1
                while keys[j] > pk or (keys[j] == pk and out[j] > pr):
                    j -= 1
                if i >= j:
                    break
                _swap(keys, out, i, j)
            # [lo, j] and [j + 1, hi]: push the larger, go on with the smaller (the stack stays log n deep)
            if j - lo > hi - j - 1:
                stack[top, 0], stack[top, 1], stack[top, 2] = lo, j, level
                lo = j + 1
            else:
                stack[top, 0], stack[top, 1], stack[top, 2] = j + 1, hi, level
                hi = j
            top += 1
        for i in range(lo + 1, hi + 1):  # insertion sort of the short segment
            k, r = keys[i], out[i]
            j = i - 1
            while j >= lo and (keys[j] > k or (keys[j] == k and out[j] > r)):
                keys[j + 1] = keys[j]
                out[j + 1] = out[j]
                j -= 1
            keys[j + 1] = k
            out[j + 1] = r


def presorted_supports(criterion: str, n_terms: int) -> bool:
    """Whether :func:`grow_presorted` grows the tree of ``criterion`` with ``n_terms`` classes or outputs."""
    return criterion in ("gini", "mse") and 1 <= n_terms <= MAX_TERMS


class PresortedSplitter(Splitter):
    """The CART threshold search on features sorted once at the root (the module's docstring).

    ``stats``: one-hot classes (n, k) for ``"gini"``, targets (n, q) for ``"mse"``; ``X`` finite. A handle
    is a node's segment ``(start, end)`` of the index array; :meth:`children` partitions it stably.
    """

    def __init__(self, X, stats, criterion: str, leaf_value, node_impurity):
        X = np.ascontiguousarray(X, dtype=np.float64)  # no copy of a C-ordered float matrix
        n_total, p = X.shape
        stats = np.asarray(stats, dtype=np.float64)
        if criterion == "mse":
            S = stats.reshape(n_total, -1)
            self.crit = _MSE
        elif criterion == "gini":
            S = stats
            self.crit = _GINI
        else:
            raise ValueError(f"the presorted growth serves 'gini' and 'mse'; got {criterion!r}")
        self.X, self.stats, self.S = X, stats, np.ascontiguousarray(S)
        self.n_samples, self.n_features = n_total, p
        self.leaf_value, self.node_impurity = leaf_value, node_impurity
        # rows 0..p-1: the features' orders; p: row numbers; p + 1: the partition's buffer. While the
        # features are sorted, rows p and p + 1 (adjacent, 8 bytes per sample with 4-byte indices) hold the keys.
        index = np.int32 if n_total < 2**31 - 1 else np.int64
        block = np.empty((p + 2, n_total), dtype=index)
        self.order, self.buf = block[:p + 1], block[p + 1]
        if index is np.int32:
            keys = block[p:].reshape(-1).view(np.float64)
            for f in range(p):
                _argsort_stable(X, f, keys, self.order[f])
        else:
            for f in range(p):
                self.order[f] = np.argsort(X[:, f], kind="stable")
        _fill_row_numbers(self.order[p])  # in place: no temporary n-long range
        self.goes_right = np.zeros(n_total, dtype=np.bool_)
        self.compiled_mse = self.crit == _MSE and self.S.shape[1] == 1 and leaf_value is mse_leaf_value \
            and node_impurity is mse_node_impurity
        self._n_right = 0

    def root(self):
        return 0, self.n_samples

    def node(self, handle):
        start, end = handle
        idx = self.order[self.n_features, start:end]
        n = end - start
        if self.compiled_mse:
            mean, imp = _mse_node(self.S, idx)
            return np.array([mean]), n, imp
        # the root's rows are all rows in order: the statistics themselves, not a copy (same values)
        stats = self.stats
        y_node = stats if (n == self.n_samples and stats.flags.c_contiguous) else stats[idx]
        return self.leaf_value(y_node), n, float(self.node_impurity(y_node))

    def find(self, handle, features, min_samples_leaf):
        start, end = handle
        X, order = self.X, self.order
        idx = order[self.n_features, start:end]
        total = _node_total(self.S, idx, self.crit)
        f, pos, cost = _best_split(X, order, start, end, self.S, total, np.asarray(features, dtype=np.intp),
                                   int(min_samples_leaf), self.crit, FEATURE_THRESHOLD)
        if f < 0:
            return None
        lo = X[order[f, start + pos], f]
        hi = X[order[f, start + pos + 1], f]
        thr = lo / 2.0 + hi / 2.0
        if thr == hi or not np.isfinite(thr):
            thr = lo
        thr = float(thr)
        n_right = int(_route_right(X, idx, f, thr, self.goes_right))
        if n_right == 0 or n_right == end - start:
            return None
        self._n_right = n_right  # the routing of this node, in goes_right, for children()
        return Candidate(ThresholdSplit(int(f), thr), float(cost), self.goes_right)

    def children(self, handle, cand):
        start, end = handle
        _partition(self.order, start, end, self.goes_right, self.buf)
        n_left = end - start - self._n_right
        return (start, start + n_left), (start + n_left, end)


def grow_presorted(X, stats, *, criterion: str, leaf_value, node_impurity, **growth) -> Tree:
    """:func:`~treebook.tree.grow.grow` with a :class:`PresortedSplitter`: the tree of
    :func:`~treebook.tree.grow.grow_tree` with the CART threshold search, grown on presorted features.
    ``growth`` are the keyword arguments of :func:`~treebook.tree.grow.grow`."""
    return grow(PresortedSplitter(X, stats, criterion, leaf_value, node_impurity), **growth)
