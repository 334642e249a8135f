"""Tests of ``method="pcext_counts"``: PCext as the authors' experiment code ran it (count-row projection,
values with identical class distributions merged), next to Coppersmith et al.'s ``"pcext"``."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nominal_oracles import brute_force_opt, random_tables, tables

from treebook.nominal import METHODS, at_least_as_good, best_partition, partition_impurity, weighted_impurity

RTOL = 1e-9


def best_of_candidates(V, groups, order, impurity):
    """Prefixes P_j of ``order`` and the adjacent swaps P_j - o_j + o_{j+1}, evaluated in the authors' sequence
    (P_1, S_1, P_2, S_2, ...); the first strictly smallest impurity wins. ``groups[g]`` lists the values of
    group ``g``. Returns (impurity, mask over the values of V)."""
    best, best_mask = np.inf, None
    for j in range(1, len(order)):
        for cand in (order[:j], order[: j - 1] + [order[j]]):
            mask = np.zeros(np.asarray(V).shape[0], dtype=bool)
            for g in cand:
                mask[groups[g]] = True
            val = partition_impurity(V, mask, impurity)
            if val < best:
                best, best_mask = val, mask
    return best, best_mask


def reference_pcext_counts(V):
    """Plain-Python reading of the authors' PCext (felipeamp/icml2018-real-datasets, criteria.py):
    merge values with identical class distributions (exact fractions, groups in lexicographic order of the
    distribution), weighted covariance of the distributions, the eigenvector of the largest squared
    eigenvalue, groups ranked by that eigenvector times their summed count rows (stable).
    Returns (groups, order, eigenvalues, scores)."""
    V = np.asarray(V, dtype=float)
    n, k = V.shape
    by_dist = {}
    for i in range(n):
        s = int(V[i].sum())
        by_dist.setdefault(tuple(Fraction(int(x), s) for x in V[i]), []).append(i)
    groups = [by_dist[key] for key in sorted(by_dist)]
    G = np.array([V[g].sum(axis=0) for g in groups])
    N = V.sum()
    mean = V.sum(axis=0) / N
    cov = np.zeros((k, k))
    for i in range(n):
        d = V[i] / V[i].sum() - mean
        cov += V[i].sum() * np.outer(d, d)
    w, vecs = np.linalg.eigh(cov / (N - 1))
    e = vecs[:, int(np.argmax(w**2))]
    scores = [sum(float(e[c] * G[g, c]) for c in range(k)) for g in range(len(groups))]
    order = sorted(range(len(groups)), key=lambda g: scores[g])
    return groups, order, w, scores


def same_partition(a, b):
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    return bool(np.array_equal(a, b) or np.array_equal(a, ~b))


# ------------------------------------------------------------------------------------------- oracles
def test_pcext_counts_is_a_method():
    assert "pcext_counts" in METHODS and "pcext" in METHODS
    p = best_partition(np.array([[3, 1, 0], [0, 2, 2], [1, 1, 5]]), "pcext_counts", "entropy")
    assert p.method == "pcext_counts" and p.criterion == "entropy"


@settings(max_examples=150, deadline=None)
@given(tables, st.sampled_from(["gini", "entropy"]))
def test_pcext_counts_reports_its_mask_impurity_and_is_never_below_opt(V, impurity):
    V = V.astype(float)
    nonempty = V.sum(axis=1) > 0
    p = best_partition(V, "pcext_counts", impurity)
    assert p.left.dtype == bool and p.left.shape == (V.shape[0],)
    assert p.impurity == pytest.approx(partition_impurity(V, p.left, impurity), rel=1e-12, abs=1e-9)
    assert not p.left[~nonempty].any(), "empty values must go right"
    if nonempty.sum() >= 2:
        assert p.left[nonempty].any() and not p.left[nonempty].all(), "both sides must hold examples"
        opt = best_partition(V, "exhaustive", impurity).impurity
        assert at_least_as_good(opt, p.impurity, RTOL)
        # Lemma 2.1 (superadditivity): no partition is worse than not splitting; the paper gives PCext no
        # approximation guarantee ("For none of them approximation guarantees are available", section 1.2).
        assert at_least_as_good(p.impurity, weighted_impurity(V.sum(axis=0), impurity), RTOL)


@pytest.mark.parametrize("impurity", ["gini", "entropy"])
def test_pcext_counts_matches_a_plain_reading_of_the_authors_procedure(impurity):
    """Random tables (k = 2..5, many identical distributions among small counts): same impurity as the
    reference above. Tables whose ranking has (near-)ties or whose top eigenvalue is (nearly) degenerate are
    skipped: there the order depends on rounding, in their code as in ours."""
    rng = np.random.default_rng(21 if impurity == "gini" else 22)
    compared = 0
    for V in random_tables(rng, 600, n_range=(2, 10), k_range=(2, 5), high=5):
        groups, order, w, scores = reference_pcext_counts(V)
        p = best_partition(V, "pcext_counts", impurity)
        if len(groups) == 1:
            assert p.impurity == pytest.approx(weighted_impurity(V.sum(axis=0), impurity), rel=1e-9, abs=1e-9)
            continue
        s = np.sort(scores)
        if np.min(np.diff(s)) <= 1e-9 * max(1.0, np.abs(s).max()) or w[-1] - w[-2] <= 1e-9 * w[-1]:
            continue
        expected, mask = best_of_candidates(V, groups, order, impurity)
        assert p.impurity == pytest.approx(expected, rel=1e-9, abs=1e-9), V.tolist()
        compared += 1
    assert compared >= 300


# ------------------------------------------------------------------------------- distinguishing table
# Values a, b, c, d of a 2-class table. For k = 2 every class distribution lies on the line p1 + p2 = 1, so the
# principal direction of the weighted covariance is +-(1, -1)/sqrt(2):
#   probability rows (Coppersmith et al.):  score ~ p1 - p2 = 2 p1 - 1, p1 = (2/3, 1, 5/7, 5/6)  -> order a c d b
#   count rows (authors' code):             score ~ n1 - n2 = (2, 1, 3, 4)                       -> order b a c d
# (or the reverse orders, depending on the eigenvector's sign: the same candidate partitions).
PIN_V = np.array([[4, 2], [1, 0], [5, 2], [5, 1]], dtype=float)
PIN_ORDER_PROBS = [0, 2, 3, 1]
PIN_ORDER_COUNTS = [1, 0, 2, 3]


def up_to_reversal(scores, expected):
    order = [int(i) for i in np.argsort(scores, kind="stable")]
    return order in (expected, expected[::-1])


def test_pinned_table_orders_are_the_hand_derived_ones():
    P = PIN_V / PIN_V.sum(axis=1, keepdims=True)
    C = P - PIN_V.sum(axis=0) / PIN_V.sum()
    _, vecs = np.linalg.eigh((C * PIN_V.sum(axis=1)[:, None]).T @ C)
    e = vecs[:, -1]
    assert abs(abs(e[0]) - np.sqrt(0.5)) < 1e-12 and abs(e[0] + e[1]) < 1e-12
    assert up_to_reversal(P @ e, PIN_ORDER_PROBS)
    assert up_to_reversal(PIN_V @ e, PIN_ORDER_COUNTS)


@pytest.mark.parametrize("impurity", ["gini", "entropy"])
def test_count_rows_and_probability_rows_give_different_partitions(impurity):
    """Each variant returns the best of the prefixes and adjacent swaps of its own order. Breiman's theorem
    (Theorem 2.4) makes the probability-row order exact at k = 2 (optimum {a, c} | {b, d}); the count-row
    order never offers {a, c} | {b, d} and misses the optimum."""
    groups = [[0], [1], [2], [3]]  # four distinct distributions: nothing is merged
    exp_probs, mask_probs = best_of_candidates(PIN_V, groups, PIN_ORDER_PROBS, impurity)
    exp_counts, mask_counts = best_of_candidates(PIN_V, groups, PIN_ORDER_COUNTS, impurity)
    opt = brute_force_opt(PIN_V, impurity)
    assert exp_probs == pytest.approx(opt) and same_partition(mask_probs, [True, False, True, False])
    assert exp_counts > opt * (1 + 1e-3)
    pc = best_partition(PIN_V, "pcext", impurity)
    pcc = best_partition(PIN_V, "pcext_counts", impurity)
    assert pc.impurity == pytest.approx(exp_probs, rel=1e-12) and same_partition(pc.left, mask_probs)
    assert pcc.impurity == pytest.approx(exp_counts, rel=1e-12) and same_partition(pcc.left, mask_counts)
    if impurity == "gini":  # by hand: {b} | {a, c, d} = 0 + (19 - 221/19); {a, c} | {b, d} = 13 - 97/13 + 7 - 37/7
        assert same_partition(pcc.left, [False, True, False, False])
        assert pcc.impurity == pytest.approx(19 - 221 / 19)
        assert pc.impurity == pytest.approx(13 - 97 / 13 + 7 - 37 / 7)


def test_pcext_counts_is_not_exact_when_k_is_two():
    """Unlike every B_d method (and Coppersmith's PCext), ranking count rows is not Breiman's order."""
    rng = np.random.default_rng(23)
    misses = 0
    for V in random_tables(rng, 300, n_range=(3, 8), k_range=(2, 2), high=8):
        for impurity in ("gini", "entropy"):
            opt = best_partition(V, "exhaustive", impurity).impurity
            assert best_partition(V, "pcext", impurity).impurity == pytest.approx(opt, rel=1e-9, abs=1e-9)
            misses += best_partition(V, "pcext_counts", impurity).impurity > opt * (1 + 1e-9)
    assert misses > 0


# ------------------------------------------------------------------------------- merging of values
def test_identical_distributions_are_merged_and_kept_together():
    """(1, 2, 0), (2, 4, 0) and (3, 6, 0) share one class distribution: one group, one side."""
    V = np.array([[1, 2, 0], [5, 0, 1], [2, 4, 0], [0, 1, 6], [3, 6, 0], [2, 2, 2]], dtype=float)
    for impurity in ("gini", "entropy"):
        p = best_partition(V, "pcext_counts", impurity)
        assert p.left[0] == p.left[2] == p.left[4]
        merged = np.array([[6, 12, 0], [5, 0, 1], [0, 1, 6], [2, 2, 2]], dtype=float)
        q = best_partition(merged, "pcext_counts", impurity)
        assert p.impurity == pytest.approx(q.impurity, rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(tables, st.sampled_from(["gini", "entropy"]), st.integers(0, 2**32 - 1), st.integers(2, 4))
def test_splitting_a_value_into_proportional_copies_changes_nothing(V, impurity, seed, c):
    """Merging makes the procedure see V and V with row i replaced by (row i, (c-1) row i) identically."""
    V = V.astype(float)
    rows = np.flatnonzero(V.sum(axis=1) > 0)
    if rows.size < 2:
        return
    i = int(np.random.default_rng(seed).choice(rows))
    P = V[rows] / V[rows].sum(axis=1, keepdims=True)
    if np.allclose(P, P[0]):
        return  # one group: no proper partition keeps it together (see test_single_group_...)
    W = np.vstack([V, (c - 1) * V[i]])
    V2 = V.copy()
    V2[i] *= c
    p = best_partition(W, "pcext_counts", impurity)
    q = best_partition(V2, "pcext_counts", impurity)
    assert p.left[i] == p.left[-1]
    assert p.impurity == pytest.approx(q.impurity, rel=1e-9, abs=1e-9)
    assert np.array_equal(p.left[:-1], q.left)


def test_single_group_returns_the_first_value_alone():
    """All values share one distribution: every partition has impurity I(u); the first value goes left."""
    V = np.array([[0, 0, 0], [1, 2, 1], [2, 4, 2], [3, 6, 3]], dtype=float)
    for impurity in ("gini", "entropy"):
        p = best_partition(V, "pcext_counts", impurity)
        assert p.left.tolist() == [False, True, False, False]
        assert p.impurity == pytest.approx(weighted_impurity(V.sum(axis=0), impurity), rel=1e-12)


# ------------------------------------------------------------------------------- PCext unchanged
def reference_pcext_probs(V, impurity):
    """Coppersmith et al.'s PCext as ``"pcext"`` implements it: probability rows, no merging, largest
    eigenvalue; best of the prefixes and adjacent swaps."""
    V = np.asarray(V, dtype=float)
    rs = V.sum(axis=1)
    P = V / rs[:, None]
    C = P - V.sum(axis=0) / V.sum()
    _, vecs = np.linalg.eigh((C * rs[:, None]).T @ C)
    order = list(np.argsort(P @ vecs[:, -1], kind="stable"))
    return best_of_candidates(V, [[i] for i in range(V.shape[0])], order, impurity)[0]


def test_pcext_is_still_coppersmiths_procedure():
    rng = np.random.default_rng(24)
    for V in random_tables(rng, 200, n_range=(2, 9), k_range=(2, 5), high=8):
        for impurity in ("gini", "entropy"):
            assert best_partition(V, "pcext", impurity).impurity == pytest.approx(
                reference_pcext_probs(V, impurity), rel=1e-9, abs=1e-9)
