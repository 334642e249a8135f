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
threshold in passes over the features' presorted rows, O(n) per feature with two classes and O(n + C)
otherwise.  With two classes every feature is scanned in the same pass, one feature per lane of a vector
register (:func:`_binary_scan`).  With more classes the features are scanned one at a time, and since the
same argument holds for a child's best split on one feature, the evaluated neighbours of a threshold also
bound each feature's values there: a feature that cannot beat the best child found so far is not scanned.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["best_depth2_all", "best_depth2_rows", "depth2_gap_bound", "sub_orders"]

BIG = 1e300
#: int32 lanes of a 256-bit vector register: the two-class scan pads the features to a multiple of it
LANES = 8
NEW = 1 << 16  # a row's code: its label, plus NEW where a new value starts
LABEL = NEW - 1


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
def _prep(X, y, orders):
    """Per feature, in sorted order: the labels, whether a new value starts, and each row's position."""
    p, m = orders.shape
    ys = np.empty((p, m), dtype=np.int32)
    brk = np.empty((p, m), dtype=np.bool_)
    pos = np.empty((p, m), dtype=np.int32)
    for f in range(p):
        for q in range(m):
            r = orders[f, q]
            ys[f, q] = y[r]
            brk[f, q] = q > 0 and X[r, f] > X[orders[f, q - 1], f]
            pos[f, r] = q
    return ys, brk, pos


@njit(cache=True)
def _side_value(codes, prefix_max, n, C, leaf, cost, run):
    """Optimal depth-1 value of one side on one feature, from its ``n`` rows in that feature's order:
    ``codes`` holds each row's label plus ``NEW`` where a new value starts, ``prefix_max`` the largest class
    count of the rows before it.  That of the rows from it on only grows backwards, so one backward pass
    gives every threshold's errors ``n - prefix max - suffix max``."""
    best = leaf
    run[:] = 0
    mr = 0
    for i in range(n - 1, 0, -1):
        w = codes[i]
        lab = w & LABEL
        run[lab] += 1
        mr = max(mr, run[lab])
        if w >= NEW:
            best = min(best, cost + n - prefix_max[i] - mr)
    return best


@njit(cache=True)
def _feature_values(ys, brk, R, b, f, C, tot, ns, leaf0, leaf1, cost, run, codes, prefix_max):
    """Optimal depth-1 values of both sides of a root threshold, each side split on feature ``f`` (or a
    leaf).  Rows whose position ``R`` in the root feature's order is below ``b`` go left; ``ys`` and ``brk``
    hold each feature's labels in sorted order and whether a new value starts there.  The rows are split by
    side without branching (a side's new value starts where the full order had one since that side's
    previous row); with two classes both sides are scanned in the same pass."""
    p, m = ys.shape
    N0 = ns[0]
    N1 = ns[1]
    i0 = 0
    i1 = 0
    new0 = 0
    new1 = 0
    if C == 2:
        T0 = tot[0, 1]
        T1 = tot[1, 1]
        a0 = 0
        a1 = 0
        b0 = N0
        b1 = N1
        for q in range(m):
            s = 1 if R[f, q] >= b else 0
            nb = 1 if brk[f, q] else 0
            lab = ys[f, q]
            new0 |= nb
            new1 |= nb
            # errors of the split just before this row, on its side (a0, a1: class-1 rows so far)
            e0 = min(a0, i0 - a0) + min(T0 - a0, N0 - i0 - T0 + a0)
            e1 = min(a1, i1 - a1) + min(T1 - a1, N1 - i1 - T1 + a1)
            b0 = min(b0, e0 if (new0 & (1 - s)) else N0)
            b1 = min(b1, e1 if (new1 & s) else N1)
            a0 += lab & (1 - s)
            a1 += lab & s
            i0 += 1 - s
            i1 += s
            new0 &= s
            new1 &= 1 - s
        return min(leaf0, cost + b0), min(leaf1, cost + b1)
    run[:] = 0
    ml0 = 0
    ml1 = 0
    for q in range(m):
        s = 1 if R[f, q] >= b else 0
        nb = 1 if brk[f, q] else 0
        lab = ys[f, q]
        new0 |= nb
        new1 |= nb
        # both sides' slots are written, only the row's side advances
        codes[0, i0] = lab + NEW * new0
        codes[1, i1] = lab + NEW * new1
        prefix_max[0, i0] = ml0
        prefix_max[1, i1] = ml1
        run[s, lab] += 1
        ml0 = max(ml0, run[0, lab])
        ml1 = max(ml1, run[1, lab])
        i0 += 1 - s
        i1 += s
        new0 &= s
        new1 &= 1 - s
    return (_side_value(codes[0], prefix_max[0], N0, C, leaf0, cost, run[0]),
            _side_value(codes[1], prefix_max[1], N1, C, leaf1, cost, run[1]))


