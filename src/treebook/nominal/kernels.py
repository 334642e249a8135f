"""numba kernels of the nominal split procedures (:mod:`treebook.nominal.partitions`).

All inputs are pre-validated by the callers: the kernels other than :func:`_scan` expect a table without empty
rows or columns and at least two rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from treebook.nominal.impurity import _NO_TABLE, _imp2, _imp_pair


@njit(cache=True)
def _scan(V):
    """One pass over the table: (status, row sums, column sums); status 0 ok, 1 non-finite, 2 negative, 3 zero."""
    n, k = V.shape
    rs = np.zeros(n)
    cs = np.zeros(k)
    status = 0
    anypos = False
    for i in range(n):
        for c in range(k):
            x = V[i, c]
            if not np.isfinite(x):
                return 1, rs, cs
            if x < 0.0:
                status = 2
            elif x > 0.0:
                anypos = True
            rs[i] += x
            cs[c] += x
    if status == 0 and not anypos:
        status = 3
    return status, rs, cs


@njit(cache=True)
def _totals(V):
    """Class totals and value (row) totals of the table."""
    n, k = V.shape
    tot = np.zeros(k)
    rs = np.zeros(n)
    for i in range(n):
        for c in range(k):
            tot[c] += V[i, c]
            rs[i] += V[i, c]
    return tot, rs


@njit(cache=True)
def _neg_probabilities(V, rs):
    """Minus the class-probability rows ``-V[i] / rs[i]`` (ranking them ascending ranks ``d . p`` descending)."""
    n, k = V.shape
    P = np.empty((n, k))
    for i in range(n):
        for c in range(k):
            P[i, c] = -V[i, c] / rs[i]
    return P


@njit(cache=True)
def _rank(P, d, r):
    """The values ordered as ``B_d`` ranks them: ascending ``d . P[i]`` (``r`` receives it), stable."""
    n, k = P.shape
    for i in range(n):
        acc = 0.0
        for c in range(k):
            if d[c] != 0.0:
                acc += d[c] * P[i, c]
        r[i] = acc
    return np.argsort(r, kind="mergesort")


@njit(cache=True)
def _mask_impurity(V, left, crit):
    n, k = V.shape
    tot = np.zeros(k)
    lv = np.zeros(k)
    for i in range(n):
        for c in range(k):
            tot[c] += V[i, c]
            if left[i]:
                lv[c] += V[i, c]
    return _imp_pair(lv, tot, k, crit, _NO_TABLE)


@njit(cache=True)
def _sweep_directions(V, D, crit):
    """Algorithm A_d (Twoing) for every row d of D: the values ranked as in B_d, the prefix chosen by the
    collapsed 2-class criterion.

    Returns (best direction index, number j of values on the left, order of the values for that direction).
    The criterion is the collapsed 2-class impurity minus the collapsed impurity of the whole set (i.e. minus
    the decrease of impurity of the collapsed problem).  ``B_d`` itself is swept by :func:`_sweep_bd`.
    """
    n, k = V.shape
    m = D.shape[0]
    tot, rs = _totals(V)
    r = np.empty(n)
    P = _neg_probabilities(V, rs)
    best = np.inf
    best_t = 0
    best_j = 1
    for t in range(m):
        d = D[t]
        order = _rank(P, d, r)
        ta = 0.0
        for c in range(k):
            ta += d[c] * tot[c]
        tb = 0.0
        for c in range(k):
            tb += tot[c]
        tb -= ta
        base = _imp2(ta, tb, crit)
        la = 0.0
        lb = 0.0
        for j in range(n - 1):
            o = order[j]
            for c in range(k):
                la += d[c] * V[o, c]
                lb += (1.0 - d[c]) * V[o, c]
            val = _imp2(la, lb, crit) + _imp2(ta - la, tb - lb, crit) - base
            if val < best:
                best = val
                best_t = t
                best_j = j + 1
    return best_t, best_j, _rank(P, D[best_t], r)


@njit(cache=True)
def _sweep_bd(V, D, crit, tab):
    """Algorithm 1 (B_d) for every row d of D with incremental impurity updates.

    Moving value ``o`` from right to left changes only the classes where ``V[o]`` is non-zero, so the sums
    ``sum_c left_c^2`` (Gini) or ``sum_c left_c log2 left_c`` (Entropy; table look-ups for integer counts) are
    updated in O(nnz(V[o])).  Returns (best direction index, number j of values on the left, order).
    """
    n, k = V.shape
    tot, rs = _totals(V)
    st = 0.0
    for c in range(k):
        st += tot[c]
    P = _neg_probabilities(V, rs)
    # starting sums with everything on the right
    q_tot = 0.0
    for c in range(k):
        if crit == 0:
            q_tot += tot[c] * tot[c]
        elif crit == 1:
            if tot[c] > 0.0:
                q_tot += tot[c] * np.log2(tot[c])
        else:
            q_tot += tab[int(tot[c] + 0.5)]
    left = np.zeros(k)
    lx = np.zeros(k)  # left_c log2 left_c (log path)
    rx = np.zeros(k)  # right_c log2 right_c (log path)
    r = np.empty(n)
    best = np.inf
    best_t = 0
    best_j = 1
    for t in range(D.shape[0]):
        d = D[t]
        order = _rank(P, d, r)
        for c in range(k):
            left[c] = 0.0
            if crit == 1:
                lx[c] = 0.0
                rx[c] = tot[c] * np.log2(tot[c]) if tot[c] > 0.0 else 0.0
        ql = 0.0
        qr = q_tot
        sl = 0.0
        for j in range(n - 1):
            o = order[j]
            for c in range(k):
                x = V[o, c]
                if x != 0.0:
                    a = left[c]
                    b = tot[c] - a
                    a2 = a + x
                    b2 = b - x
                    if crit == 0:
                        ql += x * (a + a2)
                        qr -= x * (b + b2)
                    elif crit == 1:
                        nl = a2 * np.log2(a2)
                        nr = b2 * np.log2(b2) if b2 > 0.0 else 0.0
                        ql += nl - lx[c]
                        qr += nr - rx[c]
                        lx[c] = nl
                        rx[c] = nr
                    else:
                        ql += tab[int(a2 + 0.5)] - tab[int(a + 0.5)]
                        qr += tab[int(b2 + 0.5)] - tab[int(b + 0.5)]
                    left[c] = a2
            sl += rs[o]
            sr = st - sl
            if crit == 0:
                val = (sl - ql / sl) + (sr - qr / sr)
            elif crit == 1:
                val = (sl * np.log2(sl) - ql) + (sr * np.log2(sr) - qr)
            else:
                val = (tab[int(sl + 0.5)] - ql) + (tab[int(sr + 0.5)] - qr)
            if val < best:
                best = val
                best_t = t
                best_j = j + 1
    return best_t, best_j, _rank(P, D[best_t], r)


@njit(cache=True)
def _exhaustive_gray(V, crit, tab):
    """All 2**(n-1) - 1 partitions in Gray-code order (the last value stays right). Returns the best bit code."""
    n, k = V.shape
    tot = _totals(V)[0]
    left = np.zeros(k)
    code = np.int64(0)
    best = np.inf
    best_code = np.int64(1)
    limit = np.int64(1) << (n - 1)
    step = np.int64(1)
    while step < limit:
        b = 0
        s = step
        while (s & 1) == 0:
            s >>= 1
            b += 1
        code ^= np.int64(1) << b
        if (code >> b) & 1:
            for c in range(k):
                left[c] += V[b, c]
        else:
            for c in range(k):
                left[c] -= V[b, c]
        val = _imp_pair(left, tot, k, crit, tab)
        if val < best:
            best = val
            best_code = code
        step += 1
    return best_code


@njit(cache=True)
def _sliqext(V, crit, tab):
    """SLIQext: from (V, {}) greedily move the value giving the lowest impurity to the right; best seen."""
    n, k = V.shape
    tot = _totals(V)[0]
    left = tot.copy()
    cand = np.empty(k)
    inleft = np.ones(n, dtype=np.bool_)
    best = np.inf
    best_mask = inleft.copy()
    for _ in range(n - 1):
        bi = -1
        bv = np.inf
        for i in range(n):
            if inleft[i]:
                for c in range(k):
                    cand[c] = left[c] - V[i, c]
                val = _imp_pair(cand, tot, k, crit, tab)
                if val < bv:
                    bv = val
                    bi = i
        inleft[bi] = False
        for c in range(k):
            left[c] -= V[bi, c]
        if bv < best:
            best = bv
            best_mask = inleft.copy()
    return best_mask


@njit(cache=True)
def _sliqext_rounds(V, crit, tab):
    """SLIQext as the authors' tree code runs it: rounds of cumulative moves in row order.

    A round walks the values still on the left in row order, moving each to the right *without putting the
    previous ones back*, and keeps the running partition with the lowest impurity (the first of equals); its
    moves stand, and the next round starts from there, until one value is left. The best partition seen is
    returned (the first of equals). The running partition with every value right ends each of the authors'
    rounds; it is not a split, and by concavity no proper partition has a larger impurity, so it is not
    evaluated here (it could only win a round by a rounding error)."""
    n, k = V.shape
    tot = _totals(V)[0]
    left = tot.copy()
    cur = np.empty(k)
    inleft = np.ones(n, dtype=np.bool_)
    n_left = n
    best = np.inf
    best_mask = inleft.copy()
    while n_left > 1:
        for c in range(k):
            cur[c] = left[c]
        round_best = np.inf
        stop = -1
        seen = 0
        for i in range(n):
            if inleft[i]:
                seen += 1
                if seen == n_left:  # the last move would leave the left side empty
                    break
                for c in range(k):
                    cur[c] -= V[i, c]
                val = _imp_pair(cur, tot, k, crit, tab)
                if val < round_best:
                    round_best = val
                    stop = i
        if stop < 0:  # no finite impurity (cannot happen on a validated table): stop rather than loop
            break
        for i in range(stop + 1):
            if inleft[i]:
                inleft[i] = False
                n_left -= 1
                for c in range(k):
                    left[c] -= V[i, c]
        if round_best < best:
            best = round_best
            best_mask = inleft.copy()
    return best_mask


@njit(cache=True)
def _group_rows(P, sorted_rows, rtol, atol):
    """Group ids of the rows of ``P`` visited in the order ``sorted_rows``: a row joins the current group when it
    is close to the group's first row (``|lead - row| <= atol + rtol |row|`` in every column, the test of
    ``np.allclose(lead, row)``), otherwise it opens the next group.  Groups are numbered 0, 1, ... in the order
    in which they are opened."""
    n, k = P.shape
    group = np.empty(n, dtype=np.int64)
    lead = sorted_rows[0]
    g = 0
    group[lead] = 0
    for t in range(1, n):
        i = sorted_rows[t]
        close = True
        for c in range(k):
            if abs(P[lead, c] - P[i, c]) > atol + rtol * abs(P[i, c]):
                close = False
                break
        if not close:
            g += 1
            lead = i
        group[i] = g
    return group
