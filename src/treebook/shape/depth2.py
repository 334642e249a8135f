"""Exact optimal depth-2 threshold trees (``K = 1``, every midpoint a candidate), with similarity bounds.

The regularised optimum ``OPT(S)`` of a depth-limited threshold tree on a sample set ``S`` (errors plus
``cost`` per internal node) is *monotone* and *1-Lipschitz* in ``S``: adding one sample never lowers it and
raises it by at most one (the old tree misclassifies at most the new sample; any tree for the larger set,
restricted to the smaller, is a tree for it).  Hence for the root thresholds of one feature, taken in
order, the left child's optimum ``L(i)`` is non-decreasing, the right child's ``R(i)`` non-increasing, and
for two thresholds whose left parts differ by ``delta`` samples the values differ by at most ``delta``.
Between two evaluated thresholds ``a < b`` every threshold ``i`` then satisfies

    L(i) >= max(L(a), L(b) - (n_b - n_i)),      R(i) >= max(R(b), R(a) - (n_i - n_a)),

a convex lower bound whose minimum over the gap is found in O(1).  A gap whose bound reaches the best
tree found is skipped; otherwise its middle threshold is evaluated (the *similarity* bounds of ConTree,
Brita, van der Linden and Demirović, 2025).  Each evaluation solves the two depth-1 children of a root
threshold on every feature in one pass over the presorted data, O(n p C).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["best_depth2_all", "depth2_gap_bound", "sub_orders"]

BIG = 1e300


@njit(cache=True)
def _d1_sides(X, y, C, orders, side, cost, res):
    """Optimal depth-1 trees of side 0 and side 1 of ``side`` at once.

    ``res[s] = (value, feature, threshold)``: value = min(leaf errors, cost + best split errors); feature
    -1 when the leaf is best.
    """
    p, m = orders.shape
    tot = np.zeros((2, C), dtype=np.int64)
    ns = np.zeros(2, dtype=np.int64)
    for r in range(m):
        tot[side[r], y[r]] += 1
        ns[side[r]] += 1
    for s in range(2):
        mx = 0
        for c in range(C):
            mx = max(mx, tot[s, c])
        res[s, 0] = ns[s] - mx
        res[s, 1] = -1.0
        res[s, 2] = 0.0
    run = np.zeros((2, C), dtype=np.int64)
    seen = np.zeros(2, dtype=np.int64)
    last = np.zeros(2)
    for f in range(p):
        run[:] = 0
        seen[:] = 0
        for q in range(m):
            r = orders[f, q]
            s = side[r]
            v = X[r, f]
            if seen[s] > 0 and v > last[s]:
                ml = 0
                mr = 0
                for c in range(C):
                    ml = max(ml, run[s, c])
                    mr = max(mr, tot[s, c] - run[s, c])
                err = cost + (seen[s] - ml) + (ns[s] - seen[s] - mr)
                if err < res[s, 0] - 1e-9:
                    res[s, 0] = err
                    res[s, 1] = f
                    res[s, 2] = 0.5 * (last[s] + v)
            run[s, y[r]] += 1
            seen[s] += 1
            last[s] = v
    return res


@njit(cache=True)
def _gap_bound(a, b, La, Ra, Lb, Rb):
    """min over integer i in (a, b) of max(La, Lb - (b - i)) + max(Rb, Ra - (i - a)) (convex in i)."""
    best = BIG
    k1 = b - (Lb - La)
    k2 = a + (Ra - Rb)
    for cand in (a + 1.0, b - 1.0, np.floor(k1), np.ceil(k1), np.floor(k2), np.ceil(k2)):
        i = min(max(cand, a + 1.0), b - 1.0)
        g = max(La, Lb - (b - i)) + max(Rb, Ra - (i - a))
        best = min(best, g)
    return best


def depth2_gap_bound(a, b, La, Ra, Lb, Rb) -> float:
    """Lower bound of ``L(i) + R(i)`` over the thresholds strictly between evaluated ones ``a < b`` (left
    sizes), from monotonicity and the 1-Lipschitz property (see the module docstring)."""
    return float(_gap_bound(float(a), float(b), float(La), float(Ra), float(Lb), float(Rb)))


@njit(cache=True)
def _split_at(X, y, C, orders, o, b, side, cost, res):
    """Optimal depth-1 children ``(L, R)`` of the root threshold leaving the first ``b`` samples of order ``o``
    on the left."""
    for q in range(o.size):
        side[o[q]] = 0 if q < b else 1
    _d1_sides(X, y, C, orders, side, cost, res)
    return res[0, 0], res[1, 0]


@njit(cache=True)
def _depth2(X, y, C, orders, cost, ub):
    p, m = orders.shape
    cnt = np.zeros(C, dtype=np.int64)
    for r in range(m):
        cnt[y[r]] += 1
    best = float(m - cnt.max())
    best = min(best, ub)
    bf = -1
    bb = -1
    side = np.zeros(m, dtype=np.int64)
    res = np.zeros((2, 3))
    n_eval = 0
    B = np.empty(m, dtype=np.int64)
    Lv = np.empty(m)
    Rv = np.empty(m)
    stack = np.empty((2 * m + 4, 2), dtype=np.int64)
    for f1 in range(p):
        o = orders[f1]
        nb = 0
        for q in range(1, m):
            if X[o[q], f1] > X[o[q - 1], f1]:
                B[nb] = q
                nb += 1
        if nb == 0:
            continue
        # evaluate the two extreme thresholds, then bisect the gaps whose similarity bound is below best
        for k in (0, nb - 1):
            Lv[k], Rv[k] = _split_at(X, y, C, orders, o, B[k], side, cost, res)
            n_eval += 1
            if cost + Lv[k] + Rv[k] < best - 1e-9:
                best, bf, bb = cost + Lv[k] + Rv[k], f1, B[k]
        top = 0
        if nb > 2:
            stack[0, 0] = 0
            stack[0, 1] = nb - 1
            top = 1
        while top > 0:
            top -= 1
            ka = stack[top, 0]
            kb = stack[top, 1]
            if kb - ka < 2:
                continue
            lb = cost + _gap_bound(float(B[ka]), float(B[kb]), Lv[ka], Rv[ka], Lv[kb], Rv[kb])
            if lb >= best - 1e-9:
                continue
            k = (ka + kb) // 2
            Lv[k], Rv[k] = _split_at(X, y, C, orders, o, B[k], side, cost, res)
            n_eval += 1
            if cost + Lv[k] + Rv[k] < best - 1e-9:
                best, bf, bb = cost + Lv[k] + Rv[k], f1, B[k]
            # the gap next to the smaller child sum first (pushed last)
            lo = cost + _gap_bound(float(B[ka]), float(B[k]), Lv[ka], Rv[ka], Lv[k], Rv[k])
            hi = cost + _gap_bound(float(B[k]), float(B[kb]), Lv[k], Rv[k], Lv[kb], Rv[kb])
            if lo <= hi:
                stack[top, 0], stack[top, 1] = k, kb
                stack[top + 1, 0], stack[top + 1, 1] = ka, k
            else:
                stack[top, 0], stack[top, 1] = ka, k
                stack[top + 1, 0], stack[top + 1, 1] = k, kb
            top += 2
    out = np.full(7, -1.0)
    out[0] = best
    out[6] = n_eval
    if bf >= 0:
        o = orders[bf]
        _split_at(X, y, C, orders, o, bb, side, cost, res)
        out[1] = bf
        out[2] = 0.5 * (X[o[bb - 1], bf] + X[o[bb], bf])
        out[3] = res[0, 1]
        out[4] = res[0, 2]
        out[5] = res[1, 1]
        return out, res[1, 2]
    return out, 0.0


@njit(cache=True)
def _sub_orders(orders, keep):
    p, m = orders.shape
    new = np.empty(m, dtype=np.int64)
    k = 0
    for r in range(m):
        if keep[r]:
            new[r] = k
            k += 1
        else:
            new[r] = -1
    out = np.empty((p, k), dtype=np.int64)
    for f in range(p):
        q2 = 0
        for q in range(m):
            r = orders[f, q]
            if keep[r]:
                out[f, q2] = new[r]
                q2 += 1
    return out


def sub_orders(orders: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per-feature sort orders of the rows ``keep`` (relabelled ``0..k-1``), from those of the parent."""
    return _sub_orders(np.ascontiguousarray(orders, dtype=np.int64), np.ascontiguousarray(keep, dtype=np.bool_))


def best_depth2_all(X, y, n_classes, cost=0.0, orders=None, upper_bound=np.inf):
    """Optimal depth-<=2 threshold tree over every midpoint: ``min Err + cost * (internal nodes)``.

    Returns ``(value, tree, n_evaluated)``; ``tree`` is ``None`` (a leaf is optimal) or
    ``(feature, threshold, left, right)`` with ``left``/``right`` either ``None`` (leaf) or
    ``(feature, threshold)``.  ``orders`` (``p x n`` per-feature argsort of ``X``) may be given to skip
    sorting.  With a finite ``upper_bound`` the search only looks for trees better than it: if none exists
    the value returned is ``upper_bound`` and the tree ``None``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    if orders is None:
        orders = np.argsort(X, axis=0, kind="stable").T
    orders = np.ascontiguousarray(orders, dtype=np.int64)
    out, tR = _depth2(X, y, int(n_classes), orders, float(cost), float(upper_bound))
    value, n_eval = float(out[0]), int(out[6])
    if out[1] < 0:
        return value, None, n_eval
    left = None if out[3] < 0 else (int(out[3]), float(out[4]))
    right = None if out[5] < 0 else (int(out[5]), float(tR))
    return value, (int(out[1]), float(out[2]), left, right), n_eval
