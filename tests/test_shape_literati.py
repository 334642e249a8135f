"""Literati (AO* over the shape-tree AND/OR graph) against brute force and the paper's propositions."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from treebook.datasets.shape_trees import load_shape_dataset
from treebook.shape import LiteratiClassifier, LiteratiSearch, best_shape_1d, exhaustive_optimum
from treebook.shape.literati import spec_objective

#: run a search until it proves optimality (tiny instances): no wall-clock limit, so no dependence on load
PROVE = {"time_limit": None, "max_expansions": 10**6}


def _tiny(rng, n_max=16):
    n = int(rng.integers(6, n_max))
    p = int(rng.integers(1, 4))
    C = int(rng.integers(2, 4))
    X = rng.integers(0, 5, size=(n, p)).astype(float)
    y = rng.integers(0, C, size=n)
    y[:C] = np.arange(C)
    return X, y, C


def _tree_objective(est, X, y, lam, alpha):
    errs = int(np.sum(est.predict(X) != y))
    return errs + sum(lam + alpha * s.n_breakpoints for s in est.tree_.splits if s is not None)


@pytest.mark.parametrize("mode", ["all", "cart"])
@pytest.mark.parametrize("exact_depth1", [True, False])
def test_proved_optimum_equals_exhaustive(mode, exact_depth1):
    rng = np.random.default_rng(7 + exact_depth1 + 3 * (mode == "all"))
    for _ in range(25):
        X, y, C = _tiny(rng)
        D, K = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        lam, alpha = float(rng.choice([0.0, 0.5, 1.0, 2.0])), float(rng.choice([0.0, 0.5, 1.0]))
        opt = exhaustive_optimum(X, y, max_depth=D, max_breakpoints=K, lam=lam, alpha=alpha,
                                 candidates=mode, cart_leaves=(4, 3))
        s = LiteratiSearch(X, y, C, max_depth=D, max_breakpoints=K, lam=lam, alpha=alpha, candidates=mode,
                           cart_leaves=(4, 3), exact_depth1=exact_depth1, batch=2).run(**PROVE)
        assert s.root.solved
        assert s.root.upper == pytest.approx(opt, abs=1e-9)
        # the returned tree realises the proved objective
        assert spec_objective(s.tree_spec(), y, C, lam, alpha) == pytest.approx(opt, abs=1e-9)


def test_k3_depth2_equals_exhaustive():
    rng = np.random.default_rng(3)
    for _ in range(6):
        X, y, C = _tiny(rng, n_max=12)
        lam, alpha = float(rng.choice([0.0, 1.0])), float(rng.choice([0.0, 0.5]))
        opt = exhaustive_optimum(X, y, max_depth=2, max_breakpoints=3, lam=lam, alpha=alpha)
        s = LiteratiSearch(X, y, C, max_depth=2, max_breakpoints=3, lam=lam, alpha=alpha, candidates="all",
                           exact_depth1=False).run(**PROVE)
        assert s.root.solved and s.root.upper == pytest.approx(opt, abs=1e-9)


@pytest.mark.parametrize("heuristic,and_rule", [("cart", "round_robin"), ("admissible", "worst_primal"),
                                                 ("impurity", "round_robin"), ("primal", "worst_primal"),
                                                 ("cart", "worst_informative"), ("admissible", "worst_informative")])
def test_ablation_variants_reach_the_same_optimum(heuristic, and_rule):
    rng = np.random.default_rng(11)
    for _ in range(5):
        X, y, C = _tiny(rng)
        opt = exhaustive_optimum(X, y, max_depth=2, max_breakpoints=2, lam=0.5, alpha=0.5, candidates="all")
        s = LiteratiSearch(X, y, C, max_depth=2, max_breakpoints=2, lam=0.5, alpha=0.5, candidates="all",
                           heuristic=heuristic, and_rule=and_rule, exact_depth1=False).run(**PROVE)
        assert s.root.solved and s.root.upper == pytest.approx(opt, abs=1e-9)


def test_bounds_along_the_trace_are_monotone_and_ordered():
    rng = np.random.default_rng(5)
    X = rng.random((300, 4))
    y = ((np.sin(6 * X[:, 0]) + X[:, 1] > 0.9) ^ (X[:, 2] > 0.7)).astype(int)
    for K in (1, 2, 3):
        est = LiteratiClassifier(max_depth=3, max_breakpoints=K, candidates="cart", time_limit=3.0,
                                 random_state=0).fit(X, y)
        ub, lb = est.trace_[:, 1], est.trace_[:, 2]
        assert np.all(np.diff(ub) <= 1e-9)
        assert np.all(np.diff(lb) >= -1e-9)
        assert np.all(lb <= ub + 1e-9)
        assert est.objective_ == pytest.approx(_tree_objective(est, X, y, 0.0, 0.0))


def test_more_breakpoints_never_worse_proposition3():
    rng = np.random.default_rng(9)
    for _ in range(8):
        X, y, C = _tiny(rng, n_max=20)
        vals = []
        for K in (1, 2, 3):
            s = LiteratiSearch(X, y, C, max_depth=2, max_breakpoints=K, lam=1.0, alpha=0.5,
                               candidates="cart", cart_leaves=(6, 4)).run(**PROVE)
            assert s.root.solved
            vals.append(s.root.upper)
        assert vals[1] <= vals[0] + 1e-9 and vals[2] <= vals[1] + 1e-9


def test_corollary1_small_error_state_is_a_leaf():
    X = np.arange(20, dtype=float).reshape(-1, 1)
    y = np.zeros(20, dtype=int)
    y[[3, 11]] = 1  # Err = 2
    est = LiteratiClassifier(max_depth=3, max_breakpoints=2, lam=1.5, alpha=0.5, time_limit=5).fit(X, y)
    assert est.proved_optimal_ and est.n_expanded_ == 0
    assert est.tree_.n_nodes == 1 and est.objective_ == 2.0
    # with a cheaper split the same state is searched and the split pays off
    est = LiteratiClassifier(max_depth=2, max_breakpoints=2, lam=0.2, alpha=0.1, time_limit=20,
                             candidates="all").fit(X, y)
    assert est.proved_optimal_ and est.objective_ == pytest.approx(2 * (0.2 + 2 * 0.1))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), min_size=3, max_size=3), min_size=2, max_size=7),
       st.integers(1, 3), st.sampled_from([0.0, 0.5, 2.0]))
def test_depth1_dynamic_programme_against_enumeration(rows, K, alpha):
    cnt = np.asarray(rows, dtype=np.int64)
    v, mask = best_shape_1d(cnt, K, alpha)
    m = cnt.shape[0] - 1
    best = np.inf
    for k in range(1, min(K, m) + 1):
        for bps in itertools.combinations(range(m), k):
            piece = np.searchsorted(np.asarray(bps), np.arange(m + 1), side="left")
            for sides in itertools.product((0, 1), repeat=k + 1):
                side = np.asarray(sides)[piece]
                L, R = cnt[side == 0].sum(0), cnt[side == 1].sum(0)
                best = min(best, L.sum() - L.max() + R.sum() - R.max() + alpha * k)
    assert v == pytest.approx(best)
    if np.isfinite(v):
        piece = np.concatenate(([0], np.cumsum(mask)))
        side = piece % 2
        L, R = cnt[side == 0].sum(0), cnt[side == 1].sum(0)
        assert L.sum() - L.max() + R.sum() - R.max() + alpha * mask.sum() == pytest.approx(v)


def test_anytime_and_interrupt_return_a_valid_tree(monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.random((400, 5))
    y = (X[:, 0] + 0.3 * rng.random(400) > 0.6).astype(int) + (X[:, 3] > 0.8)
    est = LiteratiClassifier(max_depth=4, max_breakpoints=3, candidates="all", time_limit=0.5).fit(X, y)
    assert not est.proved_optimal_ and est.lower_bound_ <= est.objective_
    assert est.objective_ == pytest.approx(_tree_objective(est, X, y, 0.0, 0.0))
    calls = {"n": 0}
    orig = LiteratiSearch._expand_shape

    def flaky(self, s):
        calls["n"] += 1
        if calls["n"] > 20:
            raise KeyboardInterrupt
        return orig(self, s)

    monkeypatch.setattr(LiteratiSearch, "_expand_shape", flaky)
    est = LiteratiClassifier(max_depth=4, max_breakpoints=2, time_limit=60).fit(X, y)
    assert est.interrupted_ and est.objective_ == pytest.approx(_tree_objective(est, X, y, 0.0, 0.0))


def test_estimator_api_and_bad_input():
    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    y = np.where(X[:, 0] > 0.5, "a", "b")
    est = LiteratiClassifier(max_depth=2, max_breakpoints=2, time_limit=5)
    assert clone(est).get_params()["max_breakpoints"] == 2
    est.fit(X, y)
    assert set(est.predict(X)) <= {"a", "b"} and est.score(X, y) == 1.0
    assert est.proved_optimal_ and est.objective_ == 0.0
    Xn = X.copy()
    Xn[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LiteratiClassifier().fit(Xn, y)
    with pytest.raises(ValueError, match="class"):
        LiteratiClassifier().fit(X, np.zeros(60))
    with pytest.raises(ValueError):
        LiteratiClassifier().fit(X, y[:10])
    for bad in ({"max_breakpoints": 0}, {"lam": -1.0}, {"candidates": "quantile"}, {"time_limit": 0},
                {"heuristic": "foo"}, {"and_rule": "bar"}, {"cart_leaves": (1,)}, {"similarity": "yes"},
                {"max_expansions": -1}, {"max_expansions": 2.5}, {"cache_size": -1}, {"random_state": "x"},
                {"time_limit": None}, {"time_limit": float("inf")}, {"lam": float("nan")}, {"max_depth": 1.5},
                {"cart_leaves": (4.5, 3)}, {"warm_start": 1.0}, {"max_depth": True}, {"lam": True}, {"warm_start": True}):
        with pytest.raises(ValueError):
            LiteratiClassifier(**bad).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


def test_warm_start_keeps_the_optimum_and_never_loses_to_k1():
    rng = np.random.default_rng(21)
    for _ in range(6):
        X, y, C = _tiny(rng, n_max=14)
        opt = exhaustive_optimum(X, y, max_depth=2, max_breakpoints=2, lam=0.5, alpha=0.5, candidates="cart",
                                 cart_leaves=(6, 4))
        kw = dict(max_depth=2, lam=0.5, alpha=0.5, cart_leaves=(6, 4), time_limit=30, random_state=0)
        est = LiteratiClassifier(max_breakpoints=2, warm_start=0.3, **kw).fit(X, y)
        assert est.proved_optimal_ and est.objective_ == pytest.approx(opt)
        assert np.all(np.diff(est.trace_[:, 1]) <= 1e-9) and np.all(np.diff(est.trace_[:, 2]) >= -1e-9)
    # anytime: seeded with the same (deterministic, expansion-limited) K=1 search, K=3 is never worse
    X = rng.random((500, 4))
    y = ((X[:, 0] > 0.3) & (X[:, 0] < 0.6)).astype(int) ^ (X[:, 1] > 0.8)
    # (the warm start spends half of K=3's 60 expansions: K=1's search with the same 30)
    k1 = LiteratiClassifier(max_depth=3, max_breakpoints=1, time_limit=None, max_expansions=30, random_state=0)
    k1.fit(X, y)
    k3 = LiteratiClassifier(max_depth=3, max_breakpoints=3, time_limit=None, max_expansions=60, warm_start=0.5,
                            random_state=0)
    k3.fit(X, y)
    assert k3.objective_ <= k1.objective_ + 1e-9


def test_expansion_budget_is_deterministic_and_counts_every_expansion():
    """With ``time_limit=None`` two fits give the same tree, bounds and trace; the budget bounds the states
    expanded (warm start and seeding included), and a larger budget is never worse (anytime)."""
    rng = np.random.default_rng(4)
    X = rng.random((300, 4))
    y = ((X[:, 0] > 0.3) & (X[:, 0] < 0.6)).astype(int) ^ (X[:, 1] > 0.8) ^ (X[:, 2] + 0.2 * rng.random(300) > 0.9)
    objectives = []
    for budget in (10, 40, 160):
        kw = dict(max_depth=3, max_breakpoints=2, time_limit=None, max_expansions=budget, warm_start=0.25)
        a, b = LiteratiClassifier(**kw).fit(X, y), LiteratiClassifier(**kw).fit(X, y)
        assert a.n_expanded_ <= budget and (a.proved_optimal_ or a.n_expanded_ == budget)
        assert a.objective_ == b.objective_ and a.lower_bound_ == b.lower_bound_
        np.testing.assert_array_equal(a.trace_[:, 1:], b.trace_[:, 1:])
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        assert a.trace_[-1, 3] == a.n_expanded_
        objectives.append(a.objective_)
    assert objectives[2] <= objectives[1] <= objectives[0]


def test_time_limited_fit_loads_compiled_code_first_and_finds_the_same_tree(monkeypatch):
    """A time-limited fit first runs a throwaway search on a few rows (once per setting and process), so that
    loading compiled code is not charged to its clock; the search itself is the one a budget-only fit runs."""
    from treebook.shape.literati import estimator as module

    monkeypatch.setattr(module, "_LOADED", set())
    calls = []
    real = module.LiteratiSearch

    class Counting(real):
        def run(self, *args, **kwargs):
            calls.append(self.X.shape[0])
            return super().run(*args, **kwargs)

    monkeypatch.setattr(module, "LiteratiSearch", Counting)
    rng = np.random.default_rng(5)
    X = rng.random((200, 3))
    y = ((X[:, 0] > 0.4) ^ (X[:, 1] > 0.7)).astype(int)
    kw = dict(max_depth=3, max_breakpoints=2, max_expansions=30, warm_start=0.25)
    timed = LiteratiClassifier(time_limit=1e6, **kw).fit(X, y)
    assert calls[:2] == [40, 40] and calls[2:] == [200, 200]  # K = 1 and K = 2 on 20 rows per class first
    assert len(module._LOADED) == 1
    calls.clear()
    LiteratiClassifier(time_limit=1e6, **kw).fit(X, y)
    assert calls == [200, 200]  # loaded once per process
    calls.clear()
    untimed = LiteratiClassifier(time_limit=None, **kw).fit(X, y)
    assert calls == [200, 200]
    assert timed.objective_ == untimed.objective_ and timed.n_expanded_ == untimed.n_expanded_
    np.testing.assert_array_equal(timed.predict(X), untimed.predict(X))


def test_random_state_semantics():
    """An int seeds the local CART fits as given; a RandomState or a Generator draws the seed (the same
    Generator state, the same tree); other values, a bool among them, are refused."""
    rng = np.random.default_rng(2)
    X = rng.random((120, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    kw = dict(max_depth=2, max_breakpoints=2, time_limit=None, max_expansions=20)
    a = LiteratiClassifier(random_state=3, **kw).fit(X, y)
    b = LiteratiClassifier(random_state=np.int64(3), **kw).fit(X, y)
    assert a.objective_ == b.objective_
    LiteratiClassifier(random_state=np.random.RandomState(0), **kw).fit(X, y)
    LiteratiClassifier(random_state=None, **kw).fit(X, y)
    g1 = LiteratiClassifier(random_state=np.random.default_rng(5), **kw).fit(X, y)
    g2 = LiteratiClassifier(random_state=np.random.default_rng(5), **kw).fit(X, y)
    assert g1.objective_ == g2.objective_
    for bad in ("x", 1.5, True, -1):
        with pytest.raises(ValueError, match="random_state"):
            LiteratiClassifier(random_state=bad, **kw).fit(X, y)


def test_predict_before_fit_raises_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LiteratiClassifier().predict(np.zeros((2, 2)))


@parametrize_with_checks([LiteratiClassifier(max_depth=2, max_breakpoints=2, time_limit=None, max_expansions=30),
                          LiteratiClassifier(max_depth=2, max_breakpoints=1, candidates="all", time_limit=None,
                                             max_expansions=30)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_the_impurity_rule_is_not_the_primal_rule():
    """The weighted Gini impurity is never below the errors; kept within a state's bounds it would rank the
    actions as the primal bound does, and the ablation's two variants would be one."""
    X, y = load_shape_dataset("raisin")
    traces = {}
    for h in ("impurity", "primal"):
        est = LiteratiClassifier(max_depth=4, max_breakpoints=3, time_limit=None, max_expansions=200, heuristic=h,
                                 warm_start=0.0).fit(X[:400], y[:400])
        traces[h] = est.trace_[:, [1, 3]].tolist()
    assert traces["impurity"] != traces["primal"]


