"""The dynamic-programming solver of Drouin, Hocking & Laviolette (2017), section 4.

Hinge losses are added one at a time to a running sum ``P_t(mu)``; after every addition the
minimum of ``P_t`` is found again by moving a pointer over the sorted breakpoints and updating the
coefficients of the piece that holds the minimum with the difference functions of the breakpoints
it crosses (Lemma 1 of the paper, equations (12)-(15)).

Data structure. All breakpoints of a problem are known in advance, so they are sorted once
(``argsort``) and each one receives its rank. Breakpoints become *active* as their hinge is added;
the active set is a three-level 64-ary bit set over ranks: O(1) insertion and look-up of the
next / previous active breakpoint in a few word operations (plus a scan of m / 2^18 words at worst). Equal breakpoint values get distinct ranks, so ties are zero-width
pieces and need no special case. The sweep is an iterative numba loop: there is no recursion and
no stack-size limit.

Each piece of ``P_t`` is a polynomial ``A mu^2 + B mu + C``. Crossing breakpoint ``b`` (weight ``w``)
from left to right adds the difference function

* linear hinge, lower or upper limit: ``w (mu - b)``;
* squared hinge, upper limit: ``+w (mu - b)^2``; lower limit: ``-w (mu - b)^2``.

An integer count of the hinges active on the current piece is carried along; when it is zero the
piece is identically zero and its coefficients are reset exactly (no floating-point drift).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from ..validation import power_of_two_scale
from .losses import LOSSES, MAX_LIMIT_SIZE, check_intervals, check_loss, check_margin, limit_size

# LOSSES, check_loss and check_margin live in .losses (imported here one way: losses imports nothing from
# the solver); they stay importable from this module, where other modules have always found them.
__all__ = [
    "LOSSES", "SolveResult", "bits_next", "bits_prev", "bits_set", "breakpoints", "check_loss", "check_margin",
    "prefix_solve", "sweep",
]


@dataclass(frozen=True)
class SolveResult:
    """Result of :func:`prefix_solve`.

    Attributes
    ----------
    cost : ndarray (n,)
        ``cost[i]`` is the minimum over ``mu`` of the sum of the hinge losses of intervals ``0..i``.
    prediction : ndarray (n,)
        a minimiser of that sum (the midpoint of a flat minimum, its finite end when it is unbounded).
    moves : ndarray (n,) of int
        number of pointer moves made while adding interval ``i`` (both of its limits).
    limit_moves : ndarray (n, 2) of int
        the same, split into the moves made for the lower limit and for the upper limit.
    """

    cost: np.ndarray
    prediction: np.ndarray
    moves: np.ndarray
    limit_moves: np.ndarray


# ----------------------------------------------------------------------------------------------
# The set of active ranks 0..m-1: a three-level bit set (64-ary). Level 0 has one bit per rank, level 1
# one bit per non-empty level-0 word, level 2 one bit per non-empty level-1 word. Insertion sets three
# bits; the next / previous active rank is found with a few word operations (count of trailing /
# leading zeros) plus, at worst, a scan of the m / 2^18 level-2 words. The bit set takes m / 8 bytes and
# stays in cache where a balanced tree or a Fenwick tree would not. (bits_set / bits_next / bits_prev are
# public so that the tests can check them against a sorted search; the sweep is their only user.)

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def bits_set(l0, l1, l2, r):
    w = r >> 6
    l0[w] |= _ONE << np.uint64(r & 63)
    w1 = w >> 6
    l1[w1] |= _ONE << np.uint64(w & 63)
    l2[w1 >> 6] |= _ONE << np.uint64(w1 & 63)


@njit(cache=True, inline="always")
def _low(x):
    """Index of the lowest set bit of a non-zero uint64."""
    return np.int64(trailing_zeros(x))


@njit(cache=True, inline="always")
def _high(x):
    """Index of the highest set bit of a non-zero uint64."""
    return np.int64(63 - leading_zeros(x))


@njit(cache=True, inline="always")
def _above(b):
    """Mask of the bits strictly above bit b (0 <= b <= 63)."""
    if b >= 63:
        return np.uint64(0)
    return _ALL << np.uint64(b + 1)


@njit(cache=True, inline="always")
def _below(b):
    """Mask of the bits strictly below bit b (0 <= b <= 63)."""
    if b == 0:
        return np.uint64(0)
    return _ALL >> np.uint64(64 - b)


@njit(cache=True)
def bits_next(l0, l1, l2, r, m):
    """Smallest active rank > r, or m if none."""
    w = r >> 6
    x = l0[w] & _above(r & 63)
    if x != 0:
        return (w << 6) + _low(x)
    w1 = w >> 6
    x = l1[w1] & _above(w & 63)
    if x != 0:
        ww = (w1 << 6) + _low(x)
        return (ww << 6) + _low(l0[ww])
    w2 = w1 >> 6
    x = l2[w2] & _above(w1 & 63)
    while x == 0:
        w2 += 1
        if w2 >= l2.shape[0]:
            return m
        x = l2[w2]
    w1 = (w2 << 6) + _low(x)
    ww = (w1 << 6) + _low(l1[w1])
    return (ww << 6) + _low(l0[ww])


@njit(cache=True)
def bits_prev(l0, l1, l2, r):
    """Largest active rank < r, or -1 if none."""
    w = r >> 6
    x = l0[w] & _below(r & 63)
    if x != 0:
        return (w << 6) + _high(x)
    w1 = w >> 6
    x = l1[w1] & _below(w & 63)
    if x != 0:
        ww = (w1 << 6) + _high(x)
        return (ww << 6) + _high(l0[ww])
    w2 = w1 >> 6
    x = l2[w2] & _below(w1 & 63)
    while x == 0:
        w2 -= 1
        if w2 < 0:
            return -1
        x = l2[w2]
    w1 = (w2 << 6) + _high(x)
    ww = (w1 << 6) + _high(l1[w1])
    return (ww << 6) + _high(l0[ww])


@njit(cache=True)
def sweep(order, rank_lo, rank_hi, bps, is_upper, wr, squared, cost, pred, lmoves):
    """Add the intervals ``order[0], order[1], ...`` one at a time and record the minimum (the numba kernel
    behind :func:`prefix_solve` and the split search of :mod:`treebook.interval.tree`).

    ``rank_lo[i]`` / ``rank_hi[i]``: rank of interval i's lower / upper breakpoint in ``bps`` (-1 if the
    limit is infinite). ``bps``: sorted breakpoint values (length m); ``is_upper[r]``: breakpoint r
    comes from an upper limit; ``wr[r]``: its weight.
    Outputs are written at positions 0..len(order)-1.
    """
    m = bps.shape[0]
    n0 = (m >> 6) + 1
    n1 = (n0 >> 6) + 1
    l0 = np.zeros(n0, dtype=np.uint64)
    l1 = np.zeros(n1, dtype=np.uint64)
    l2 = np.zeros((n1 >> 6) + 1, dtype=np.uint64)
    # current piece: (bps[lo], bps[hi]] with lo = -1 meaning -inf and hi = m meaning +inf
    lo = -1
    hi = m
    A = 0.0
    B = 0.0
    C = 0.0
    cnt = 0
    for t in range(order.shape[0]):
        i = order[t]
        for side in range(2):
            r = rank_lo[i] if side == 0 else rank_hi[i]
            if r < 0:
                lmoves[t, side] = 0
                continue
            b = bps[r]
            w = wr[r]
            up = is_upper[r]
            # hinge coefficients h(mu): squared w (mu - b)^2 ; linear +-w (mu - b)
            if squared:
                ha = w
                hb = -2.0 * w * b
                hc = w * b * b
            elif up:
                ha = 0.0
                hb = w
                hc = -w * b
            else:
                ha = 0.0
                hb = -w
                hc = w * b
            # --- insertion (equations (12)-(13))
            bits_set(l0, l1, l2, r)
            if r < lo:
                if up:
                    A += ha
                    B += hb
                    C += hc
                    cnt += 1
            elif r > hi:
                if not up:
                    A += ha
                    B += hb
                    C += hc
                    cnt += 1
            else:
                # the new breakpoint splits the current piece: keep the side holding the old minimiser
                lo_v = bps[lo] if lo >= 0 else -np.inf
                hi_v = bps[hi] if hi < m else np.inf
                mu = _piece_argmin(A, B, cnt, lo_v, hi_v)
                if b < mu:
                    lo = r
                    if up:
                        A += ha
                        B += hb
                        C += hc
                        cnt += 1
                else:
                    hi = r
                    if not up:
                        A += ha
                        B += hb
                        C += hc
                        cnt += 1
            if cnt == 0:
                A = 0.0
                B = 0.0
                C = 0.0
            # --- pointer moves (equations (14)-(15)); the direction never reverses
            nm = 0
            direction = 0
            while True:
                moved = False
                if direction >= 0 and hi < m:
                    bb = bps[hi]
                    d = 2.0 * A * bb + B
                    if d < 0.0:
                        jump = 0.0 if squared else wr[hi]
                        if squared or d + jump <= 0.0:
                            ww = wr[hi]
                            if squared:
                                s = ww if is_upper[hi] else -ww
                                A += s
                                B += -2.0 * s * bb
                                C += s * bb * bb
                            else:
                                B += ww
                                C += -ww * bb
                            cnt += 1 if is_upper[hi] else -1
                            if cnt == 0:
                                A = 0.0
                                B = 0.0
                                C = 0.0
                            lo = hi
                            hi = bits_next(l0, l1, l2, hi, m)
                            direction = 1
                            moved = True
                if not moved and direction <= 0 and lo >= 0:
                    bb = bps[lo]
                    d = 2.0 * A * bb + B
                    if d > 0.0:
                        jump = 0.0 if squared else wr[lo]
                        if squared or d - jump >= 0.0:
                            ww = wr[lo]
                            if squared:
                                s = ww if is_upper[lo] else -ww
                                A -= s
                                B -= -2.0 * s * bb
                                C -= s * bb * bb
                            else:
                                B -= ww
                                C -= -ww * bb
                            cnt -= 1 if is_upper[lo] else -1
                            if cnt == 0:
                                A = 0.0
                                B = 0.0
                                C = 0.0
                            hi = lo
                            lo = bits_prev(l0, l1, l2, lo)
                            direction = -1
                            moved = True
                if not moved:
                    break
                nm += 1
            lmoves[t, side] = nm
        lo_v = bps[lo] if lo >= 0 else -np.inf
        hi_v = bps[hi] if hi < m else np.inf
        mu = _piece_argmin(A, B, cnt, lo_v, hi_v)
        pred[t] = mu
        if cnt == 0:
            cost[t] = 0.0
        else:
            c = (A * mu + B) * mu + C
            cost[t] = c if c > 0.0 else 0.0


@njit(cache=True, inline="always")
def _piece_argmin(A, B, cnt, lo_v, hi_v):
    """A minimiser of A mu^2 + B mu + C over the closed piece [lo_v, hi_v]."""
    if cnt > 0 and A > 0.0:
        mu = -B / (2.0 * A)
        if mu < lo_v:
            mu = lo_v
        if mu > hi_v:
            mu = hi_v
        return mu
    if cnt > 0 and B > 0.0 and lo_v > -np.inf:
        return lo_v
    if cnt > 0 and B < 0.0 and hi_v < np.inf:
        return hi_v
    # flat piece
    if lo_v > -np.inf and hi_v < np.inf:
        mid = 0.5 * (lo_v + hi_v)
        if mid == np.inf or mid == -np.inf:  # the sum of two huge limits overflows; the halves do not
            mid = 0.5 * lo_v + 0.5 * hi_v
        return mid
    if lo_v > -np.inf:
        return lo_v
    if hi_v < np.inf:
        return hi_v
    return 0.0


# ----------------------------------------------------------------------------------------------
# breakpoints of a set of intervals


def breakpoints(lower, upper, margin, weights=None):
    """Sorted breakpoints of the hinge losses of intervals ``[lower, upper]``.

    The lower limit contributes ``phi(-mu + lower + margin)`` (breakpoint ``lower + margin``), the upper
    limit ``phi(mu - upper + margin)`` (breakpoint ``upper - margin``); infinite limits contribute nothing.

    Returns ``(rank_lo, rank_hi, bps, is_upper, wr)`` as used by the numba sweep.
    """
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    n = lower.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    vals, src = _collect(lower, upper, float(margin))
    order = np.argsort(vals)
    return _scatter(order, vals, src, w, n)


@njit(cache=True)
def _collect(lower, upper, margin):
    """Breakpoint values of the finite limits and their source (2 i for a lower limit, 2 i + 1 for an upper)."""
    n = lower.shape[0]
    k = 0
    for i in range(n):
        k += np.isfinite(lower[i]) + np.isfinite(upper[i])
    vals = np.empty(k)
    src = np.empty(k, dtype=np.int64)
    k = 0
    for i in range(n):
        if np.isfinite(lower[i]):
            vals[k] = lower[i] + margin
            src[k] = 2 * i
            k += 1
        if np.isfinite(upper[i]):
            vals[k] = upper[i] - margin
            src[k] = 2 * i + 1
            k += 1
    return vals, src


@njit(cache=True)
def _scatter(order, vals, src, w, n):
    """Sorted breakpoints with their kind and weight, and each interval's two ranks (-1: infinite limit)."""
    m = order.shape[0]
    rank_lo = np.full(n, -1, dtype=np.int64)
    rank_hi = np.full(n, -1, dtype=np.int64)
    bps = np.empty(m)
    is_up = np.empty(m, dtype=np.bool_)
    wr = np.empty(m)
    for r in range(m):
        k = order[r]
        s = src[k]
        i = s >> 1
        bps[r] = vals[k]
        wr[r] = w[i]
        if s & 1:
            is_up[r] = True
            rank_hi[i] = r
        else:
            is_up[r] = False
            rank_lo[i] = r
    return rank_lo, rank_hi, bps, is_up, wr


