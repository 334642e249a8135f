"""Candidate breakpoints and per-interval class counts (Literati, Sec. 3.2).

A data state ``(D_s, d)`` proposes, for every feature ``j``, a sorted set ``U_s^(j)`` of breakpoints.
Two modes are provided:

* ``"all"``: every midpoint between consecutive distinct values of ``x_j`` on ``D_s`` (the space searched
  by exact continuous-feature methods such as ConTree);
* ``"cart"``: the thresholds used by a local CART tree with at most ``B_d`` leaves fitted on ``D_s``
  (the adaptive discretisation of DPDT and Literati; at most ``B_d - 1`` candidates over all features).

A breakpoint ``u`` sends a value ``x`` to the piece ``x <= u`` or ``x > u``; candidate thresholds always lie
strictly between two observed values, so every piece between consecutive candidates is non-empty.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.tree import DecisionTreeClassifier

__all__ = [
    "all_candidates",
    "best_shape_1d",
    "cart_candidates",
    "errors_of_counts",
    "interval_counts",
    "midpoints",
]


def midpoints(x: np.ndarray) -> np.ndarray:
    """Midpoints between consecutive distinct values of ``x`` (sorted, possibly empty)."""
    u = np.unique(x)
    return (u[:-1] + u[1:]) * 0.5


def all_candidates(X: np.ndarray) -> list[np.ndarray]:
    """``"all"`` mode: every midpoint of every feature of ``X`` (rows = the state's samples)."""
    return [midpoints(X[:, j]) for j in range(X.shape[1])]


def _snap(x: np.ndarray, thr: np.ndarray) -> np.ndarray:
    """Move thresholds to the midpoint of the two distinct values of ``x`` around them (float64-exact)."""
    u = np.unique(x)
    if u.size < 2 or thr.size == 0:
        return np.empty(0)
    k = np.clip(np.searchsorted(u, thr, side="right"), 1, u.size - 1)
    return np.unique((u[k - 1] + u[k]) * 0.5)


def cart_candidates(X: np.ndarray, y: np.ndarray, max_leaves: int, random_state=0) -> list[np.ndarray]:
    """``"cart"`` mode: thresholds of a local CART with at most ``max_leaves`` leaves, per feature.

    ``y`` holds integer class codes.  The thresholds are snapped to exact float64 midpoints of the state's
    values so that routing agrees with the exhaustive enumeration over the same candidates.
    """
    p = X.shape[1]
    if max_leaves < 2 or X.shape[0] < 2 or np.all(y == y[0]):
        return [np.empty(0) for _ in range(p)]
    clf = DecisionTreeClassifier(max_leaf_nodes=int(max_leaves), random_state=random_state)
    clf.fit(X, y)
    t = clf.tree_
    internal = t.children_left >= 0
    out = []
    for j in range(p):
        thr = t.threshold[internal & (t.feature == j)]
        out.append(_snap(X[:, j], thr))
    return out


def interval_counts(x: np.ndarray, y: np.ndarray, t: np.ndarray, n_classes: int) -> np.ndarray:
    """Class counts of the ``len(t) + 1`` pieces ``(-inf, t0], (t0, t1], ..., (t_last, inf)``."""
    pos = np.searchsorted(t, x, side="left")
    m1 = t.size + 1
    return np.bincount(pos * n_classes + y, minlength=m1 * n_classes).reshape(m1, n_classes)


def errors_of_counts(counts: np.ndarray) -> np.ndarray:
    """Err = n - max_c n_c (misclassifications of a majority leaf), over leading axes."""
    return counts.sum(axis=-1) - counts.max(axis=-1)


@njit(cache=True)
def _dp_pair(cnt, tot, a, b, K, alpha, choice, want_choice):
    # f[s, k]: best cost of the pieces so far, current piece on side s (0 = left labelled a,
    # 1 = right labelled b), k breakpoints used.  Sides alternate at each breakpoint; first piece left.
    M = cnt.shape[0]
    INF = 1e300
    f = np.full((2, K + 1), INF)
    g = np.full((2, K + 1), INF)
    f[0, 0] = tot[0] - cnt[0, a]
    for q in range(1, M):
        cl = tot[q] - cnt[q, a]
        cr = tot[q] - cnt[q, b]
        for k in range(K + 1):
            # stay on the same side
            g[0, k] = f[0, k] + cl
            g[1, k] = f[1, k] + cr
            if want_choice:
                choice[q, 0, k] = 0
                choice[q, 1, k] = 0
            if k > 0:
                v = f[1, k - 1] + cl
                if v < g[0, k]:
                    g[0, k] = v
                    if want_choice:
                        choice[q, 0, k] = 1
                v = f[0, k - 1] + cr
                if v < g[1, k]:
                    g[1, k] = v
                    if want_choice:
                        choice[q, 1, k] = 1
        for s in range(2):
            for k in range(K + 1):
                f[s, k] = g[s, k]
    best = INF
    bs = 0
    bk = 0
    for s in range(2):
        for k in range(1, K + 1):
            v = f[s, k] + alpha * k
            if v < best:
                best = v
                bs = s
                bk = k
    return best, bs, bk


@njit(cache=True)
def _best_threshold_1d(cnt, alpha):
    M, C = cnt.shape
    tot = np.zeros(C, dtype=np.int64)
    for q in range(M):
        for c in range(C):
            tot[c] += cnt[q, c]
    n = tot.sum()
    left = np.zeros(C, dtype=np.int64)
    best = 1e300
    bq = -1
    nl = 0
    for q in range(M - 1):
        for c in range(C):
            left[c] += cnt[q, c]
            nl += cnt[q, c]
        ml = 0
        mr = 0
        for c in range(C):
            if left[c] > ml:
                ml = left[c]
            if tot[c] - left[c] > mr:
                mr = tot[c] - left[c]
        v = (nl - ml) + (n - nl - mr) + alpha
        if v < best:
            best = v
            bq = q
    mask = np.zeros(max(M - 1, 0), dtype=np.bool_)
    if bq >= 0:
        mask[bq] = True
    return best, mask


@njit(cache=True)
def _best_shape_1d(cnt, K, alpha):
    M, C = cnt.shape
    if K == 1:
        return _best_threshold_1d(cnt, alpha)
    tot = cnt.sum(axis=1).astype(np.float64)
    cntf = cnt.astype(np.float64)
    dummy = np.zeros((1, 2, 1), dtype=np.int8)
    best = 1e300
    ba = -1
    bb = -1
    for a in range(C):
        for b in range(C):
            v, s, k = _dp_pair(cntf, tot, a, b, K, alpha, dummy, False)
            if v < best:
                best = v
                ba = a
                bb = b
    mask = np.zeros(max(M - 1, 0), dtype=np.bool_)
    if ba < 0:
        return best, mask
    choice = np.zeros((M, 2, K + 1), dtype=np.int8)
    v, s, k = _dp_pair(cntf, tot, ba, bb, K, alpha, choice, True)
    q = M - 1
    while q > 0:
        if choice[q, s, k] == 1:
            mask[q - 1] = True
            s = 1 - s
            k -= 1
        q -= 1
    return best, mask


def best_shape_1d(counts: np.ndarray, max_breakpoints: int, alpha: float) -> tuple[float, np.ndarray]:
    """Exact best one-node shape split on one feature (a depth-1 subproblem), by dynamic programming.

    ``counts`` is the ``(m + 1) x C`` table of class counts of the pieces between ``m`` candidates.
    Minimises ``Err(D_L) + Err(D_R) + alpha * k`` over shape functions with ``1 <= k <= max_breakpoints``
    breakpoints among the candidates.  For fixed leaf labels ``(a, b)`` the loss is a sum over pieces, so a
    left-to-right DP over pieces with state (side, breakpoints used) is exact; the labels are minimised
    outside.  Returns ``(loss, mask)`` where ``mask[i]`` says candidate ``i`` is a breakpoint
    (``loss = inf`` when there is no candidate or a single class).
    """
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    if counts.shape[0] < 2 or counts.shape[1] < 2:
        return np.inf, np.zeros(max(counts.shape[0] - 1, 0), dtype=bool)
    v, mask = _best_shape_1d(counts, int(max_breakpoints), float(alpha))
    return (np.inf if v >= 1e299 else float(v)), mask


@njit(cache=True)
def _greedy_rec(X, y, perm, start, end, C, depth, split_cost):
    n = end - start
    counts = np.zeros(C, dtype=np.int64)
    for r in range(start, end):
        counts[y[perm[r]]] += 1
    leaf = n - counts.max()
    if depth == 0 or leaf == 0 or n < 2 or leaf <= split_cost:
        return float(leaf)
    p = X.shape[1]
    best_score = 1e300
    best_j = -1
    best_thr = 0.0
    left = np.zeros(C, dtype=np.int64)
    vals = np.empty(n)
    for j in range(p):
        for r in range(n):
            vals[r] = X[perm[start + r], j]
        order = np.argsort(vals, kind="mergesort")
        left[:] = 0
        for q in range(n - 1):
            c = y[perm[start + order[q]]]
            left[c] += 1
            v0 = vals[order[q]]
            v1 = vals[order[q + 1]]
            if v1 <= v0:
                continue
            nl = q + 1
            nr = n - nl
            sl = 0.0
            sr = 0.0
            for k in range(C):
                sl += left[k] * left[k]
                rk = counts[k] - left[k]
                sr += rk * rk
            score = (nl - sl / nl) + (nr - sr / nr)
            if score < best_score - 1e-12:
                best_score = score
                best_j = j
                best_thr = 0.5 * (v0 + v1)
    if best_j < 0:
        return float(leaf)
    # stable partition of perm[start:end]: left part first
    tmp = perm[start:end].copy()
    w = start
    for r in range(n):
        if X[tmp[r], best_j] <= best_thr:
            perm[w] = tmp[r]
            w += 1
    mid = w
    for r in range(n):
        if X[tmp[r], best_j] > best_thr:
            perm[w] = tmp[r]
            w += 1
    sub = split_cost + _greedy_rec(X, y, perm, start, mid, C, depth - 1, split_cost) \
        + _greedy_rec(X, y, perm, mid, end, C, depth - 1, split_cost)
    return min(float(leaf), sub)


def greedy_lookahead_loss(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int, split_cost: float) -> float:
    """Regularised loss of a greedy (Gini) CART of depth ``depth``, pruned bottom-up (Literati's V~).

    Every internal node costs ``split_cost``; a subtree is replaced by a leaf when that is cheaper, so the
    value is the loss of a feasible threshold tree and an upper bound of the state's optimal value.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    perm = np.arange(X.shape[0], dtype=np.int64)
    return float(_greedy_rec(X, y, perm, 0, X.shape[0], int(n_classes), int(depth), float(split_cost)))


@njit(cache=True)
def _best_sorted_feature(xs, ys, C, K, alpha):
    """Best shape function of one feature from its sorted values ``xs`` and their labels ``ys``:
    ``(loss, breakpoints)``, loss ``1e300`` when the feature has fewer than two distinct values."""
    m = xs.size
    M = 1
    for q in range(1, m):
        if xs[q] > xs[q - 1]:
            M += 1
    if M < 2:
        return 1e300, np.empty(0)
    cnt = np.zeros((M, C), dtype=np.int64)
    uniq = np.empty(M)
    g = 0
    uniq[0] = xs[0]
    cnt[0, ys[0]] += 1
    for q in range(1, m):
        if xs[q] > xs[q - 1]:
            g += 1
            uniq[g] = xs[q]
        cnt[g, ys[q]] += 1
    v, mask = _best_shape_1d(cnt, K, alpha)
    nb = 0
    for q in range(M - 1):
        if mask[q]:
            nb += 1
    thr = np.empty(nb)
    nb = 0
    for q in range(M - 1):
        if mask[q]:
            thr[nb] = 0.5 * (uniq[q] + uniq[q + 1])
            nb += 1
    return v, thr


@njit(cache=True)
def _depth1_all(X, y, C, K, alpha):
    n, p = X.shape
    best = 1e300
    best_j = -1
    best_thr = np.empty(0)
    for j in range(p):
        vals = X[:, j].copy()
        order = np.argsort(vals, kind="mergesort")
        v, thr = _best_sorted_feature(vals[order], y[order], C, K, alpha)
        if v < best:
            best, best_j, best_thr = v, j, thr
    return best, best_j, best_thr


def best_depth1_all(X: np.ndarray, y: np.ndarray, n_classes: int, max_breakpoints: int, alpha: float):
    """Exact best single shape split over all features with every midpoint as candidate.

    Returns ``(loss, feature, breakpoints)`` minimising ``Err(D_L) + Err(D_R) + alpha * k``
    (``loss = inf`` and ``feature = -1`` when no feature has two distinct values).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    v, j, thr = _depth1_all(X, y, int(n_classes), int(max_breakpoints), float(alpha))
    return (np.inf if v >= 1e299 else float(v)), int(j), thr


@njit(cache=True)
def _depth1_presorted(Xo, yo, orders, keep, C, K, alpha):
    n, p = Xo.shape
    best = 1e300
    best_j = -1
    best_thr = np.empty(0)
    m = 0
    for r in range(n):
        if keep[r]:
            m += 1
    if m < 2:
        return best, best_j, best_thr
    sel = np.empty(m, dtype=np.int64)
    xs = np.empty(m)
    for j in range(p):
        w = 0
        for q in range(n):
            r = orders[j, q]
            if keep[r]:
                sel[w] = r
                xs[w] = Xo[r, j]
                w += 1
        v, thr = _best_sorted_feature(xs, yo[sel], C, K, alpha)
        if v < best:
            best, best_j, best_thr = v, j, thr
    return best, best_j, best_thr


def best_depth1_presorted(Xo, yo, orders, keep, n_classes, max_breakpoints, alpha):
    """:func:`best_depth1_all` on the rows ``keep`` of ``Xo``, given the per-feature sort ``orders`` of ``Xo``.

    Filtering a parent's sorted orders costs O(n p) instead of sorting the child's data again.
    """
    v, j, thr = _depth1_presorted(Xo, yo, orders, np.ascontiguousarray(keep, dtype=np.bool_), int(n_classes),
                                  int(max_breakpoints), float(alpha))
    return (np.inf if v >= 1e299 else float(v)), int(j), thr