def _restricted_oracle(X, y, D, K, lam, alpha, j, thr):
    """Best objective with the root restricted to shape functions of feature ``j`` whose first breakpoint is
    ``thr`` (pieces alternating sides, as the search builds them), or a leaf: brute force."""
    t = np.unique(X[:, j])
    t = (t[:-1] + t[1:]) / 2
    i0 = int(np.flatnonzero(t == thr)[0])
    best = float(y.size - np.bincount(y).max())
    for k in range(1, K + 1):
        for rest in itertools.combinations(range(i0 + 1, t.size), k - 1):
            bps = t[[i0, *rest]]
            right = np.searchsorted(bps, X[:, j], side="left") % 2 == 1
            v = lam + alpha * k
            for side in (~right, right):
                v += exhaustive_optimum(X[side], y[side], max_depth=D - 1, max_breakpoints=K, lam=lam, alpha=alpha)
            best = min(best, v)
    return best


@pytest.mark.parametrize("K", [1, 2])
def test_a_restricted_root_gives_the_best_tree_under_that_split(K):
    rng = np.random.default_rng(11 + K)
    for _ in range(12):
        X, y, C = _tiny(rng, n_max=12)
        j = int(rng.integers(0, X.shape[1]))
        u = np.unique(X[:, j])
        if u.size < 2:
            continue
        thr = float(rng.choice((u[:-1] + u[1:]) / 2))
        lam, alpha = float(rng.choice([0.0, 1.0])), float(rng.choice([0.0, 0.5]))
        s = LiteratiSearch(X, y, C, max_depth=2, max_breakpoints=K, lam=lam, alpha=alpha, candidates="all",
                           similarity=False, root_action=(j, thr)).run(**PROVE)
        assert s.root.solved
        assert s.root.upper == pytest.approx(_restricted_oracle(X, y, 2, K, lam, alpha, j, thr), abs=1e-9)
        assert set(s.root_choices) <= {(j, thr)}
        spec = s.tree_spec()
        if spec[0] == "split":
            assert spec[1] == j and spec[2][0] == thr
        free = LiteratiSearch(X, y, C, max_depth=2, max_breakpoints=K, lam=lam, alpha=alpha, candidates="all",
                              similarity=False).run(**PROVE)
        assert free.root.upper <= s.root.upper + 1e-9
        # every iteration below an expanded root went down one of the root's actions, and each is counted
        assert all(n > 0 for n in free.root_choices.values())


def test_a_restricted_root_refuses_what_it_cannot_honour():
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="not one of"):
        LiteratiSearch(X, y, 2, max_depth=2, max_breakpoints=1, candidates="all", similarity=False,
                       root_action=(0, 0.7)).run(**PROVE)
    with pytest.raises(ValueError, match="similarity"):
        LiteratiSearch(X, y, 2, max_depth=2, max_breakpoints=1, candidates="all", root_action=(0, 0.5))
    with pytest.raises(ValueError, match="max_depth >= 2"):
        LiteratiSearch(X, y, 2, max_depth=1, max_breakpoints=2, root_action=(0, 0.5))
    with pytest.raises(ValueError, match="feature index"):
        LiteratiSearch(X, y, 2, max_depth=2, max_breakpoints=2, root_action=(3, 0.5))
    with pytest.raises(ValueError, match="feature index"):
        LiteratiSearch(X, y, 2, max_depth=2, max_breakpoints=2, root_action=(0, np.nan))
