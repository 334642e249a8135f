"""The tree core against scikit-learn (the oracle), and its invariants."""

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import datasets as skdata
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from treebook.tree import (
    CARTClassifier,
    CARTRegressor,
    HyperplaneSplit,
    ShapeSplit,
    SubsetSplit,
    ThresholdSplit,
    TreeBuilder,
    best_threshold_split,
    compare_with_sklearn,
    export_text,
    plot_tree,
)
from treebook.tree.criteria import impurity, weighted_impurity
from treebook.tree.grow import Splitter


def _onehot(y):
    classes, enc = np.unique(y, return_inverse=True)
    return np.eye(classes.size)[enc]


def _check_against_sklearn(X, y, Xte, criterion, **params):
    if criterion == "mse":
        ours = CARTRegressor(**params).fit(X, y)
        sk = DecisionTreeRegressor(criterion="squared_error", random_state=0, **params).fit(X, y)
        stats = y
    else:
        ours = CARTClassifier(criterion=criterion, **params).fit(X, y)
        sk = DecisionTreeClassifier(criterion=criterion, random_state=0, **params).fit(X, y)
        stats = _onehot(y)
    cmp = compare_with_sklearn(ours.tree_, sk.tree_, X, stats, criterion)
    assert cmp["mismatch"] == 0, cmp
    if cmp["tie"] == 0:
        # No tie anywhere: the very same tree, so the very same predictions everywhere.
        assert ours.tree_.n_nodes == sk.tree_.node_count
        np.testing.assert_allclose(ours.predict(Xte), sk.predict(Xte))
        np.testing.assert_allclose(ours.tree_.impurity, sk.tree_.impurity, rtol=1e-6, atol=1e-9)
        np.testing.assert_array_equal(ours.tree_.n_node_samples, sk.tree_.n_node_samples)
    return cmp


@pytest.mark.parametrize("loader,criterion", [
    (skdata.load_iris, "gini"), (skdata.load_iris, "entropy"),
    (skdata.load_wine, "gini"), (skdata.load_wine, "entropy"),
    (skdata.load_breast_cancer, "gini"), (skdata.load_breast_cancer, "entropy"),
    (skdata.load_diabetes, "mse"),
])
@pytest.mark.parametrize("params", [{}, {"max_depth": 3}, {"min_samples_leaf": 5, "min_samples_split": 12}])
def test_matches_sklearn_on_real_data(loader, criterion, params):
    X, y = loader(return_X_y=True)
    _check_against_sklearn(X, y, X, criterion, **params)


@given(seed=st.integers(0, 10_000), n=st.integers(2, 120), p=st.integers(1, 5), k=st.integers(2, 4),
       criterion=st.sampled_from(["gini", "entropy", "mse"]), depth=st.sampled_from([None, 1, 2, 4]),
       leaf=st.integers(1, 4), discrete=st.booleans())
def test_matches_sklearn_on_random_data(seed, n, p, k, criterion, depth, leaf, discrete):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, p)).astype(float) if discrete else rng.normal(size=(n, p))
    Xte = rng.normal(size=(50, p)) * 2
    if criterion == "mse":
        y = X[:, 0] + rng.normal(size=n)
    else:
        y = rng.integers(0, k, size=n)
        if np.unique(y).size < 2:
            y[0], y[-1] = 0, 1
    _check_against_sklearn(X, y, Xte, criterion, max_depth=depth, min_samples_leaf=leaf)


def test_continuous_random_data_gives_identical_trees():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=400) > 0).astype(int)
    Xte = rng.normal(size=(1000, 6))
    for crit in ("gini", "entropy"):
        # (deep nodes with a handful of samples often have several pure splits: ties; so stay shallow)
        cmp = _check_against_sklearn(X, y, Xte, crit, max_depth=4, min_samples_leaf=5)
        assert cmp["tie"] == 0 and cmp["identical"] >= 15


