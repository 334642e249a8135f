"""The presorted CART growth against the vectorised per-node search it replaces: the same trees, bit for bit."""

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebook.tree import CARTClassifier, CARTRegressor
from treebook.tree.cart import _class_fractions, _threshold_search
from treebook.tree.criteria import node_impurity_classification, one_hot
from treebook.tree.grow import grow_tree
from treebook.tree.presorted import grow_presorted, mse_leaf_value, mse_node_impurity, presorted_supports


def same_tree(a, b):
    assert a.n_nodes == b.n_nodes
    for name in ("children_left", "children_right", "parent", "n_node_samples", "depth"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.value, b.value)
    np.testing.assert_array_equal(a.impurity, b.impurity)
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)


def both(X, stats, criterion, leaf_value, node_impurity, **growth):
    reference = grow_tree(X, stats, find_split=partial(_threshold_search, criterion=criterion),
                          leaf_value=leaf_value, node_impurity=node_impurity, **growth)
    fast = grow_presorted(X, stats, criterion=criterion, leaf_value=leaf_value, node_impurity=node_impurity,
                          **growth)
    return reference, fast


growth_params = dict(max_depth=st.one_of(st.none(), st.integers(0, 6)), min_samples_split=st.integers(2, 8),
                     min_samples_leaf=st.integers(1, 4), min_impurity_decrease=st.sampled_from([0.0, 0.0, 0.01]),
                     max_features=st.one_of(st.none(), st.integers(1, 3)))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 80), p=st.integers(1, 4), k=st.sampled_from([2, 3, 9]),
       levels=st.sampled_from([2, 3, 50]), **growth_params)
def test_gini_trees_are_the_vectorised_search_trees(seed, n, p, k, levels, **growth):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)) * rng.choice([1.0, 1e-8, 0.3])  # ties, cuts closer than 1e-7
    onehot = one_hot(rng.integers(0, k, size=n), k)
    imp = partial(node_impurity_classification, criterion="gini")
    same_tree(*both(X, onehot, "gini", _class_fractions, imp, random_state=seed, **growth))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 80), p=st.integers(1, 4), q=st.sampled_from([1, 2, 9]),
       levels=st.sampled_from([2, 5, 1000]), **growth_params)
def test_squared_error_trees_are_the_vectorised_search_trees(seed, n, p, q, levels, **growth):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    y = rng.normal(size=(n, q)) * rng.choice([1.0, 1e6, 1e-6])
    if seed % 3 == 0:
        y = np.round(y)  # equal targets: equal costs across features and cuts
    same_tree(*both(X, y, "mse", mse_leaf_value, mse_node_impurity, random_state=seed, **growth))


def test_estimators_grow_the_same_trees_on_larger_data():
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(3000, 6)), 1)
    y_cls = (X[:, 0] + X[:, 1] ** 2 + rng.normal(scale=0.5, size=3000) > 0.5).astype(int)
    y_reg = np.sin(X[:, 0]) + X[:, 2] + rng.normal(scale=0.3, size=3000)
    onehot = one_hot(y_cls, 2)
    imp = partial(node_impurity_classification, criterion="gini")
    same_tree(*both(X, onehot, "gini", _class_fractions, imp))
    same_tree(*both(X, y_reg[:, None], "mse", mse_leaf_value, mse_node_impurity, min_samples_leaf=3))
    clf = CARTClassifier().fit(X, y_cls)
    same_tree(clf.tree_, both(X, onehot, "gini", _class_fractions, imp)[0])
    reg = CARTRegressor(max_depth=9).fit(X, y_reg)
    same_tree(reg.tree_, both(X, y_reg[:, None], "mse", mse_leaf_value, mse_node_impurity, max_depth=9)[0])


def test_node_sums_over_many_rows_are_numpys():
    # numpy adds the rows of a many-row statistics matrix in blocks of its buffer size: the node sums must
    # still be its sums, bit for bit
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40_000, 2))
    y = rng.normal(size=(40_000, 2)) * 1e4
    same_tree(*both(X, y, "mse", mse_leaf_value, mse_node_impurity, max_depth=3))
    onehot = one_hot(rng.integers(0, 3, size=40_000), 3)
    imp = partial(node_impurity_classification, criterion="gini")
    same_tree(*both(X, onehot, "gini", _class_fractions, imp, max_depth=3))


def test_which_criteria_are_presorted():
    assert presorted_supports("gini", 2) and presorted_supports("mse", 3)
    assert not presorted_supports("entropy", 2) and not presorted_supports("gini", 129)
    with pytest.raises(ValueError, match="gini"):
        grow_presorted(np.zeros((4, 1)), np.zeros((4, 2)), criterion="entropy", leaf_value=_class_fractions,
                       node_impurity=lambda y: 0.0)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 400), levels=st.sampled_from([1, 2, 7, 10**6]))
def test_compiled_argsort_is_numpys_stable_argsort(seed, n, levels):
    from treebook.tree.presorted import _argsort_stable

    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, 3)) * rng.choice([1.0, -1.0, 1e-300])
    X[rng.random(size=X.shape) < 0.1] = -0.0  # -0.0 and 0.0 compare equal: row order decides
    if seed % 4 == 0:
        X = np.sort(X, axis=0)[:: 1 if seed % 8 else -1]  # sorted and reversed inputs
    for f in range(3):
        keys, out = np.empty(n), np.empty(n, dtype=np.int32)
        _argsort_stable(np.ascontiguousarray(X), f, keys, out)
        np.testing.assert_array_equal(out, np.argsort(X[:, f], kind="stable"))


def test_compiled_argsort_on_many_rows():
    from treebook.tree.presorted import _argsort_stable

    rng = np.random.default_rng(5)
    X = np.column_stack([rng.normal(size=200_000), rng.integers(0, 3, size=200_000), np.zeros(200_000)])
    for f in range(3):
        keys, out = np.empty(len(X)), np.empty(len(X), dtype=np.int32)
        _argsort_stable(X, f, keys, out)
        np.testing.assert_array_equal(out, np.argsort(X[:, f], kind="stable"))


@pytest.mark.parametrize("m", [1, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 8192, 8193, 100_003])
def test_compiled_node_statistics_are_numpys(m):
    from treebook.tree.presorted import _mse_node

    rng = np.random.default_rng(m)
    S = rng.normal(size=(2 * m, 1)) * 10.0 ** rng.uniform(-4, 4, size=(2 * m, 1))
    idx = np.sort(rng.choice(2 * m, size=m, replace=False)).astype(np.int32)
    mean, imp = _mse_node(S, idx)
    assert mean == mse_leaf_value(S[idx])[0] and imp == mse_node_impurity(S[idx])


def test_one_output_regression_trees_over_many_rows_are_the_vectorised_search_trees():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40_000, 2))
    y = rng.normal(size=(40_000, 1)) * 1e4
    same_tree(*both(X, y, "mse", mse_leaf_value, mse_node_impurity, max_depth=4))
