"""Binary partitions of the values of a nominal attribute (Laber, Molinaro & Pereira, ICML 2018).

Every procedure takes a contingency table ``V`` (``n`` values x ``k`` classes, non-negative counts) and an
impurity of class C (``"gini"`` or ``"entropy"``), and returns a :class:`Partition`: the bool mask ``left``
over the ``n`` values and the partition's impurity ``I(L) + I(R)`` in the frequency-weighted scale
``I(v) = ||v||_1 i(v/||v||_1)`` (section 1.1).

Conventions (deterministic, documented):

* Rows of zeros (values with no examples) do not change any impurity; they are removed before the search
  and always placed on the **right** side (``left`` is False for them).
* Columns of zeros (absent classes) are removed before the search (they change no impurity).
* If fewer than two values have examples, no proper split of the examples exists: the non-empty value (if
  any) alone goes left and the impurity is ``I(u)`` with ``u`` the class totals.
* If only one class has examples, every partition is pure (impurity 0); the procedures still return a
  proper partition of the non-empty values.
* Ties are broken by the first candidate in the procedure's own enumeration order (stable sorts).
* Negative, NaN or infinite counts, fewer than 2 values, fewer than 2 classes (columns), or a table of
  all zeros raise ``ValueError``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit

from treebook.nominal.impurity import (
    _NO_TABLE,
    _imp2,
    _imp_pair,
    entropy_table,
    impurity_code,
    partition_impurity,
    split_directions_impurity,
    weighted_impurity,
)

METHODS = (
    "hcc",
    "lca",
    "pcext",
    "sliqext",
    "twoing",
    "balanced",
    "one_vs_rest",
    "exhaustive",
    "breiman",
)

#: Largest number of non-empty values accepted by the exhaustive search (2**(n-1) - 1 partitions).
MAX_EXHAUSTIVE_VALUES = 26

#: Relative tolerance used when comparing impurities of partitions ("at least as good as").
WIN_RTOL = 1e-9


def at_least_as_good(a, b, rtol: float = WIN_RTOL):
    """``a <= b`` up to the win tolerance: ``a <= b + rtol * max(|b|, 1)`` (impurities in count units)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return a <= b + rtol * np.maximum(np.abs(b), 1.0)


@dataclass(frozen=True, eq=False)
class Partition:
    """Result of a split procedure.

    Attributes
    ----------
    left : ndarray of bool, shape (n,)
        ``True`` for the values sent to the left side ``L``.
    impurity : float
        ``I(L) + I(R)`` in the frequency-weighted scale (section 1.1 of the paper).
    method : str
        Name of the procedure that produced it.
    criterion : str
        ``"gini"`` or ``"entropy"``.
    """

    left: np.ndarray
    impurity: float
    method: str
    criterion: str

    @property
    def right(self) -> np.ndarray:
        return ~self.left

    def __repr__(self) -> str:
        return (
            f"Partition(left={np.flatnonzero(self.left).tolist()}, impurity={self.impurity:.6g}, "
            f"method={self.method!r}, criterion={self.criterion!r})"
        )


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