def test_best_threshold_split_is_the_brute_force_optimum():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n, p = rng.integers(4, 40), rng.integers(1, 4)
        X = rng.integers(0, 6, size=(n, p)).astype(float)
        y = rng.integers(0, 3, size=n)
        S = np.eye(3)[y]
        cand = best_threshold_split(X, S, np.arange(p), "gini", 1)
        best = np.inf
        for j in range(p):
            for t in np.unique(X[:, j])[:-1]:
                r = X[:, j] > t
                best = min(best, weighted_impurity(S[r].sum(0), "gini") + weighted_impurity(S[~r].sum(0), "gini"))
        if cand is None:
            assert best == np.inf
        else:
            assert cand.cost == pytest.approx(best, rel=1e-12, abs=1e-12)
            r = cand.split.route(X)
            np.testing.assert_array_equal(r, cand.right)


def test_impurities():
    p = np.array([[0.5, 0.5], [1.0, 0.0], [0.25, 0.75]])
    np.testing.assert_allclose(impurity(p, "gini"), [0.5, 0.0, 0.375])
    np.testing.assert_allclose(impurity(p, "entropy"), [1.0, 0.0, 0.8112781244591328])
    counts = np.array([[2, 2], [0, 0], [1, 3]])
    np.testing.assert_allclose(weighted_impurity(counts, "gini"), [2.0, 0.0, 1.5])
    np.testing.assert_allclose(weighted_impurity(counts, "entropy"), [4.0, 0.0, 4 * 0.8112781244591328])
    with pytest.raises(ValueError, match="criterion"):
        impurity(p, "misclassification")


def test_routing_invariants():
    X, y = skdata.load_wine(return_X_y=True)
    clf = CARTClassifier(max_depth=4).fit(X, y)
    tree = clf.tree_
    leaves = clf.apply(X)
    assert np.all(tree.children_left[leaves] == -1)
    path = clf.decision_path(X)
    assert path.shape == (X.shape[0], tree.n_nodes)
    assert np.all(path[:, 0].toarray() == 1)
    # the path of each sample is exactly root -> its leaf as recorded by path_to
    for i in range(0, X.shape[0], 17):
        expected = [node for node, _ in tree.path_to(leaves[i])] + [leaves[i]]
        np.testing.assert_array_equal(path[i].indices, sorted(expected))
    assert tree.n_leaves == len(tree.leaves()) == clf.get_n_leaves()
    assert clf.get_depth() <= 4
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_split_kinds_route():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, -1.0]])
    np.testing.assert_array_equal(ThresholdSplit(0, 1.5).route(X), [False, False, True, True])
    # a shape function with one breakpoint is a threshold split
    np.testing.assert_array_equal(ShapeSplit(0, [1.5], [False, True]).route(X), [False, False, True, True])
    # two breakpoints: middle piece right
    np.testing.assert_array_equal(ShapeSplit(0, [0.5, 2.0], [False, True, False]).route(X),
                                  [False, True, True, False])
    np.testing.assert_array_equal(HyperplaneSplit([1.0, 1.0], 2.0).route(X), [False, False, True, True])
    codes = np.array([[0.0], [1.0], [2.0], [7.0], [np.nan]])
    s = SubsetSplit(0, [0, 2], seen_values=[0, 1, 2], unseen="left")
    np.testing.assert_array_equal(s.route(codes), [False, True, False, False, False])
    s = SubsetSplit(0, [0, 2], seen_values=[0, 1, 2], unseen="right")
    np.testing.assert_array_equal(s.route(codes), [False, True, False, True, True])
    with pytest.raises(ValueError):
        ShapeSplit(0, [2.0, 1.0], [True, False, True])
    with pytest.raises(ValueError):
        ShapeSplit(0, [1.0], [True])
    for split in (ThresholdSplit(0, 1.5), ShapeSplit(0, [0.5, 2.0], [False, True, False]),
                  HyperplaneSplit([1.0, -2.0], 0.5), SubsetSplit(0, [1, 3], labels=["a", "b", "c", "d"])):
        assert isinstance(split.describe(["u", "v"]), str)