def prefix_solve(lower, upper, *, loss="linear", margin=0.0, weights=None):
    """Minimum of the sum of hinge losses of every prefix of a sequence of intervals.

    For ``i = 0..n-1`` computes ``min_mu sum_{k<=i} w_k [phi(-mu + lower_k + margin) + phi(mu - upper_k + margin)]``
    (the node cost of equation (2) of the paper) and a minimiser, in one sweep of the dynamic-programming
    algorithm of section 4 (O(n log n) for the linear hinge, Theorem 2 of the supplement).

    Parameters
    ----------
    lower, upper : array-like (n,)
        interval limits, ``-inf`` / ``+inf`` allowed (but not both for one interval); ``lower <= upper``.
    loss : {"linear", "squared"}
        the hinge ``phi(x) = (x)_+`` or ``phi(x) = (x)_+^2``.
    margin : float >= 0
        the margin epsilon.
    weights : array-like (n,), optional
        positive weight of each interval.

    Limits so large that the sums of the hinge coefficients would overflow are divided by an exact power
    of two ``s`` (with the margin), solved, and the results scaled back (predictions by ``s``, costs by ``s``
    or ``s**2``); a cost beyond the float range is then ``inf``. Ordinary limits are not rescaled.

    Returns
    -------
    SolveResult
        with arrays ``cost``, ``prediction``, ``moves`` and ``limit_moves``.
    """
    squared = check_loss(loss) == "squared"
    margin = check_margin(margin)
    limits = []
    for name, v in (("lower", lower), ("upper", upper)):
        if np.iscomplexobj(np.asarray(v)):
            raise ValueError(f"Complex data not supported: {name} has complex values")
        try:
            limits.append(np.asarray(v, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be numeric: {exc}") from None
    lower, upper = limits
    if lower.ndim != 1 or upper.shape != lower.shape:
        raise ValueError(f"lower and upper must be 1-D arrays of equal length, got shapes {lower.shape} "
                         f"and {upper.shape}")
    y = check_intervals(np.column_stack([lower, upper]), name="the intervals (lower, upper)")
    w = _check_weights(weights, y.shape[0])
    max_abs, factor = limit_size(y, margin, squared=squared, weights=w)
    scale = power_of_two_scale(max_abs, MAX_LIMIT_SIZE, factor=factor)
    if scale == 1.0:
        return _solve_checked(y[:, 0], y[:, 1], squared, margin, w)
    res = _solve_checked(y[:, 0] / scale, y[:, 1] / scale, squared, margin / scale, w)
    with np.errstate(over="ignore"):
        cost = res.cost * scale * scale if squared else res.cost * scale
    return SolveResult(cost=cost, prediction=res.prediction * scale, moves=res.moves,
                       limit_moves=res.limit_moves)


def _check_weights(weights, n):
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w) | (w <= 0))
    if bad.size:
        raise ValueError(f"weights must be finite and > 0; bad rows: {bad[:10].tolist()}")
    return w


def _solve_checked(lower, upper, squared, margin, weights, order=None):
    n = lower.shape[0]
    rank_lo, rank_hi, bps, is_up, wr = breakpoints(lower, upper, margin, weights)
    if order is None:
        order = np.arange(n, dtype=np.int64)
    k = order.shape[0]
    cost = np.empty(k)
    pred = np.empty(k)
    lmoves = np.empty((k, 2), dtype=np.int32)
    sweep(order, rank_lo, rank_hi, bps, is_up, wr, squared, cost, pred, lmoves)
    return SolveResult(cost=cost, prediction=pred, moves=lmoves.sum(axis=1, dtype=np.int64),
                       limit_moves=lmoves)