def _check_with_sums(V):
    try:
        arr = np.ascontiguousarray(V, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"V must be a numeric n x k contingency table: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"V must be 2-D (n values x k classes), got {arr.ndim}-D")
    n, k = arr.shape
    if n < 2:
        raise ValueError(f"V needs at least 2 values (rows) to be partitioned, got {n}")
    if k < 2:
        raise ValueError(f"V needs at least 2 classes (columns), got {k}")
    status, rs, cs = _scan(arr)
    if status == 1:
        bad = np.argwhere(~np.isfinite(arr))[:5].tolist()
        raise ValueError(f"V contains NaN or infinite counts at (row, column) {bad}")
    if status == 2:
        bad = np.argwhere(arr < 0)[:5].tolist()
        raise ValueError(f"V contains negative counts at (row, column) {bad}")
    if status == 3:
        raise ValueError("V contains no counts (all entries are zero)")
    return arr, rs, cs


def check_table(V) -> np.ndarray:
    """Validate a contingency table and return it as a C-contiguous float64 array (n x k)."""
    return _check_with_sums(V)[0]


# --------------------------------------------------------------------------------------------------------
# numba kernels (all inputs are pre-validated: rows and columns non-empty, n >= 2)
# --------------------------------------------------------------------------------------------------------


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
def _sweep_directions(V, D, crit, twoing, tab):
    """Algorithm 1 (B_d) for every row d of D; with ``twoing`` the collapsed criterion of A_d is used.

    Returns (best direction index, number j of values on the left, order of the values for that direction).
    For B_d the criterion is I(P_j) + I(V \\ P_j); for Twoing it is the collapsed 2-class impurity minus the
    collapsed impurity of the whole set (i.e. minus the decrease of impurity of the collapsed problem).
    """
    n, k = V.shape
    m = D.shape[0]
    tot = np.zeros(k)
    rs = np.zeros(n)
    for i in range(n):
        for c in range(k):
            tot[c] += V[i, c]
            rs[i] += V[i, c]
    left = np.zeros(k)
    r = np.empty(n)
    P = np.empty((n, k))
    for i in range(n):
        for c in range(k):
            P[i, c] = -V[i, c] / rs[i]
    best = np.inf
    best_t = 0
    best_j = 1
    for t in range(m):
        d = D[t]
        for i in range(n):
            acc = 0.0
            for c in range(k):
                if d[c] != 0.0:
                    acc += d[c] * P[i, c]
            r[i] = acc
        order = np.argsort(r, kind="mergesort")
        for c in range(k):
            left[c] = 0.0
        if twoing:
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
        else:
            for j in range(n - 1):
                o = order[j]
                for c in range(k):
                    left[c] += V[o, c]
                val = _imp_pair(left, tot, k, crit, tab)
                if val < best:
                    best = val
                    best_t = t
                    best_j = j + 1
    d = D[best_t]
    for i in range(n):
        acc = 0.0
        for c in range(k):
            acc += d[c] * P[i, c]
        r[i] = acc
    return best_t, best_j, np.argsort(r, kind="mergesort")


@njit(cache=True)
def _sweep_bd(V, D, crit, tab):
    """Algorithm 1 (B_d) for every row d of D with incremental impurity updates.

    Moving value ``o`` from right to left changes only the classes where ``V[o]`` is non-zero, so the sums
    ``sum_c left_c^2`` (Gini) or ``sum_c left_c log2 left_c`` (Entropy; table look-ups for integer counts) are
    updated in O(nnz(V[o])).  Returns (best direction index, number j of values on the left, order).
    """
    n, k = V.shape
    tot = np.zeros(k)
    rs = np.zeros(n)
    for i in range(n):
        for c in range(k):
            tot[c] += V[i, c]
            rs[i] += V[i, c]
    st = 0.0
    for c in range(k):
        st += tot[c]
    P = np.empty((n, k))
    for i in range(n):
        for c in range(k):
            P[i, c] = -V[i, c] / rs[i]
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
        for i in range(n):
            acc = 0.0
            for c in range(k):
                if d[c] != 0.0:
                    acc += d[c] * P[i, c]
            r[i] = acc
        order = np.argsort(r, kind="mergesort")
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
    d = D[best_t]
    for i in range(n):
        acc = 0.0
        for c in range(k):
            acc += d[c] * P[i, c]
        r[i] = acc
    return best_t, best_j, np.argsort(r, kind="mergesort")


@njit(cache=True)
def _exhaustive_gray(V, crit, tab):
    """All 2**(n-1) - 1 partitions in Gray-code order (the last value stays right). Returns the best bit code."""
    n, k = V.shape
    tot = np.zeros(k)
    for i in range(n):
        for c in range(k):
            tot[c] += V[i, c]
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
    tot = np.zeros(k)
    for i in range(n):
        for c in range(k):
            tot[c] += V[i, c]
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


# --------------------------------------------------------------------------------------------------------
# directions
# --------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def _hypercube_directions_cached(k: int) -> np.ndarray:
    codes = np.arange(1, 1 << (k - 1), dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(k - 1)) & 1).astype(float)
    out = np.ascontiguousarray(np.hstack([bits, np.zeros((codes.size, 1))]))
    out.setflags(write=False)
    return out


