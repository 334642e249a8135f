"""Oracle and property tests of the nominal split procedures (Laber, Molinaro & Pereira, 2018)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from nominal_oracles import brute_force_opt, random_tables

from treebook.nominal import (
    METHODS,
    a_d,
    at_least_as_good,
    b_d,
    best_partition,
    collapse,
    hypercube_directions,
    most_balanced_direction,
    partition_impurity,
    split_directions_impurity,
    theorem_3_2_bound,
    weighted_impurity,
)

HEURISTICS = [m for m in METHODS if m not in ("exhaustive", "breiman")]
RTOL = 1e-9



def leq(a, b):
    return bool(at_least_as_good(a, b, RTOL))


tables = arrays(
    np.int64,
    st.tuples(st.integers(2, 8), st.integers(2, 5)),
    elements=st.integers(0, 12),
).filter(lambda V: V.sum() > 0)


# ------------------------------------------------------------------------------------------- impurities
def test_weighted_impurity_formulas():
    v = np.array([3.0, 1.0, 0.0])
    p = v / v.sum()
    assert weighted_impurity(v, "gini") == pytest.approx(4 * (1 - np.sum(p**2)))
    assert weighted_impurity(v, "entropy") == pytest.approx(4 * -(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25)))
    assert weighted_impurity(np.zeros(3), "entropy") == 0.0
    M = np.array([[[1, 1], [0, 0]], [[2, 0], [5, 5]]], dtype=float)
    np.testing.assert_allclose(weighted_impurity(M, "gini"), [[1.0, 0.0], [0.0, 5.0]])
    np.testing.assert_allclose(weighted_impurity(M, "entropy"), [[2.0, 0.0], [0.0, 10.0]])


def test_weighted_impurity_matches_tree_core_if_available():
    criteria = pytest.importorskip("treebook.tree.criteria")
    rng = np.random.default_rng(3)
    C = rng.integers(0, 9, size=(40, 5)).astype(float)
    C[0] = 0
    for name in ("gini", "entropy"):
        np.testing.assert_allclose(weighted_impurity(C, name), criteria.weighted_impurity(C, name), atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(tables, st.sampled_from(["gini", "entropy"]), st.floats(0.5, 20))
def test_superadditivity_and_homogeneity(V, impurity, c):
    """Lemma 2.1 (I(u_L + u_R) >= I(u_L) + I(u_R)) and I(c v) = c I(v)."""
    V = V.astype(float)
    a, b = V[0], V[1:].sum(axis=0)
    assert weighted_impurity(a + b, impurity) >= weighted_impurity(a, impurity) + weighted_impurity(b, impurity) - 1e-9
    assert weighted_impurity(c * a, impurity) == pytest.approx(c * weighted_impurity(a, impurity), abs=1e-9)


# ------------------------------------------------------------------------------------------- oracles
@settings(max_examples=150, deadline=None)
@given(tables, st.sampled_from(["gini", "entropy"]))
def test_every_method_reports_the_impurity_of_its_mask_and_is_never_below_opt(V, impurity):
    opt = best_partition(V, "exhaustive", impurity)
    nonempty = V.sum(axis=1) > 0
    for method in HEURISTICS:
        p = best_partition(V, method, impurity)
        assert p.left.dtype == bool and p.left.shape == (V.shape[0],)
        assert p.impurity == pytest.approx(partition_impurity(V, p.left, impurity), rel=1e-12, abs=1e-9)
        assert leq(opt.impurity, p.impurity)
        assert not p.left[~nonempty].any(), "empty values must go right"
        if nonempty.sum() >= 2:
            assert p.left[nonempty].any() and not p.left[nonempty].all(), "both sides must hold examples"


def test_exhaustive_matches_itertools_brute_force():
    rng = np.random.default_rng(0)
    for V in random_tables(rng, 150, n_range=(2, 8), k_range=(2, 4)):
        for impurity in ("gini", "entropy"):
            assert best_partition(V, "exhaustive", impurity).impurity == pytest.approx(
                brute_force_opt(V, impurity), rel=1e-12, abs=1e-9
            )


@pytest.mark.parametrize("impurity", ["gini", "entropy"])
def test_approximation_guarantees_on_thousands_of_tables(impurity):
    """Theorem 3.5 (HcC <= 2 OPT), Theorems 4.2/4.5 (LCA <= 2/3 OPT), Theorem 4.4 (balanced <= 2 OPT, entropy)."""
    rng = np.random.default_rng(1 if impurity == "gini" else 2)
    lca_bound = 2.0 if impurity == "gini" else 3.0
    worst = {m: 1.0 for m in HEURISTICS}
    for V in random_tables(rng, 2000, n_range=(2, 10), k_range=(2, 6)):
        opt = best_partition(V, "exhaustive", impurity).impurity
        res = {m: best_partition(V, m, impurity).impurity for m in HEURISTICS}
        for m, val in res.items():
            assert leq(opt, val)
            if opt > 0:
                worst[m] = max(worst[m], val / opt)
        assert leq(res["hcc"], 2 * opt)
        assert leq(res["lca"], lca_bound * opt)
        if impurity == "entropy":
            assert leq(res["balanced"], 2 * opt)
        # HcC takes the best B_d over all directions, so it is never worse than the single-direction methods
        for m in ("lca", "one_vs_rest", "balanced"):
            assert leq(res["hcc"], res[m])
        assert leq(res["one_vs_rest"], res["lca"])
    assert worst["hcc"] <= 2.0 + 1e-9 and worst["lca"] <= lca_bound + 1e-9


def test_all_methods_are_exact_when_k_is_two():
    """Theorem 2.4 (Breiman): sorting by v_1/||v|| and sweeping is optimal; every B_d/A_d method inherits it.
    SLIQext (greedy, in both readings) and pcext_counts (ranks count rows, not v_1/||v||) are not of this family."""
    rng = np.random.default_rng(4)
    exact_methods = [m for m in HEURISTICS if m not in ("sliqext", "sliqext_authors", "pcext_counts")] + ["breiman"]
    for V in random_tables(rng, 600, n_range=(2, 10), k_range=(2, 2), high=30):
        for impurity in ("gini", "entropy"):
            opt = best_partition(V, "exhaustive", impurity).impurity
            for m in exact_methods:
                assert best_partition(V, m, impurity).impurity == pytest.approx(opt, rel=1e-9, abs=1e-9), m


def test_sliqext_is_not_exact_when_k_is_two():
    """SLIQext is a greedy heuristic, not a B_d method: on this 2-class table it misses the optimum (Entropy),
    while B_{e_1} (Breiman's sweep) finds it."""
    V = np.array([[3, 1], [0, 1], [5, 9], [4, 7], [0, 2]], dtype=float)
    opt = best_partition(V, "exhaustive", "entropy").impurity
    assert best_partition(V, "sliqext", "entropy").impurity > opt * (1 + 1e-6)
    assert best_partition(V, "breiman", "entropy").impurity == pytest.approx(opt)
    rng = np.random.default_rng(5)
    for W in random_tables(rng, 200, n_range=(2, 10), k_range=(2, 2), high=30):
        assert leq(best_partition(W, "exhaustive", "gini").impurity, best_partition(W, "sliqext", "gini").impurity)


def test_breiman_requires_two_classes():
    with pytest.raises(ValueError, match="k = 2"):
        best_partition(np.ones((3, 3)), "breiman")


# ------------------------------------------------------------------------------------------- theory
@pytest.mark.parametrize("impurity", ["gini", "entropy"])
def test_theorem_3_2_bound_for_every_direction(impurity):
    rng = np.random.default_rng(6)
    for V in random_tables(rng, 200, n_range=(3, 8), k_range=(2, 4)):
        opt = best_partition(V, "exhaustive", impurity).impurity
        for d in hypercube_directions(V.shape[1]):
            bd = b_d(V, d, impurity).impurity
            ad = a_d(V, d, impurity).impurity
            assert leq(bd, ad), "Proposition 3.3 (i): I(B_d) <= I(A_d)"
            assert leq(ad, theorem_3_2_bound(V, d, impurity) * opt), "inequality (1)"


def test_a_d_solves_the_collapsed_instance_optimally():
    """Proposition 3.3 (ii)."""
    rng = np.random.default_rng(7)
    for V in random_tables(rng, 150, n_range=(2, 8), k_range=(3, 5)):
        for impurity in ("gini", "entropy"):
            d = hypercube_directions(V.shape[1])[rng.integers(2 ** (V.shape[1] - 1) - 1)]
            C = collapse(V, d)
            if (C.sum(axis=1) == 0).any():
                continue
            p = a_d(V, d, impurity)
            assert partition_impurity(C, p.left, impurity) == pytest.approx(
                brute_force_opt(C, impurity), rel=1e-9, abs=1e-9
            )


def test_lemma_4_1_gini_largest_class_minimises_denominator():
    rng = np.random.default_rng(8)
    for _ in range(300):
        k = rng.integers(2, 8)
        u = rng.integers(1, 100, size=k).astype(float)
        D = hypercube_directions(k)
        vals = split_directions_impurity(u, D, "gini")
        e = np.zeros(k)
        e[np.argmax(u)] = 1
        assert split_directions_impurity(u, e[None], "gini")[0] <= vals.min() + 1e-9


def test_lemma_4_3_entropy_prefers_balanced_directions():
    rng = np.random.default_rng(9)
    for _ in range(200):
        k = rng.integers(2, 7)
        u = rng.integers(1, 60, size=k).astype(float)
        D = hypercube_directions(k)
        vals = split_directions_impurity(u, D, "entropy")
        bal = np.minimum(D @ u, (1 - D) @ u)
        for a in range(len(D)):
            for b in range(len(D)):
                if bal[a] > bal[b]:
                    assert vals[a] < vals[b]
                elif bal[a] == bal[b]:
                    assert vals[a] == pytest.approx(vals[b])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=2, max_size=9))