@njit(cache=True, boundscheck=False)
def _binary_scan(P, b, S):
    """Two classes, every feature at once: the least and largest ``g`` of each side of the root threshold
    leaving the rows of root position ``< b`` on the left, per feature (a lane of ``P``'s columns).

    A side's split errors at a position where a new value starts are ``min(T, N - T, T + g, N - T - g)``,
    with ``T`` and ``N`` the side's class-1 rows and rows and ``g`` the rows before the position less twice
    the class-1 rows among them; so the side's best split makes ``min(T + min g, N - T - max g)`` errors.
    ``P[q, f]`` packs the ``q``-th row of feature ``f``'s order: its position in the root feature's order
    (shifted by 2), whether a new value starts there (bit 1) and its label (bit 0).  The lanes are
    independent and the loop over them is branch-free, so it runs in vector registers when their number is a
    multiple of :data:`LANES`.  Writes ``S[0..3]`` = min g left, max g left, min g right, max g right."""
    m, pw = P.shape
    big = np.int32(4 * m + 4)
    bb = np.int32(b)
    g0 = S[4]
    g1 = S[5]
    new0 = S[6]
    new1 = S[7]
    lo0 = S[0]
    hi0 = S[1]
    lo1 = S[2]
    hi1 = S[3]
    for f in range(pw):
        lo0[f] = big
        hi0[f] = -big
        lo1[f] = big
        hi1[f] = -big
        g0[f] = 0
        g1[f] = 0
        new0[f] = 0
        new1[f] = 0
    for q in range(m):
        row = P[q]
        for f in range(pw):
            w = row[f]
            s = np.int32((w >> 2) >= bb)
            nb = (w >> 1) & 1
            n0 = new0[f] | nb
            n1 = new1[f] | nb
            v0 = n0 & (1 - s)  # a split of the left side just before this row
            v1 = n1 & s
            a0 = g0[f]
            a1 = g1[f]
            lo0[f] = min(lo0[f], a0 + (1 - v0) * big)
            hi0[f] = max(hi0[f], a0 - (1 - v0) * big)
            lo1[f] = min(lo1[f], a1 + (1 - v1) * big)
            hi1[f] = max(hi1[f], a1 - (1 - v1) * big)
            d = 1 - 2 * (w & 1)
            g0[f] = a0 + d * (1 - s)
            g1[f] = a1 + d * s
            new0[f] = n0 & s
            new1[f] = n1 & (1 - s)


@njit(cache=True)
def _evaluate_binary(b, P, cum, m, cost, S):
    """Two classes: the optimal depth-1 values ``(L, R)`` of the two sides of the root threshold leaving the
    first ``b`` rows of the root feature's order on the left, every feature scanned (:func:`_binary_scan`)."""
    T0 = cum[b, 1]
    T1 = cum[m, 1] - T0
    N0 = b
    N1 = m - b
    _binary_scan(P, b, S)
    e0 = min(T0, N0 - T0)
    e1 = min(T1, N1 - T1)
    best0 = BIG
    best1 = BIG
    for f in range(P.shape[1]):
        best0 = min(best0, min(T0 + S[0, f], N0 - T0 - S[1, f]))
        best1 = min(best1, min(T1 + S[2, f], N1 - T1 - S[3, f]))
    return min(float(e0), cost + best0), min(float(e1), cost + best1)


