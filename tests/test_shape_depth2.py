"""The exact depth-2 solver and the similarity bounds of the K = 1 all-thresholds search, against brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebook.shape import LiteratiSearch, exhaustive_optimum
from treebook.shape.depth2 import best_depth2_all, best_depth2_rows, depth2_gap_bound, sub_orders
from treebook.shape.literati import spec_objective

#: run a search until it proves optimality (tiny instances): no wall-clock limit, so no dependence on load
PROVE = {"time_limit": None, "max_expansions": 10**6}


def _data(rng, n_lo=2, n_hi=14, p_hi=4, C_hi=4, levels=5):
    n, p, C = int(rng.integers(n_lo, n_hi)), int(rng.integers(1, p_hi)), int(rng.integers(2, C_hi))
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    y = rng.integers(0, C, size=n)
    return X, y, C


def _value_of(tree, X, y, C, cost):
    """Regularised objective of a ``best_depth2_all`` tree, recomputed from scratch."""
    def leaf(idx):
        return idx.size - np.bincount(y[idx], minlength=C).max() if idx.size else 0

    idx = np.arange(y.size)
    if tree is None:
        return float(leaf(idx))
    j, t, left, right = tree
    total = cost
    for part, split in ((idx[X[:, j] <= t], left), (idx[X[:, j] > t], right)):
        if split is None:
            total += leaf(part)
        else:
            jj, tt = split
            total += cost + leaf(part[X[part, jj] <= tt]) + leaf(part[X[part, jj] > tt])
    return float(total)


def test_depth2_equals_exhaustive_and_its_tree_realises_it():
    rng = np.random.default_rng(0)
    for _ in range(300):
        X, y, C = _data(rng)
        cost = float(rng.choice([0.0, 0.5, 1.0, 2.5]))
        v, tree, _ = best_depth2_all(X, y, C, cost)
        assert v == pytest.approx(exhaustive_optimum(X, y, max_depth=2, max_breakpoints=1, lam=cost), abs=1e-9)
        assert _value_of(tree, X, y, C, cost) == pytest.approx(v, abs=1e-9)


def _depth1_brute(X, y, C, cost):
    """Best ``min(leaf, cost + split errors)`` over every feature and cut, by prefix class counts."""
    if y.size == 0:
        return 0.0
    best = float(y.size - np.bincount(y, minlength=C).max())
    for j in range(X.shape[1]):
        o = np.argsort(X[:, j], kind="stable")
        xs, onehot = X[o, j], np.eye(C, dtype=int)[y[o]]
        left = np.cumsum(onehot, axis=0)[:-1]
        right = onehot.sum(0) - left
        cut = xs[1:] > xs[:-1]
        if cut.any():
            i = np.arange(1, y.size)
            err = (i - left.max(1)) + (y.size - i - right.max(1))
            best = min(best, cost + float(err[cut].min()))
    return best


def test_depth2_equals_brute_force_on_larger_samples():
    """Hundreds of rows, two and more classes, ties: the per-feature similarity bounds skip scans here."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        n, p, C = int(rng.integers(40, 160)), int(rng.integers(1, 5)), int(rng.choice([2, 2, 3, 5]))
        X = np.round(rng.normal(size=(n, p)) * rng.choice([2.0, 30.0]))
        y = (rng.random(n) < 0.5).astype(int) * (X[:, 0] > 0) + rng.integers(0, C, size=n) * (rng.random(n) < 0.3)
        y = np.minimum(y, C - 1)
        cost = float(rng.choice([0.0, 0.5, 2.0]))
        want = float(n - np.bincount(y, minlength=C).max())
        for j in range(p):
            for t in np.unique(X[:, j])[:-1]:
                go = X[:, j] > t
                want = min(want, cost + _depth1_brute(X[~go], y[~go], C, cost) + _depth1_brute(X[go], y[go], C, cost))
        v, tree, _ = best_depth2_all(X, y, C, cost)
        assert v == pytest.approx(want, abs=1e-9)
        assert _value_of(tree, X, y, C, cost) == pytest.approx(v, abs=1e-9)


def test_two_class_scan_of_every_feature_equals_brute_force_for_any_number_of_lanes():
    """Two classes scan every feature in one pass, the features padded to a multiple of the vector lanes:
    1 to 17 features (padding within 8, none at 8 and 16, a second register beyond), ties included."""
    rng = np.random.default_rng(11)
    for p in range(1, 18):
        n = int(rng.integers(20, 70))
        X = np.round(rng.normal(size=(n, p)) * rng.choice([1.5, 20.0]))
        y = ((X[:, p - 1] > 0) ^ (rng.random(n) < 0.25)).astype(int)
        cost = float(rng.choice([0.0, 1.0]))
        want = float(n - np.bincount(y, minlength=2).max())
        for j in range(p):
            for t in np.unique(X[:, j])[:-1]:
                go = X[:, j] > t
                want = min(want, cost + _depth1_brute(X[~go], y[~go], 2, cost) + _depth1_brute(X[go], y[go], 2, cost))
        v, tree, _ = best_depth2_all(X, y, 2, cost)
        assert v == pytest.approx(want, abs=1e-9), p
        assert _value_of(tree, X, y, 2, cost) == pytest.approx(v, abs=1e-9)


def test_depth2_on_a_subset_of_presorted_rows_equals_a_fresh_solve():
    """best_depth2_rows (the rows of a mask, taken with their orders in compiled code) solves the same problem
    as best_depth2_all on those rows."""
    rng = np.random.default_rng(3)
    for _ in range(60):
        X, y, C = _data(rng, n_lo=4, n_hi=40)
        keep = rng.random(y.size) < 0.6
        orders = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T)
        cost = float(rng.choice([0.0, 1.0]))
        assert best_depth2_rows(X, y.astype(np.int64), orders, keep, C, cost) == best_depth2_all(
            X[keep], y[keep], C, cost)