def test_subset_sum_direction_is_most_balanced(u):
    u = np.array(u, dtype=float)
    d = most_balanced_direction(u)
    assert set(np.unique(d)) <= {0.0, 1.0} and 0 < d.sum() < u.size
    D = hypercube_directions(u.size)
    best = np.minimum(D @ u, (1 - D) @ u).max()
    assert min(d @ u, (1 - d) @ u) == best
    # non-integer totals use the enumeration
    d2 = most_balanced_direction(u + 0.5)
    assert min(d2 @ (u + 0.5), (1 - d2) @ (u + 0.5)) == pytest.approx(
        np.minimum(D @ (u + 0.5), (1 - D) @ (u + 0.5)).max()
    )


def test_section_4_1_instance_a_ei_ratio_approaches_two():
    """V = {(x,0,0), (0,x,0), (c,0,c)}: A_{e_i*} tends to ratio 2 for Gini as x/c grows (tie broken by a tiny
    extra count in class 3 so that the bad partition is the unique choice); B_{e_i*} (LCA) is optimal here."""
    ratios = []
    for x in (10.0, 100.0, 1000.0, 10000.0):
        V = np.array([[x, 0, 0], [0, x, 0], [1.0, 0, 1.001]])
        opt = best_partition(V, "exhaustive", "gini").impurity
        e = np.array([1.0, 0, 0])
        ratios.append(a_d(V, e, "gini").impurity / opt)
        assert best_partition(V, "lca", "gini").impurity == pytest.approx(opt)
    assert all(np.diff(ratios) > 0)
    assert ratios[-1] > 1.99 and ratios[-1] <= 2.0