def hypercube_directions(k: int) -> np.ndarray:
    """All ``d`` in {0,1}^k up to complement, excluding 0 and 1: the ``2**(k-1) - 1`` rows with ``d_k = 0``."""
    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    if k > 24:
        raise ValueError(f"HcC/Twoing enumerate 2**(k-1) directions; k={k} is too large (max 24)")
    return _hypercube_directions_cached(int(k))


def most_balanced_direction(u) -> np.ndarray:
    """The direction ``d`` in {0,1}^k maximising the balance ``min(d·u, (1-d)·u)`` (Lemma 4.3, Theorem 4.4).

    For integer class totals a subset-sum dynamic programme over the achievable sums is used
    (``O(k ||u||_1)`` bit operations); otherwise all ``2**(k-1)`` subsets are enumerated (k <= 20).
    Ties go to the first subset found by the backtracking (classes with larger index taken first).
    """
    u = np.asarray(u, dtype=float)
    k = u.size
    if k < 2:
        raise ValueError("need at least 2 classes")
    if np.all(u == np.round(u)) and u.sum() < 2**31:
        ui = [int(x) for x in np.round(u)]
        total = sum(ui)
        reach = [1]
        for x in ui:
            reach.append(reach[-1] | (reach[-1] << x))
        full = reach[-1]
        target = None
        for s in range(total // 2, -1, -1):
            if (full >> s) & 1:
                target = s
                break
        d = np.zeros(k)
        s = target
        for i in range(k - 1, -1, -1):
            x = ui[i]
            if (reach[i] >> s) & 1:
                continue  # reachable without class i
            d[i] = 1.0
            s -= x
        if d.sum() == 0 or d.sum() == k:  # degenerate (possible only with zero totals): flip the largest
            d = np.zeros(k)
            d[int(np.argmax(u))] = 1.0
        return d
    if k > 20:
        raise ValueError("non-integer class totals with k > 20: the subset enumeration is too large")
    D = hypercube_directions(k)
    bal = np.minimum(D @ u, (1.0 - D) @ u)
    return D[int(np.argmax(bal))]


# --------------------------------------------------------------------------------------------------------
# procedures on a cleaned table (no empty rows/columns, n >= 2, k >= 1)
# --------------------------------------------------------------------------------------------------------


def _canonical(D):
    """Replace each direction with ``d_k = 1`` by its complement ``1 - d``.

    ``B_d`` and ``B_{1-d}`` sweep the same prefixes in reverse order (``r_{1-d} = 1 - r_d``), so this changes
    nothing but the order of tied values; it makes every single-direction method (LCA, one-vs-rest, balanced)
    use exactly one of HcC's ``2**(k-1) - 1`` directions, hence HcC is never worse than any of them.
    """
    D = np.array(D, dtype=float)
    flip = D[:, -1] == 1.0
    D[flip] = 1.0 - D[flip]
    return D


def _prefix_mask(n, order, j):
    mask = np.zeros(n, dtype=bool)
    mask[order[:j]] = True
    return mask


def _b_directions(W, D, crit, twoing=False):
    D = np.ascontiguousarray(D, dtype=float)
    n, k = W.shape
    if twoing:
        _t, j, order = _sweep_directions(W, D, crit, True, _NO_TABLE)
    else:
        c2, tab = entropy_table(W, crit, 2.0 * D.shape[0] * n * k)
        _t, j, order = _sweep_bd(W, D, c2, tab)
    return _prefix_mask(W.shape[0], order, j)


def _pcext(W, crit):
    n, _k = W.shape
    rs = W.sum(axis=1)
    P = W / rs[:, None]
    mean = W.sum(axis=0) / rs.sum()
    C = P - mean
    cov = (C * rs[:, None]).T @ C
    _, vecs = np.linalg.eigh(cov)
    e = vecs[:, -1]
    score = P @ e
    order = np.argsort(score, kind="stable")
    Vo = W[order]
    pref = np.cumsum(Vo, axis=0)[:-1]  # prefix sums, j = 1..n-1
    tot = pref[-1] + Vo[-1]
    # adjacent swap across cut j: P_j - o_j + o_{j+1}
    swap = pref - Vo[:-1] + Vo[1:]
    cand = np.concatenate([pref, swap], axis=0)
    code = ("gini", "entropy")[crit]
    vals = weighted_impurity(cand, code) + weighted_impurity(tot - cand, code)
    b = int(np.argmin(vals))
    mask = np.zeros(n, dtype=bool)
    if b < n - 1:
        mask[order[: b + 1]] = True
    else:
        j = b - (n - 1) + 1
        mask[order[: j - 1]] = True
        mask[order[j]] = True
    return mask


def _breiman(W, crit):
    return _b_directions(W, np.array([[1.0, 0.0]]), crit)


def _exhaustive(W, crit):
    n = W.shape[0]
    if n > MAX_EXHAUSTIVE_VALUES:
        raise ValueError(
            f"exhaustive search over 2**{n - 1} partitions refused: at most {MAX_EXHAUSTIVE_VALUES} "
            "non-empty values"
        )
    c2, tab = entropy_table(W, crit, 2.0 * W.shape[1] * 2.0 ** (n - 1))
    code = int(_exhaustive_gray(W, c2, tab))
    return ((code >> np.arange(n)) & 1).astype(bool)


def _solve_clean(W, method, crit, u=None):
    n, k = W.shape
    if u is None:
        u = W.sum(axis=0)
    if k < 2:
        mask = np.zeros(n, dtype=bool)
        mask[0] = True
        return mask
    if method == "lca":
        d = np.zeros((1, k))
        d[0, int(np.argmax(u))] = 1.0
        return _b_directions(W, _canonical(d), crit)
    if method == "hcc":
        return _b_directions(W, hypercube_directions(k), crit)
    if method == "one_vs_rest":
        return _b_directions(W, _canonical(np.eye(k)), crit)
    if method == "balanced":
        return _b_directions(W, _canonical(most_balanced_direction(u)[None, :]), crit)
    if method == "twoing":
        return _b_directions(W, hypercube_directions(k), crit, twoing=True)
    if method == "pcext":
        return _pcext(W, crit)
    if method == "sliqext":
        c2, tab = entropy_table(W, crit, 1.0 * n * n * k)
        return _sliqext(W, c2, tab)
    if method == "exhaustive":
        return _exhaustive(W, crit)
    if method == "breiman":
        return _breiman(W, crit)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def best_partition(V, method: str = "hcc", impurity: str = "gini") -> Partition:
    """Binary partition of the values (rows) of the contingency table ``V`` by the chosen procedure.

    Parameters
    ----------
    V : array-like, shape (n, k)
        ``V[j, i]`` counts the examples of class ``i`` whose attribute takes value ``a_j``.
    method : str
        ``"hcc"`` (Hypercube Cover, best ``B_d`` over d in {0,1}^k; Theorem 3.5: 2-approximation),
        ``"lca"`` (Largest Class Alone, ``B_{e_i*}``; Theorems 4.2 and 4.5: 2- and 3-approximation for Gini and
        Entropy), ``"one_vs_rest"`` (best of the ``k`` unit directions), ``"balanced"`` (``B_d`` for the most
        balanced ``d``; Theorem 4.4: 2-approximation for Entropy), ``"twoing"`` (``A_d`` over all ``d``, the
        partition with the largest decrease of the collapsed 2-class impurity, Breiman et al. 1984),
        ``"pcext"`` and ``"sliqext"`` (Coppersmith, Hong & Hosking 1999), ``"exhaustive"`` (all
        ``2**(n-1) - 1`` partitions, exact) or ``"breiman"`` (exact for ``k = 2``, Theorem 2.4).
    impurity : ``"gini"`` or ``"entropy"``

    Returns
    -------
    Partition
        ``left`` mask over the ``n`` values and ``impurity = I(L) + I(R)`` recomputed from the mask.
    """
    crit = impurity_code(impurity)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    V, rs, cs = _check_with_sums(V)
    if method == "breiman" and V.shape[1] != 2:
        raise ValueError(f"method='breiman' is exact only for k = 2 classes; this table has {V.shape[1]}")
    rows = rs > 0
    n = V.shape[0]
    n_rows = int(np.count_nonzero(rows))
    if n_rows < 2:
        left = rows.copy()
    elif n_rows == n and cs.all():
        left = _solve_clean(V, method, crit, cs)
    else:
        cols = cs > 0
        W = np.ascontiguousarray(V[rows][:, cols])
        sub = _solve_clean(W, method, crit, cs[cols])
        left = np.zeros(n, dtype=bool)
        left[np.flatnonzero(rows)[sub]] = True
    return Partition(left=left, impurity=float(_mask_impurity(V, left, crit)), method=method,
                     criterion=impurity.lower())


def b_d(V, d, impurity: str = "gini") -> Partition:
    """Algorithm 1 (``B_d``): rank the values by ``d·v/||v||_1`` and return the best of the n-1 prefix splits.

    ``d`` is any direction in ``[0,1]^k`` (Proposition 3.1).  Empty rows go right (see module notes).
    """
    crit = impurity_code(impurity)
    V = check_table(V)
    d = np.asarray(d, dtype=float)
    if d.shape != (V.shape[1],) or not np.all(np.isfinite(d)):
        raise ValueError(f"d must be a finite vector of length k={V.shape[1]}")
    rows = V.sum(axis=1) > 0
    left = rows.copy()
    if rows.sum() >= 2:
        sub = _b_directions(np.ascontiguousarray(V[rows]), d[None, :], crit)
        left = np.zeros(V.shape[0], dtype=bool)
        left[np.flatnonzero(rows)[sub]] = True
    return Partition(left=left, impurity=partition_impurity(V, left, impurity), method="b_d",
                     criterion=impurity.lower())


def a_d(V, d, impurity: str = "gini") -> Partition:
    """Algorithm ``A_d`` (section 3.1): like ``B_d`` but the prefix split is chosen by the impurity of the
    2-class instance collapsed along ``d`` (Proposition 3.3: optimal for the collapsed instance)."""
    crit = impurity_code(impurity)
    V = check_table(V)
    d = np.asarray(d, dtype=float)
    if d.shape != (V.shape[1],) or not np.all(np.isfinite(d)):
        raise ValueError(f"d must be a finite vector of length k={V.shape[1]}")
    rows = V.sum(axis=1) > 0
    left = rows.copy()
    if rows.sum() >= 2:
        sub = _b_directions(np.ascontiguousarray(V[rows]), d[None, :], crit, twoing=True)
        left = np.zeros(V.shape[0], dtype=bool)
        left[np.flatnonzero(rows)[sub]] = True
    return Partition(left=left, impurity=partition_impurity(V, left, impurity), method="a_d",
                     criterion=impurity.lower())


def collapse(V, d) -> np.ndarray:
    """The collapsed 2-class table ``(v·d, v·(1-d))`` of section 3.1."""
    V = np.asarray(V, dtype=float)
    d = np.asarray(d, dtype=float)
    return np.stack([V @ d, V @ (1.0 - d)], axis=1)


def theorem_3_2_bound(V, d, impurity: str = "gini") -> float:
    """Right-hand side of inequality (1): ``1 + (I(u∘d) + I(u∘(1-d))) / min_d' (I(u∘d') + I(u∘(1-d')))``."""
    V = check_table(V)
    u = V.sum(axis=0)
    u = u[u > 0]
    d = np.asarray(d, dtype=float)[V.sum(axis=0) > 0]
    num = float(split_directions_impurity(u, d[None, :], impurity)[0])
    den = float(split_directions_impurity(u, hypercube_directions(u.size), impurity).min())
    return 1.0 + num / den if den > 0 else np.inf
