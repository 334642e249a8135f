"""Frequency-weighted impurity measures of class C (section 2.1 of Laber, Molinaro & Pereira, 2018).

For a count vector ``v`` (one entry per class) the frequency-weighted impurity is
``I(v) = ||v||_1 * i(v / ||v||_1)`` (section 1.1), with

* Gini: ``i(p) = 1 - sum_j p_j**2``, hence ``I(v) = ||v|| - sum_j v_j**2 / ||v||``;
* Entropy (bits): ``i(p) = -sum_j p_j log2 p_j``, hence ``I(v) = ||v|| log2 ||v|| - sum_j v_j log2 v_j``.

Both are scale-free in the sense used by the approximation bounds: ``I(c v) = c I(v)``.
A vector of zeros has impurity 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from treebook.tree.criteria import weighted_impurity as _core_weighted_impurity
from treebook.validation import power_of_two_scale

IMPURITIES = ("gini", "entropy")

#: Counts are rescaled (by an exact power of two) when ``n * k * max count`` exceeds this: the Gini kernels
#: square sums of counts, which must stay below the float range (2**1024).
MAX_COUNT_SIZE = 2.0 ** 500


def check_counts(counts, *, name: str = "counts", ndim=None) -> np.ndarray:
    """Validate class counts: numeric, real, finite and non-negative; returned as a float array.

    Raises ``TypeError`` (complex or non-numeric objects) or ``ValueError`` naming ``name``.
    ``ndim``: the required number of dimensions (``None``: at least 1).
    """
    raw = np.asarray(counts)
    if np.iscomplexobj(raw):
        raise TypeError(f"{name} must be real class counts; got complex values")
    try:
        v = raw.astype(float) if raw.dtype != object else np.array(raw.tolist(), dtype=float)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name} must be numeric class counts: {exc}") from None
    if ndim is not None and v.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D; got shape {v.shape}")
    if v.ndim == 0:
        raise ValueError(f"{name} must be a vector of class counts (one per class); got the scalar {counts!r}")
    if v.shape[-1] == 0:
        raise ValueError(f"{name} has no classes (its last axis is empty; shape {v.shape})")
    if not np.isfinite(v).all():
        raise ValueError(f"{name} contains NaN or infinite counts")
    if (v < 0).any():
        raise ValueError(f"{name} contains negative counts")
    return v


def count_scale(v: np.ndarray) -> float:
    """The power of two by which :data:`MAX_COUNT_SIZE` asks counts ``v`` to be divided (1.0 normally)."""
    if v.size == 0:
        return 1.0
    return power_of_two_scale(float(v.max()), MAX_COUNT_SIZE, factor=float(v.size))


def impurity_code(impurity: str) -> int:
    """Return the integer code of an impurity name (0 = Gini, 1 = Entropy); ValueError otherwise."""
    if not isinstance(impurity, str) or impurity.lower() not in IMPURITIES:
        raise ValueError(f"impurity must be one of {IMPURITIES}, got {impurity!r}")
    return IMPURITIES.index(impurity.lower())


def weighted_impurity(counts, impurity: str = "gini") -> np.ndarray | float:
    """Frequency-weighted impurity ``I(v) = ||v||_1 i(v/||v||_1)`` of the count vectors along the last axis.

    Vectorised over all leading axes; rows of zeros give 0.  ``impurity`` is ``"gini"`` or ``"entropy"``
    (entropy in bits).  Returns a float for a 1-D input.  The arithmetic is the tree core's
    (:func:`treebook.tree.criteria.weighted_impurity`), which every chapter shares; the numba kernels below
    compute the same quantities inside the compiled sweeps.

    ``counts`` must be finite and non-negative (``ValueError`` otherwise). Counts so large that their squares
    would overflow are divided by a power of two first and the impurity multiplied back (``I(c v) = c I(v)``),
    so the result is finite whenever it is representable.
    """
    code = IMPURITIES[impurity_code(impurity)]
    v = check_counts(counts)
    s = count_scale(v)
    out = _core_weighted_impurity(v / s if s != 1.0 else v, code)
    if s != 1.0:
        out = out * s
    return float(out) if np.ndim(out) == 0 else out


def partition_impurity(V, left, impurity: str = "gini") -> float:
    """Impurity ``I(L) + I(R)`` of the binary partition of the rows of ``V`` given by the bool mask ``left``
    (a bool array, or 0/1 integers, of one entry per row)."""
    code = IMPURITIES[impurity_code(impurity)]
    V = check_counts(V, name="V", ndim=2)
    raw = np.asarray(left)
    if raw.dtype != bool:
        if raw.dtype.kind not in "iu" or not np.isin(raw, (0, 1)).all():
            raise ValueError(f"left must be a bool mask (or 0/1 integers); got {raw.dtype} values")
    left = raw.astype(bool)
    if left.shape != (V.shape[0],):
        raise ValueError(f"left must be a bool mask of length {V.shape[0]}, got shape {left.shape}")
    s = count_scale(V)
    W = V / s if s != 1.0 else V
    u_left = W[left].sum(axis=0)
    u_right = W[~left].sum(axis=0)
    out = _core_weighted_impurity(u_left, code) + _core_weighted_impurity(u_right, code)
    return float(out * s)


def split_directions_impurity(u, D, impurity: str = "gini") -> np.ndarray:
    """``I(u∘d) + I(u∘(1-d))`` for every row ``d`` of ``D`` (the denominator of Theorem 3.2)."""
    u = np.asarray(u, dtype=float)
    D = np.asarray(D, dtype=float)
    return weighted_impurity(D * u, impurity) + weighted_impurity((1.0 - D) * u, impurity)


@njit(cache=True, inline="always")
def _imp_vec(v, k, crit):
    s = 0.0
    for i in range(k):
        s += v[i]
    if s <= 0.0:
        return 0.0
    if crit == 0:
        q = 0.0
        for i in range(k):
            q += v[i] * v[i]
        r = s - q / s
    else:
        acc = 0.0
        for i in range(k):
            x = v[i]
            if x > 0.0:
                acc += x * np.log2(x)
        r = s * np.log2(s) - acc
    return max(0.0, r)


@njit(cache=True, inline="always")
def _imp_pair(left, tot, k, crit, tab):
    """I(left) + I(tot - left) without allocating.

    ``crit``: 0 Gini, 1 Entropy, 2 Entropy of integer counts through the table ``tab[c] = c log2 c``.
    """
    sl = 0.0
    st = 0.0
    for i in range(k):
        sl += left[i]
        st += tot[i]
    sr = st - sl
    if crit == 0:
        ql = 0.0
        qr = 0.0
        for i in range(k):
            a = left[i]
            b = tot[i] - a
            ql += a * a
            qr += b * b
        il = sl - ql / sl if sl > 0.0 else 0.0
        ir = sr - qr / sr if sr > 0.0 else 0.0
    elif crit == 1:
        al = 0.0
        ar = 0.0
        for i in range(k):
            a = left[i]
            b = tot[i] - a
            if a > 0.0:
                al += a * np.log2(a)
            if b > 0.0:
                ar += b * np.log2(b)
        il = sl * np.log2(sl) - al if sl > 0.0 else 0.0
        ir = sr * np.log2(sr) - ar if sr > 0.0 else 0.0
    else:
        al = 0.0
        ar = 0.0
        for i in range(k):
            a = left[i]
            al += tab[int(a + 0.5)]
            ar += tab[int(tot[i] - a + 0.5)]
        il = tab[int(sl + 0.5)] - al
        ir = tab[int(sr + 0.5)] - ar
    il = max(il, 0.0)
    ir = max(ir, 0.0)
    return il + ir


@njit(cache=True, inline="always")
def _imp2(a, b, crit):
    """Impurity of the 2-class vector (a, b)."""
    s = a + b
    if s <= 0.0:
        return 0.0
    if crit == 0:
        r = s - (a * a + b * b) / s
    else:
        r = s * np.log2(s)
        if a > 0.0:
            r -= a * np.log2(a)
        if b > 0.0:
            r -= b * np.log2(b)
    return max(0.0, r)


#: Largest total count for which the entropy kernels use a table of c*log2(c).
MAX_TABLE_COUNT = 20_000_000
_NO_TABLE = np.zeros(1)


def entropy_table(W: np.ndarray, crit: int, work: float):
    """Return ``(crit', table)``: switch Entropy to table look-ups (code 2) when the counts are integers and the
    expected number of logarithms (``work``) exceeds the table size; otherwise ``(crit, dummy)``."""
    if crit != 1:
        return crit, _NO_TABLE
    total = float(W.sum())
    if total > MAX_TABLE_COUNT or work < total or not np.array_equal(W, np.round(W)):
        return crit, _NO_TABLE
    c = np.arange(int(round(total)) + 1, dtype=float)
    c[0] = 1.0
    tab = c * np.log2(c)
    return 2, tab