def test_builder_and_export_and_pickle(tmp_path):
    b = TreeBuilder(n_outputs=2)
    root = b.add_node([0.5, 0.5], 4, 0.5)
    left = b.add_node([1.0, 0.0], 2, 0.0, parent=root, is_right=False)
    b.add_node([0.0, 1.0], 2, 0.0, parent=root, is_right=True)
    with pytest.raises(ValueError, match="split needs exactly two children"):
        b.build()
    b.set_split(root, ThresholdSplit(1, 0.0))
    tree = b.build()
    assert tree.path_to(left) == [(root, False)]
    np.testing.assert_array_equal(tree.apply(np.array([[0, -1.0], [0, 1.0]])), [1, 2])
    text = export_text(tree, feature_names=["a", "b"], class_names=["no", "yes"])
    assert "b <= 0.000" in text and "class: yes" in text
    ax = plot_tree(tree, feature_names=["a", "b"], class_names=["no", "yes"])
    assert len(ax.texts) >= 3
    X, y = skdata.load_iris(return_X_y=True)
    clf = CARTClassifier(max_depth=3).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))


def test_sklearn_api():
    X, y = skdata.load_iris(return_X_y=True)
    est = CARTClassifier(max_depth=2)
    assert clone(est).get_params()["max_depth"] == 2
    search = GridSearchCV(CARTClassifier(), {"max_depth": [1, 3]}, cv=3).fit(X, y)
    assert search.best_params_["max_depth"] == 3
    assert 0.9 < CARTClassifier(max_depth=3).fit(X, y).score(X, y) <= 1.0
    df = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    clf = CARTClassifier(max_depth=1).fit(df, y)
    assert "pl" in clf.export_text() or "pw" in clf.export_text()
    Xr, yr = skdata.load_diabetes(return_X_y=True)
    reg = CARTRegressor(max_depth=3).fit(Xr, yr)
    assert reg.predict(Xr).shape == (Xr.shape[0],)
    multi = CARTRegressor(max_depth=2).fit(Xr, np.stack([yr, -yr], axis=1))
    assert multi.predict(Xr).shape == (Xr.shape[0], 2)


