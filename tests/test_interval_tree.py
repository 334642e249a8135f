"""MMIT trees: split search against brute force, leaf minimisers, pruning optimality, estimator API."""

import itertools

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from treebook.interval import interval_mse_scorer, total_loss
from treebook.interval.selection import MMITPrunedCV
from treebook.interval.simulate import random_intervals, simulated_dataset
from treebook.interval.tree import (
    MMITForestRegressor,
    MMITRegressor,
    node_collapse_alphas,
    prune_tree,
    pruning_alphas,
)


def leaf_min(y, loss, margin):
    """Brute-force minimum of a leaf's cost (equation (2)) over breakpoints and stationary points."""
    fl, fu = np.isfinite(y[:, 0]), np.isfinite(y[:, 1])
    blo, bhi = y[fl, 0] + margin, y[fu, 1] - margin
    bps = np.concatenate([blo, bhi])
    cands = list(bps)
    if loss == "squared":
        s = np.sort(bps)
        for mid in np.concatenate([[s[0] - 1], (s[:-1] + s[1:]) / 2, [s[-1] + 1]]):
            act_lo, act_hi = blo > mid, bhi < mid
            k = act_lo.sum() + act_hi.sum()
            if k:
                cands.append((blo[act_lo].sum() + bhi[act_hi].sum()) / k)
    return min(total_loss(c, y, loss=loss, margin=margin) for c in cands)


def tree_cost(tree):
    return float(sum(tree.impurity[v] * tree.n_node_samples[v] for v in tree.leaves()))


@pytest.mark.parametrize("loss", ["linear", "squared"])
def test_best_stump_matches_exhaustive_search(loss):
    rng = np.random.default_rng(0)
    for _ in range(25):
        n = int(rng.integers(2, 14))
        X = rng.integers(0, 4, (n, 3)).astype(float)
        y = random_intervals(n, random_state=rng)
        margin = float(rng.choice([0.0, 0.3]))
        est = MMITRegressor(loss=loss, margin=margin, max_depth=1).fit(X, y)
        best = leaf_min(y, loss, margin)
        for f in range(3):
            for t in np.unique(X[:, f])[:-1]:
                r = X[:, f] > t
                best = min(best, leaf_min(y[~r], loss, margin) + leaf_min(y[r], loss, margin))
        assert tree_cost(est.tree_) == pytest.approx(best, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("loss", ["linear", "squared"])
def test_leaves_predict_the_minimiser_and_route_training_samples(loss):
    X, y, _ = simulated_dataset("abs", n_samples=120, random_state=1)
    est = MMITRegressor(loss=loss, margin=0.2, max_depth=3).fit(X, y)
    tree = est.tree_
    leaf = tree.apply(X)
    for v in tree.leaves():
        members = leaf == v
        assert members.sum() == tree.n_node_samples[v]
        cost = total_loss(tree.value[v, 0], y[members], loss=loss, margin=0.2)
        assert cost == pytest.approx(leaf_min(y[members], loss, 0.2), rel=1e-9, abs=1e-9)
        assert tree.impurity[v] * members.sum() == pytest.approx(cost, rel=1e-9, abs=1e-9)
    # growing deeper never increases the training cost
    costs = [tree_cost(MMITRegressor(loss=loss, margin=0.2, max_depth=d).fit(X, y).tree_) for d in range(5)]
    assert all(a >= b - 1e-9 for a, b in zip(costs, costs[1:]))


def _all_prunings(tree, node=0):
    """Every subtree rooted at ``node`` obtained by pruning: (cost, n_leaves) pairs."""
    own = (tree.impurity[node] * tree.n_node_samples[node], 1)
    if tree.children_left[node] < 0:
        return [own]
    left = _all_prunings(tree, tree.children_left[node])
    right = _all_prunings(tree, tree.children_right[node])
    return [own] + [(a[0] + b[0], a[1] + b[1]) for a, b in itertools.product(left, right)]


def test_weakest_link_pruning_minimises_cost_complexity():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 4))
    y = random_intervals(80, random_state=3)
    tree = MMITRegressor(loss="squared", max_depth=3).fit(X, y).full_tree_
    n = tree.n_node_samples[0]
    alphas = pruning_alphas(tree)
    assert alphas[0] == 0 and np.all(np.diff(alphas) > 0)
    assert prune_tree(tree, alphas[-1]).n_nodes == 1
    options = _all_prunings(tree)
    probe = np.concatenate([alphas, (alphas[:-1] + alphas[1:]) / 2, [alphas[-1] * 2]])
    prev_leaves = np.inf
    for a in probe[np.argsort(probe)]:
        pruned = prune_tree(tree, a)
        ours = tree_cost(pruned) / n + a * pruned.n_leaves
        best = min(c / n + a * k for c, k in options)
        assert ours == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert pruned.n_leaves <= prev_leaves
        prev_leaves = pruned.n_leaves
    assert np.all(node_collapse_alphas(tree)[tree.children_left < 0] == -1)


def _optimum(tree, alpha):
    """min over prunings of (cost / N + alpha * leaves), by dynamic programming over the nodes."""
    R = tree.impurity * tree.n_node_samples / tree.n_node_samples[0]
    best = R + alpha
    for t in range(tree.n_nodes - 1, -1, -1):
        if tree.children_left[t] >= 0:
            best[t] = min(best[t], best[tree.children_left[t]] + best[tree.children_right[t]])
    return best[0]