@njit(cache=True)
def _evaluate(k, ka, kb, B, ys, brk, R, cum, C, cost, LF, RF, D1, tot, ns, run, codes, prefix_max, lbl, lbr,
              order):
    """Optimal depth-1 values ``(L, R)`` of the two sides of the root threshold ``B[k]``, per feature into
    ``LF[k]``, ``RF[k]``.

    A side's best depth-1 tree on one feature is itself monotone and 1-Lipschitz in the side's samples, so
    between evaluated neighbours ``ka < k < kb`` (``-1`` when none) each feature's values are bounded below
    as the totals are.  A feature whose bounds on both sides reach the best values found so far cannot
    lower them and is not scanned; its bounds are kept in place of its values, which stay valid bounds for
    later neighbours; so are the node's own depth-1 values ``D1`` (each side misses some of its rows).
    Features are scanned in the order of their bounds, most promising first."""
    p, m = ys.shape
    b = B[k]
    for c in range(C):
        tot[0, c] = cum[b, c]
        tot[1, c] = cum[m, c] - cum[b, c]
    ns[0] = b
    ns[1] = m - b
    mx0 = 0
    mx1 = 0
    for c in range(C):
        mx0 = max(mx0, tot[0, c])
        mx1 = max(mx1, tot[1, c])
    leaf0 = float(ns[0] - mx0)
    leaf1 = float(ns[1] - mx1)
    for f in range(p):
        # the whole node's depth-1 value on the feature bounds both sides too (they miss m - b and b rows)
        lo_l = max(0.0, D1[f] - (m - b))
        lo_r = max(0.0, D1[f] - b)
        if ka >= 0:
            lo_l = max(lo_l, LF[ka, f])
            lo_r = max(lo_r, RF[ka, f] - (b - B[ka]))
        if kb >= 0:
            lo_l = max(lo_l, LF[kb, f] - (B[kb] - b))
            lo_r = max(lo_r, RF[kb, f])
        lbl[f] = lo_l
        lbr[f] = lo_r
        # insertion sort of the features by the sum of their bounds
        j = f
        while j > 0 and lbl[order[j - 1]] + lbr[order[j - 1]] > lo_l + lo_r:
            order[j] = order[j - 1]
            j -= 1
        order[j] = f
    cur0 = leaf0
    cur1 = leaf1
    for j in range(p):
        f = order[j]
        if lbl[f] >= cur0 - 1e-9 and lbr[f] >= cur1 - 1e-9:
            LF[k, f] = lbl[f]
            RF[k, f] = lbr[f]
            continue
        v0, v1 = _feature_values(ys, brk, R, b, f, C, tot, ns, leaf0, leaf1, cost, run, codes, prefix_max)
        LF[k, f] = v0
        RF[k, f] = v1
        cur0 = min(cur0, v0)
        cur1 = min(cur1, v1)
    return cur0, cur1


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
    ys, brk, pos = _prep(X, y, orders)
    R = np.zeros((p, m), dtype=np.int32)
    cum = np.zeros((m + 1, C), dtype=np.int64)
    tot = np.zeros((2, C), dtype=np.int64)
    ns = np.zeros(2, dtype=np.int64)
    run = np.zeros((2, C), dtype=np.int64)
    codes = np.empty((2, m + 1), dtype=np.int32)
    prefix_max = np.empty((2, m + 1), dtype=np.int64)
    binary = C == 2
    nk = 1 if binary else m + 2  # the per-feature values of the evaluated thresholds (more than two classes)
    LF = np.empty((nk, p))
    RF = np.empty((nk, p))
    lbl = np.empty(p)
    lbr = np.empty(p)
    order = np.empty(p, dtype=np.int64)
    pw = ((p + LANES - 1) // LANES) * LANES if binary else 0
    P = np.empty((m, pw), dtype=np.int32)  # two classes: every feature's rows, packed (see _binary_scan)
    S = np.empty((8, pw), dtype=np.int32)
    n_eval = 0
    # B[1..nb]: the left sizes of a feature's thresholds; B[0] = 0 and B[nb + 1] = m are the two virtual ends
    # (every row on one side), whose children's optima are known without a scan
    B = np.empty(m + 2, dtype=np.int64)
    Lv = np.empty(m + 2)
    Rv = np.empty(m + 2)
    stack = np.empty((2 * m + 4, 2), dtype=np.int64)
    # the node's own depth-1 value per feature: every row on the left (R = 0 < m)
    D1 = np.empty(p)
    for c in range(C):
        tot[0, c] = cnt[c]
        tot[1, c] = 0
    ns[0] = m
    ns[1] = 0
    for f in range(p):
        D1[f] = _feature_values(ys, brk, R, m, f, C, tot, ns, float(m - cnt.max()), 0.0, cost, run, codes,
                                prefix_max)[0]
    d1 = D1.min()  # the optimum of a depth-1 tree on every row: that of a side holding them all
    for f1 in range(p):
        nb = 0
        for q in range(1, m):
            if brk[f1, q]:
                nb += 1
                B[nb] = q
        if nb == 0:
            continue
        B[0] = 0
        B[nb + 1] = m
        Lv[0], Rv[0] = 0.0, d1
        Lv[nb + 1], Rv[nb + 1] = d1, 0.0
        if binary:  # the lanes beyond the p features repeat features (their values change no minimum)
            for f in range(pw):
                fo = f % p
                for q in range(m):
                    P[q, f] = (pos[f1, orders[fo, q]] << 2) | (2 if brk[fo, q] else 0) | ys[fo, q]
        else:
            for f in range(p):
                for q in range(m):
                    R[f, q] = pos[f1, orders[f, q]]
        for q in range(m):
            for c in range(C):
                cum[q + 1, c] = cum[q, c]
            cum[q + 1, ys[f1, q]] += 1
        # bisect the gaps whose similarity bound is below the best, from the whole range between the virtual
        # ends (their per-feature values are the bounds from D1 that every evaluation applies)
        stack[0, 0] = 0
        stack[0, 1] = nb + 1
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
            if binary:
                Lv[k], Rv[k] = _evaluate_binary(B[k], P, cum, m, cost, S)
            else:
                Lv[k], Rv[k] = _evaluate(k, ka if ka > 0 else -1, kb if kb <= nb else -1, B, ys, brk, R, cum, C,
                                         cost, LF, RF, D1, tot, ns, run, codes, prefix_max, lbl, lbr, order)
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
        side = np.empty(m, dtype=np.int64)
        res = np.zeros((2, 3))
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


def _tree_of(out, tR):
    """``(value, tree, n_evaluated)`` from :func:`_depth2`'s output (see :func:`best_depth2_all`)."""
    value, n_eval = float(out[0]), int(out[6])
    if out[1] < 0:
        return value, None, n_eval
    left = None if out[3] < 0 else (int(out[3]), float(out[4]))
    right = None if out[5] < 0 else (int(out[5]), float(tR))
    return value, (int(out[1]), float(out[2]), left, right), n_eval


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
    return _tree_of(*_depth2(X, y, int(n_classes), orders, float(cost), float(upper_bound)))


@njit(cache=True)
def _depth2_rows(X, y, orders, keep, C, cost, ub):
    k = 0
    for r in range(keep.size):
        k += keep[r]
    p = X.shape[1]
    Xs = np.empty((k, p))
    ys = np.empty(k, dtype=np.int64)
    i = 0
    for r in range(keep.size):
        if keep[r]:
            Xs[i] = X[r]
            ys[i] = y[r]
            i += 1
    return _depth2(Xs, ys, C, _sub_orders(orders, keep), cost, ub)


def best_depth2_rows(X, y, orders, keep, n_classes, cost=0.0, upper_bound=np.inf):
    """:func:`best_depth2_all` on the rows ``keep`` (a boolean mask) of ``X``, ``y``, whose per-feature
    argsort ``orders`` (``p x n``, int64) is known: the rows and their orders are taken in compiled code.
    ``X`` is float64 and ``y`` int64, as a search holds them."""
    return _tree_of(*_depth2_rows(X, y, orders, keep, int(n_classes), float(cost), float(upper_bound)))