def test_depth2_upper_bound_only_looks_for_better_trees():
    rng = np.random.default_rng(1)
    for _ in range(100):
        X, y, C = _data(rng)
        v, _, _ = best_depth2_all(X, y, C)
        ub = float(rng.integers(0, 6))
        w, tree, _ = best_depth2_all(X, y, C, upper_bound=ub)
        assert w == pytest.approx(min(v, ub))
        if v < ub:
            assert _value_of(tree, X, y, C, 0.0) == pytest.approx(v)


def test_similarity_skips_most_root_thresholds_on_real_data():
    from treebook.datasets.shape_trees import load_shape_dataset
    X, y = load_shape_dataset("raisin")
    y = np.unique(y, return_inverse=True)[1]
    v, tree, n_eval = best_depth2_all(X, y, 2)
    n_thresholds = sum(np.unique(X[:, j]).size - 1 for j in range(X.shape[1]))
    assert tree is not None and _value_of(tree, X, y, 2, 0.0) == v
    assert n_eval < n_thresholds / 5


def test_sub_orders_equal_a_fresh_sort():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(40, 3)).astype(float)
    orders = np.argsort(X, axis=0, kind="stable").T
    keep = rng.random(40) < 0.5
    np.testing.assert_array_equal(sub_orders(orders, keep), np.argsort(X[keep], axis=0, kind="stable").T)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_optimum_is_monotone_and_lipschitz_and_the_gap_bound_holds(seed):
    """OPT of the prefixes of one feature's order: non-decreasing, +1 at most per sample; the gap bound never
    exceeds the true value of any threshold strictly inside the gap."""
    rng = np.random.default_rng(seed)
    X, y, C = _data(rng, n_lo=6, n_hi=16)
    cost = float(rng.choice([0.0, 1.0]))
    o = np.argsort(X[:, 0], kind="stable")
    xs = X[o, 0]
    B = np.flatnonzero(xs[1:] > xs[:-1]) + 1
    if B.size < 3:
        return
    L = np.array([best_depth2_all(X[o[:b]], y[o[:b]], C, cost)[0] for b in B])
    R = np.array([best_depth2_all(X[o[b:]], y[o[b:]], C, cost)[0] for b in B])
    assert np.all(np.diff(L) >= -1e-9) and np.all(np.diff(R) <= 1e-9)
    assert np.all(np.diff(L) <= np.diff(B) + 1e-9) and np.all(-np.diff(R) <= np.diff(B) + 1e-9)
    a, b = 0, B.size - 1
    lb = depth2_gap_bound(B[a], B[b], L[a], R[a], L[b], R[b])
    assert lb <= (L[1:-1] + R[1:-1]).min() + 1e-9


@pytest.mark.parametrize("depth", [2, 3])
def test_similarity_search_proves_the_exhaustive_optimum(depth):
    rng = np.random.default_rng(10 + depth)
    for _ in range(12 if depth == 3 else 30):
        X, y, C = _data(rng, n_lo=5, n_hi=11 if depth == 3 else 16, p_hi=3, levels=4)
        lam = float(rng.choice([0.0, 0.5, 2.0]))
        opt = exhaustive_optimum(X, y, max_depth=depth, max_breakpoints=1, lam=lam)
        for sim in (True, False):
            s = LiteratiSearch(X, y, C, max_depth=depth, max_breakpoints=1, lam=lam, candidates="all",
                               similarity=sim, batch=2).run(**PROVE)
            assert s.root.solved and s.root.upper == pytest.approx(opt, abs=1e-9)
            assert spec_objective(s.tree_spec(), y, C, lam, 0.0) == pytest.approx(opt, abs=1e-9)


def test_similarity_depth3_real_data_matches_the_plain_search_and_bounds_are_monotone():
    """On 50 raisin samples the similarity search and the plain AO* prove the same depth-3 optimum."""
    from treebook.datasets.shape_trees import load_shape_dataset
    X, y = load_shape_dataset("raisin")
    y = np.unique(y, return_inverse=True)[1]
    idx = np.random.default_rng(0).choice(y.size, 50, replace=False)
    fast = LiteratiSearch(X[idx], y[idx], 2, max_depth=3, max_breakpoints=1, candidates="all").run(**PROVE)
    slow = LiteratiSearch(X[idx], y[idx], 2, max_depth=3, max_breakpoints=1, candidates="all",
                          similarity=False).run(time_limit=None, max_expansions=10**7)
    assert fast.root.solved and slow.root.solved and fast.root.upper == slow.root.upper
    tr = np.array(fast.trace)
    assert np.all(np.diff(tr[:, 1]) <= 1e-9) and np.all(np.diff(tr[:, 2]) >= -1e-9) and np.all(tr[:, 2] <= tr[:, 1])


@pytest.mark.parametrize("K", [1, 2])
def test_all_thresholds_search_starts_from_the_cart_tree(K):
    """Over every midpoint the greedy CART tree is the first incumbent: even with no expansion the result is
    never worse than CART, and its trace starts at or below CART's errors."""
    from treebook.shape import LiteratiClassifier
    from treebook.tree import CARTClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(int)
    for D in (2, 3, 4):
        cart = int(np.sum(CARTClassifier(max_depth=D).fit(X, y).predict(X) != y))
        est = LiteratiClassifier(max_depth=D, max_breakpoints=K, candidates="all", time_limit=30,
                                 max_expansions=0).fit(X, y)
        assert est.train_errors_ <= cart and est.trace_[0, 1] <= cart