@pytest.mark.parametrize("loss", ["linear", "squared"])
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_pruned_trees_are_optimal_on_full_trees(loss, margin):
    """Full trees often have a weakest link whose inner splits are stronger links (larger g): pruning must
    keep those splits below the weakest link's alpha (the former MMIT pruning dropped them at any alpha > 0:
    this test caught it on 10 of these 12 trees)."""
    for seed in range(3):
        X, y, _ = simulated_dataset(["linear", "sin", "abs"][seed], n_samples=150, random_state=seed)
        tree = MMITRegressor(loss=loss, margin=margin).fit(X, y).full_tree_
        collapse = node_collapse_alphas(tree)
        assert np.all(collapse[tree.children_left >= 0] > 0)
        alphas = pruning_alphas(tree)
        for a in np.sqrt(alphas[1:-1] * alphas[2:]):
            pruned = prune_tree(tree, a, collapse)
            ours = tree_cost(pruned) / tree.n_node_samples[0] + a * pruned.n_leaves
            assert ours == pytest.approx(_optimum(tree, a), rel=1e-12)


def test_sklearn_api_and_gridsearch():
    X, y, _ = simulated_dataset("sin", n_samples=100, random_state=0)
    est = MMITRegressor(margin=0.1, max_depth=2)
    assert clone(est).get_params()["margin"] == 0.1
    est.set_params(max_depth=3)
    gs = GridSearchCV(est, {"margin": [0.0, 0.5], "max_depth": [1, 3]}, scoring=interval_mse_scorer, cv=3)
    gs.fit(X, y)
    assert gs.best_score_ <= 0
    assert gs.predict(X).shape == (100,)
    assert est.fit(X, y).score(X, y) == pytest.approx(interval_mse_scorer(est, X, y))


def test_pruned_cv_selection():
    X, y, _ = simulated_dataset("abs", n_samples=150, random_state=4)
    cv = MMITPrunedCV(loss="linear", param_grid={"margin": [0.0, 0.3], "max_depth": [6]}, cv=3,
                      random_state=0).fit(X, y)
    assert set(cv.best_params_) == {"margin", "max_depth", "alpha"}
    assert len(cv.cv_results_) == 2
    assert cv.best_score_ == max(-r["cv_mse"] for r in cv.cv_results_)
    full_leaves = cv.best_estimator_.full_tree_.n_leaves
    assert cv.best_estimator_.tree_.n_leaves <= full_leaves
    assert cv.score(X, y) <= 0


def test_forest_is_mean_of_its_trees_and_reproducible():
    X, y, _ = simulated_dataset("sin", n_samples=120, random_state=5)
    f1 = MMITForestRegressor(n_estimators=5, max_depth=3, random_state=7).fit(X, y)
    f2 = MMITForestRegressor(n_estimators=5, max_depth=3, random_state=7).fit(X, y)
    assert np.array_equal(f1.predict(X), f2.predict(X))
    means = np.mean([e.predict(X) for e in f1.estimators_], axis=0)
    assert np.allclose(f1.predict(X), means)


def test_signal_feature_is_found():
    # a monotone pattern: the best stump reads the signal feature near the middle of its range
    X, y, _ = simulated_dataset("linear", n_samples=200, random_state=6)
    est = MMITRegressor(loss="squared", max_depth=1).fit(X, y)
    assert est.tree_.splits[0].feature == 0
    assert abs(est.tree_.splits[0].threshold - 5.0) < 2.0


@pytest.mark.parametrize(
    "X, y, params, match",
    [
        (np.zeros((3, 2)), np.array([[0, 1], [2, 1], [0, 1.0]]), {}, "lower > upper in rows 1"),
        (np.zeros((2, 2)), np.array([[-np.inf, np.inf], [0, 1.0]]), {}, "both limits infinite"),
        (np.zeros((2, 2)), np.array([[np.nan, 1], [0, 1.0]]), {}, "NaN"),
        (np.zeros((2, 2)), np.zeros(2), {}, "shape"),
        (np.zeros((3, 2)), np.zeros((2, 2)), {}, "rows"),
        (np.array([[np.nan, 0], [0, 0]]), np.zeros((2, 2)), {}, "NaN"),
        (np.zeros((2, 2)), np.zeros((2, 2)), {"margin": -0.5}, "margin"),
        (np.zeros((2, 2)), np.zeros((2, 2)), {"loss": "abs"}, "loss"),
        (np.zeros((2, 2)), np.zeros((2, 2)), {"min_samples_split": 1}, "min_samples_split"),
    ],
)
def test_bad_input(X, y, params, match):
    with pytest.raises(ValueError, match=match):
        MMITRegressor(**params).fit(X, y)


def test_predict_checks_features():
    X, y, _ = simulated_dataset("linear", n_samples=30, random_state=0)
    est = MMITRegressor(max_depth=2).fit(X, y)
    with pytest.raises(ValueError):
        est.predict(X[:, :3])


def test_fitted_estimators_pickle():
    import pickle

    X, y, _ = simulated_dataset("sin", n_samples=80, random_state=8)
    for est in (MMITRegressor(max_depth=3, ccp_alpha=1e-3), MMITForestRegressor(n_estimators=2, random_state=0)):
        est.fit(X, y)
        again = pickle.loads(pickle.dumps(est))
        assert np.array_equal(again.predict(X), est.predict(X))