@settings(max_examples=50, deadline=None)
@given(tables, st.sampled_from(["gini", "entropy"]), st.integers(0, 2**32 - 1))
def test_opt_invariant_to_row_and_column_permutations_and_scaling(V, impurity, seed):
    rng = np.random.default_rng(seed)
    V = V.astype(float)
    opt = best_partition(V, "exhaustive", impurity).impurity
    W = V[rng.permutation(V.shape[0])][:, rng.permutation(V.shape[1])]
    assert best_partition(W, "exhaustive", impurity).impurity == pytest.approx(opt, rel=1e-9, abs=1e-9)
    assert best_partition(3 * V, "exhaustive", impurity).impurity == pytest.approx(3 * opt, rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------------------------------- edge cases
def test_zero_rows_go_right_and_zero_columns_are_ignored():
    V = np.array([[5, 0, 0], [0, 0, 0], [0, 4, 0], [1, 1, 0]], dtype=float)
    for m in METHODS:
        if m == "breiman":
            continue
        p = best_partition(V, m, "gini")
        assert not p.left[1]
        q = best_partition(V[[0, 2, 3]][:, :2], m, "gini")
        assert p.impurity == pytest.approx(q.impurity)


def test_degenerate_tables():
    one_value = np.array([[3, 4], [0, 0], [0, 0]], dtype=float)
    p = best_partition(one_value, "hcc", "entropy")
    assert p.left.tolist() == [True, False, False]
    assert p.impurity == pytest.approx(weighted_impurity(one_value.sum(0), "entropy"))
    one_class = np.array([[3, 0], [2, 0], [7, 0]], dtype=float)
    for m in METHODS:
        p = best_partition(one_class, m, "gini")
        assert p.impurity == 0.0 and 0 < p.left.sum() < 3


@pytest.mark.parametrize(
    "V, match",
    [
        (np.array([[1.0, -1.0], [2.0, 3.0]]), "negative"),
        (np.array([[1.0, np.nan], [2.0, 3.0]]), "NaN"),
        (np.array([[1.0, np.inf], [2.0, 3.0]]), "NaN or infinite"),
        (np.array([[1.0, 2.0]]), "at least 2 values"),
        (np.array([[1.0], [2.0]]), "at least 2 classes"),
        (np.zeros((3, 2)), "no counts"),
        (np.ones(4), "2-D"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_bad_tables_raise_value_error(V, match):
    with pytest.raises(ValueError, match=match):
        best_partition(V)


def test_bad_method_or_impurity():
    with pytest.raises(ValueError, match="method"):
        best_partition(np.ones((3, 2)), "nope")
    with pytest.raises(ValueError, match="impurity"):
        best_partition(np.ones((3, 2)), "hcc", "misclassification")
    with pytest.raises(ValueError, match="exhaustive"):
        best_partition(np.ones((40, 2)), "exhaustive")


def test_entropy_table_path_agrees_with_logarithms():
    """Integer tables use a c*log2(c) look-up table; non-integer ones use logarithms: same optima."""
    rng = np.random.default_rng(11)
    for V in random_tables(rng, 100, n_range=(3, 12), k_range=(2, 6)):
        W = V * (1 + 1e-13) + 1e-300  # non-integer, same order of every comparison up to rounding
        for m in ("hcc", "sliqext", "exhaustive"):
            a = best_partition(V, m, "entropy").impurity
            b = best_partition(W, m, "entropy").impurity
            assert a == pytest.approx(b, rel=1e-9)
        assert best_partition(V, "exhaustive", "entropy").impurity == pytest.approx(brute_force_opt(V, "entropy"))


def test_hcc_never_worse_than_single_direction_methods_on_tie_heavy_tables():
    """Entries in {0, 1, 2} make many values tie on r(v); HcC must still dominate LCA, one-vs-rest, balanced."""
    rng = np.random.default_rng(12)
    for V in random_tables(rng, 800, n_range=(3, 14), k_range=(2, 6), high=3):
        for impurity in ("gini", "entropy"):
            h = best_partition(V, "hcc", impurity).impurity
            for m in ("lca", "one_vs_rest", "balanced"):
                assert leq(h, best_partition(V, m, impurity).impurity), (m, impurity, V.tolist())


# ------------------------------------------------------------------------------------------- module layout
def test_partitions_module_keeps_its_names_and_the_kernels_live_in_kernels():
    """The numba kernels moved to ``treebook.nominal.kernels``; ``treebook.nominal.partitions`` still exposes
    the public API and the kernels under their old names."""
    from treebook.nominal import kernels, partitions

    public = ["WIN_RTOL", "at_least_as_good", "best_partition", "METHODS", "MAX_EXHAUSTIVE_VALUES", "Partition",
              "a_d", "b_d", "check_table", "collapse", "hypercube_directions", "most_balanced_direction",
              "theorem_3_2_bound", "partition_impurity", "split_directions_impurity", "weighted_impurity"]
    moved = ["_scan", "_mask_impurity", "_sweep_directions", "_sweep_bd", "_exhaustive_gray", "_sliqext"]
    for name in public + moved + ["_check_with_sums", "_pcext", "_solve_clean", "_b_directions"]:
        assert hasattr(partitions, name), name
    for name in moved:
        assert getattr(partitions, name) is getattr(kernels, name)
        assert hasattr(getattr(kernels, name), "py_func"), f"{name} must stay a numba kernel"


def test_candidate_counts_are_the_partitions_each_procedure_evaluates():

    from treebook.nominal import candidate_count, hypercube_directions

    for n, k in [(2, 2), (5, 3), (9, 4), (12, 9)]:
        assert candidate_count("hcc", n, k) == len(hypercube_directions(k)) * (n - 1)
        assert candidate_count("lca", n, k) == n - 1 and candidate_count("one_vs_rest", n, k) == k * (n - 1)
        assert candidate_count("pcext", n, k) == 2 * (n - 1)
        # SLIQext: n - 1 rounds, each trying every value still on the left
        assert candidate_count("sliqext", n, k) == sum(range(2, n + 1))
    # the exhaustive search: every proper partition up to swapping the sides
    n = 6
    proper = {frozenset(c) for r in range(1, n) for c in itertools.combinations(range(n), r)}
    assert candidate_count("exhaustive", n, 3) == len({min(s, frozenset(range(n)) - s, key=sorted) for s in proper})
    with pytest.raises(ValueError, match="method must be one of"):
        candidate_count("nope", 5, 3)
    with pytest.raises(ValueError, match="n >= 2"):
        candidate_count("hcc", 1, 3)
