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

from treebook.nominal.impurity import (
    count_scale,
    entropy_table,
    impurity_code,
    partition_impurity,
    split_directions_impurity,
    weighted_impurity,  # noqa: F401  (public name of this module, see the package's __init__)
)

# The numba kernels live in ``kernels``; they stay importable from here under their old names.
from treebook.nominal.kernels import (
    _exhaustive_gray,
    _group_rows,
    _mask_impurity,
    _scan,
    _sliqext,
    _sliqext_rounds,
    _sweep_bd,
    _sweep_directions,
)

# the unchecked arithmetic of ``weighted_impurity``, for candidate rows built here from a validated table
from treebook.tree.criteria import weighted_impurity as _weighted_impurity

METHODS = (
    "hcc",
    "lca",
    "pcext",
    "pcext_counts",
    "sliqext",
    "sliqext_authors",
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


def _check_with_sums(V):
    if np.iscomplexobj(np.asarray(V)):
        raise TypeError("V must be a real n x k contingency table; got complex values")
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
        _t, j, order = _sweep_directions(W, D, crit)
    else:
        c2, tab = entropy_table(W, crit, 2.0 * D.shape[0] * n * k)
        _t, j, order = _sweep_bd(W, D, c2, tab)
    return _prefix_mask(W.shape[0], order, j)


def _pcext(W, crit):
    """PCext of Coppersmith, Hong & Hosking (1999): rank the values by ``e · v/||v||_1`` (``e`` the principal
    direction of the frequency-weighted covariance of the class-probability rows) and return the best of the
    ``n - 1`` prefixes and the ``n - 1`` adjacent swaps (prefixes first, then swaps; first minimum wins)."""
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
    vals = _weighted_impurity(cand, code) + _weighted_impurity(tot - cand, code)
    b = int(np.argmin(vals))
    mask = np.zeros(n, dtype=bool)
    if b < n - 1:
        mask[order[: b + 1]] = True
    else:
        j = b - (n - 1) + 1
        mask[order[: j - 1]] = True
        mask[order[j]] = True
    return mask


#: ``np.allclose`` tolerances with which the authors' code decides that two class distributions are identical.
_MERGE_RTOL = 1e-5
_MERGE_ATOL = 1e-8


def _pcext_counts(W, crit):
    """PCext as run in the authors' experiments (Laber, Molinaro & Pereira 2018), read from
    felipeamp/icml2018-real-datasets, ``criteria.py`` (classes ``PCExt`` for Gini and ``PCExtEntropy``
    for Entropy; the same procedure with the respective impurity).  The stored copy of felipeamp/icml-2018,
    the repository the paper names, holds Monte Carlo scripts and criteria (``criteria.py``,
    ``init_split_monte_carlo_experiment.py``) for Flip-Flop, Twoing and SLIQ-ext only, without PC-ext.

    1. Merge the values with identical class distributions: the rows ``v/||v||_1`` are sorted
       lexicographically (class 0 first, ``np.lexsort``); walking that order, a row joins the current group if
       ``np.allclose(first row of the group, row)`` (rtol 1e-5, atol 1e-8), otherwise it opens a new group.
       A group is one value whose count row is the sum of its members'.  Merged values go together
       (unless there is only one group, see below).
    2. Principal direction ``e``: eigenvector of ``sum_g N_g (p_g - u/N)(p_g - u/N)^T / (N - 1)`` (``p_g`` the
       class-probability row of group ``g``, ``N_g`` its count, ``u`` the class totals) for the eigenvalue of
       largest square (``np.linalg.eigh``; the first such eigenvalue in ascending order).  Merging does not
       change this matrix.
    3. Rank the groups by ``e · N_g`` -- the projection of the **count rows** (stable sort here; their
       ``argsort`` is not stable).
    4. Candidates, in their evaluation order: for ``j = 1 .. m-1`` (``m`` groups) the prefix ``P_j`` of the ranking, then the
       adjacent swap ``P_j - o_j + o_{j+1}``; the first strictly smallest impurity wins.

    What differs from Coppersmith et al.'s PCext (:func:`_pcext`, ``"pcext"``): the projection of count rows
    ``e · N_v = ||v||_1 (e · p_v)`` instead of probability rows ``e · p_v`` (values with many examples are pushed
    to the ends of the ranking, so the ranking is no longer a function of the class distribution: at ``k = 2``
    it is not Breiman's order and the procedure is not exact), the merging of step 1, the eigenvalue of largest
    square instead of the largest eigenvalue (the same for a covariance matrix unless the top eigenvalue is
    repeated) and the interleaved order of prefixes and swaps (ties only).  Two details of their code are not
    copied: it also evaluates the trivial split (every value right, impurity ``I(u)``) first, which a proper
    candidate replaces only if strictly better -- it can be returned only when every candidate has impurity
    ``I(u)``; here the best proper candidate is returned (same impurity).  When all values share one
    distribution (one group) every partition has impurity ``I(u)`` and the first value goes left alone.
    Empty classes, which we remove beforehand, add only zero rows and columns to their covariance.
    """
    n, k = W.shape
    rs = W.sum(axis=1)
    P = W / rs[:, None]
    group = _group_rows(P, np.lexsort(P.T[::-1]), _MERGE_RTOL, _MERGE_ATOL)
    m = int(group.max()) + 1
    if m == 1:
        mask = np.zeros(n, dtype=bool)
        mask[0] = True
        return mask
    G = np.zeros((m, k))
    np.add.at(G, group, W)
    gs = G.sum(axis=1)
    tot = G.sum(axis=0)
    N = float(gs.sum())
    C = G / gs[:, None] - tot / N
    cov = (C * gs[:, None]).T @ C  # their factor 1/(N - 1) changes no eigenvector
    vals_e, vecs = np.linalg.eigh(cov)
    e = vecs[:, int(np.argmax(np.square(vals_e)))]
    order = np.argsort(G @ e, kind="stable")
    Go = G[order]
    pref = np.cumsum(Go, axis=0)[:-1]  # P_j, j = 1..m-1
    cand = np.empty((2 * (m - 1), k))
    cand[0::2] = pref
    cand[1::2] = pref - Go[:-1] + Go[1:]  # P_j - o_j + o_{j+1}
    code = ("gini", "entropy")[crit]
    vals = _weighted_impurity(cand, code) + _weighted_impurity(tot - cand, code)
    b = int(np.argmin(vals))
    j = b // 2 + 1
    chosen = order[:j] if b % 2 == 0 else np.append(order[: j - 1], order[j])
    return np.isin(group, chosen)


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
    if method == "pcext_counts":
        return _pcext_counts(W, crit)
    if method in ("sliqext", "sliqext_authors"):
        c2, tab = entropy_table(W, crit, 1.0 * n * n * k)
        return (_sliqext if method == "sliqext" else _sliqext_rounds)(W, c2, tab)
    if method == "exhaustive":
        return _exhaustive(W, crit)
    if method == "breiman":
        return _breiman(W, crit)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def candidate_count(method: str, n: int, k: int) -> int:
    """Partitions whose impurity a procedure evaluates on a table of ``n`` non-empty values and ``k`` classes.

    An implementation-independent measure of a split's cost (Table 3 compares times of different code):
    the ``B_d`` sweeps evaluate ``n - 1`` prefixes per direction (HcC and Twoing ``2**(k-1) - 1`` directions,
    one-vs-rest ``k``, LCA and the balanced direction one); PCext ``n - 1`` prefixes and ``n - 1`` swaps (the
    authors' variant the same over its merged values, at most ``n``); SLIQext ``n + (n-1) + ... + 2`` single
    moves (the authors' rounds, ``"sliqext_authors"``, at most ``(n-1) + (n-2) + ... + 1``: a round of ``m``
    values evaluates the ``m - 1`` running partitions that keep a value left, and moves at least one); the
    exhaustive search every one of the ``2**(n-1) - 1`` partitions. The sorts (one per direction) are not
    counted.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n, k = int(n), int(k)
    if n < 2 or k < 1:
        raise ValueError(f"a split needs n >= 2 values and k >= 1 classes; got n={n}, k={k}")
    if k == 1:
        return 0
    directions = {"hcc": 2 ** (k - 1) - 1, "twoing": 2 ** (k - 1) - 1, "one_vs_rest": k, "lca": 1, "balanced": 1,
                  "breiman": 1}
    if method in directions:
        return directions[method] * (n - 1)
    if method in ("pcext", "pcext_counts"):
        return 2 * (n - 1)
    if method == "sliqext":
        return n * (n + 1) // 2 - 1
    if method == "sliqext_authors":
        return n * (n - 1) // 2
    return 2 ** (n - 1) - 1  # exhaustive


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
        ``"pcext"`` and ``"sliqext"`` (Coppersmith, Hong & Hosking 1999), ``"pcext_counts"`` (PCext as the
        authors' experiment code runs it: values ranked by the principal direction times their count rows,
        identical class distributions merged; see :func:`_pcext_counts`), ``"sliqext_authors"`` (SLIQext as the
        authors' tree code runs it: rounds that move the values left in row order cumulatively, keep the best
        running prefix and go on from it; see :func:`treebook.nominal.kernels._sliqext_rounds`),
        ``"exhaustive"`` (all ``2**(n-1) - 1`` partitions, exact) or ``"breiman"`` (exact for ``k = 2``,
        Theorem 2.4).
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
    # counts whose squares overflow: search the table divided by an exact power of two (the same partitions
    # for Gini, whose impurity scales exactly), and scale the impurity back
    scale = count_scale(V)
    if scale != 1.0:
        V, rs, cs = _check_with_sums(V / scale)
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
    return Partition(left=left, impurity=float(_mask_impurity(V, left, crit)) * scale, method=method,
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