def test_max_features_draws_are_reproducible():
    X, y = skdata.load_breast_cancer(return_X_y=True)
    a = CARTClassifier(max_features="sqrt", random_state=5).fit(X, y)
    b = CARTClassifier(max_features="sqrt", random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
    with pytest.raises(ValueError, match="max_features"):
        CARTClassifier(max_features="half").fit(X, y)


@pytest.mark.parametrize("X,y,match", [
    (np.array([[1.0, np.nan], [2.0, 3.0]]), [0, 1], "NaN at rows 0"),
    (np.array([[1.0, np.inf], [2.0, 3.0]]), [0, 1], "infinite"),
    (np.array([1.0, 2.0]), [0, 1], "2-D"),
    (np.zeros((0, 3)), [], "0 sample"),
    (np.zeros((3, 2)), [1, 1, 1], "1 class"),
    (np.zeros((3, 2)), [0, 1], "3 samples but y has 2"),
    (pd.DataFrame({"a": ["x", "y"], "b": [1, 2]}), [0, 1], "non-numeric columns"),
])
def test_bad_input_is_a_clear_error(X, y, match):
    with pytest.raises(ValueError, match=match):
        CARTClassifier().fit(X, y)


def test_bad_params_and_predict_input():
    X, y = skdata.load_iris(return_X_y=True)
    for params in ({"max_depth": -1}, {"min_samples_split": 1}, {"min_samples_leaf": 0}, {"criterion": "mse"},
                   {"ccp_alpha": -0.1}, {"ccp_alpha": float("nan")}):
        with pytest.raises(ValueError):
            CARTClassifier(**params).fit(X, y)
    clf = CARTClassifier().fit(X, y)
    with pytest.raises(ValueError, match="expecting 4 features"):
        clf.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(np.full((1, 4), np.nan))
    with pytest.raises(ValueError, match="NaN"):
        CARTRegressor().fit(X, np.where(y == 1, np.nan, y))


@pytest.mark.parametrize("method", ["predict", "apply", "decision_path"])
def test_methods_before_fit_raise_not_fitted(method):
    from sklearn.exceptions import NotFittedError

    for est in (CARTClassifier(), CARTRegressor()):
        with pytest.raises(NotFittedError):
            getattr(est, method)(np.zeros((2, 3)))


@parametrize_with_checks([CARTClassifier(), CARTRegressor(max_depth=4), CARTClassifier(ccp_alpha=0.02)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_check_array_accepts_finite_values_whose_sum_overflows_and_names_nan_and_inf():
    from treebook.validation import check_array

    big = np.full((4, 2), np.finfo(float).max)
    assert check_array(big) is big  # no copy of a float matrix, and no error: every value is finite
    for bad, word in ((np.nan, "NaN"), (np.inf, "infinite")):
        X = big.copy()
        X[2, 1] = bad
        with pytest.raises(ValueError, match=word):
            check_array(X)


# ------------------------------------------------------------------ the one growth loop


class _MedianSplitter(Splitter):
    """A toy splitter of the ``Splitter`` interface: split the first offered feature at its node median,
    a node's cost its squared error; counts the calls it receives."""

    def __init__(self, X, y):
        self.X, self.y = X, y
        self.n_samples, self.n_features = X.shape
        self.calls = {"node": 0, "find": 0, "children": 0}

    def root(self):
        return np.arange(self.n_samples)

    def node(self, idx):
        self.calls["node"] += 1
        y = self.y[idx]
        return [y.mean()], idx.size, float(y.var())

    def is_pure(self, idx, impurity):
        return impurity <= 1e-12

    def find(self, idx, features, min_samples_leaf):
        from treebook.tree import Candidate

        self.calls["find"] += 1
        f = int(features[0])
        x = self.X[idx, f]
        thr = float(np.median(x))
        right = x > thr
        if right.sum() < min_samples_leaf or (~right).sum() < min_samples_leaf:
            return None
        y = self.y[idx]
        cost = y[right].var() * right.sum() + y[~right].var() * (~right).sum()
        return Candidate(ThresholdSplit(f, thr), float(cost), right)

    def children(self, idx, cand):
        self.calls["children"] += 1
        return idx[~cand.right], idx[cand.right]


def test_grow_takes_any_splitter_and_owns_the_stopping_rules_and_the_node_order():
    from treebook.tree import grow

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + rng.normal(scale=0.1, size=200)
    sp = _MedianSplitter(X, y)
    tree = grow(sp, max_depth=3, min_samples_leaf=5)
    assert tree.max_depth == 3
    assert tree.n_node_samples.min() >= 5
    internal = np.flatnonzero(~tree.is_leaf)
    # depth first, left child first: the left child of node i is node i + 1
    assert np.array_equal(tree.children_left[internal], internal + 1)
    # every node was evaluated once; every split asked for its children once
    assert sp.calls["node"] == tree.n_nodes
    assert sp.calls["children"] == internal.size
    # the tree routes the training rows to leaves whose value is their mean
    leaves = tree.apply(X)
    for leaf in np.unique(leaves):
        assert np.isclose(tree.value[leaf, 0], y[leaves == leaf].mean())


def test_grow_draws_max_features_per_node_and_refuses_weak_splits():
    from treebook.tree import grow

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    y = X[:, 2] + rng.normal(scale=0.1, size=300)
    seen = []

    class Recording(_MedianSplitter):
        def find(self, idx, features, min_samples_leaf):
            seen.append(tuple(features))
            return super().find(idx, features, min_samples_leaf)

    grow(Recording(X, y), max_depth=4, max_features=2, random_state=0)
    assert seen and all(len(f) == 2 and list(f) == sorted(f) for f in seen)
    assert len(set(seen)) > 1
    # a decrease threshold above any split's gain leaves the root a leaf
    assert grow(_MedianSplitter(X, y), min_impurity_decrease=10.0).n_nodes == 1


def test_the_mmit_and_presorted_splitters_number_nodes_as_the_node_splitter_does():
    from treebook.interval import MMITRegressor

    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    mid = X[:, 0] + X[:, 1]
    y = np.column_stack([mid - 0.5, mid + 0.5])
    for est in (MMITRegressor(max_depth=4).fit(X, y), CARTRegressor(max_depth=4).fit(X, mid)):
        t = est.tree_
        internal = np.flatnonzero(~t.is_leaf)
        assert internal.size > 1
        assert np.array_equal(t.children_left[internal], internal + 1)


def test_a_splitter_missing_part_of_the_interface_cannot_be_made():
    class RootOnly(Splitter):
        def root(self):
            return None

    with pytest.raises(TypeError, match="abstract"):
        RootOnly()
