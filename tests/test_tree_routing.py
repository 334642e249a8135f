"""Compiled routing of threshold trees against a row-by-row walk of the splits' own rule."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebook.tree import CARTClassifier, CARTRegressor
from treebook.tree.splits import SubsetSplit, ThresholdSplit
from treebook.tree.structure import TreeBuilder


def walk(tree, X):
    """Leaf and path of every row, one row at a time, by ``split.route`` on that single row."""
    leaves, paths = [], []
    for row in X:
        node, path = 0, [0]
        while tree.children_left[node] != -1:
            right = bool(np.asarray(tree.splits[node].route(row[None, :]))[0])
            node = tree.children_right[node] if right else tree.children_left[node]
            path.append(node)
        leaves.append(node)
        paths.append(sorted(path))
    return np.array(leaves), paths


def check_routes(tree, X):
    leaves, paths = walk(tree, X)
    np.testing.assert_array_equal(tree.apply(X), leaves)
    dp = tree.decision_path(X)
    assert dp.shape == (X.shape[0], tree.n_nodes)
    for i, path in enumerate(paths):
        assert dp.indices[dp.indptr[i]:dp.indptr[i + 1]].tolist() == path


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60), p=st.integers(1, 4), depth=st.integers(0, 6),
       levels=st.integers(2, 6))
def test_compiled_routes_equal_the_split_rule_ties_and_nans_included(seed, n, p, depth, levels):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float)  # few values: rows on every threshold
    y = rng.normal(size=n)
    tree = CARTRegressor(max_depth=depth).fit(X, y).tree_
    Xt = rng.integers(-1, levels + 1, size=(30, p)).astype(float)
    Xt[rng.random(Xt.shape) < 0.1] = np.nan
    thresholds = tree.threshold[~np.isnan(tree.threshold)]
    if thresholds.size:
        Xt[0, :] = thresholds[0]  # exactly on a threshold: left, as x <= threshold goes left
    check_routes(tree, Xt)
    for dtype in (np.float32, np.int64):
        Xi = np.nan_to_num(Xt, nan=0).astype(dtype)
        np.testing.assert_array_equal(tree.apply(Xi), walk(tree, Xi)[0])


def test_classifier_predictions_and_pickles_keep_the_compiled_routes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)
    clf = CARTClassifier(max_depth=5).fit(X, y)
    check_routes(clf.tree_, X[:50])
    clone = pickle.loads(pickle.dumps(clf))
    assert "_packed" not in clone.tree_.__dict__
    np.testing.assert_array_equal(clone.predict(X), clf.predict(X))


def test_trees_with_other_split_kinds_keep_the_vectorised_routes():
    b = TreeBuilder(n_outputs=1)
    root = b.add_node([0.0], 10, 1.0)
    left = b.add_node([1.0], 5, 0.5, parent=root, is_right=False)
    right = b.add_node([2.0], 5, 0.5, parent=root, is_right=True)
    b.set_split(root, SubsetSplit(0, [1.0, 2.0], seen_values=[0.0, 1.0, 2.0, 3.0]))
    ll = b.add_node([3.0], 2, 0.0, parent=left, is_right=False)
    lr = b.add_node([4.0], 3, 0.0, parent=left, is_right=True)
    b.set_split(left, ThresholdSplit(1, 0.5))
    tree = b.build()
    assert tree._packed_thresholds() is None
    X = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 0.7], [2.0, 0.5]])
    check_routes(tree, X)
    assert {int(v) for v in tree.apply(X)} <= {ll, lr, right}


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single_rows(n):
    tree = CARTRegressor(max_depth=2).fit(np.arange(8.0)[:, None], np.arange(8.0)).tree_
    X = np.zeros((n, 1))
    assert tree.apply(X).shape == (n,)
    assert tree.decision_path(X).shape == (n, tree.n_nodes)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), p=st.integers(1, 4), depth=st.integers(1, 5), n_trees=st.integers(1, 3))
def test_compiled_hyperplane_routes_equal_the_split_rule(seed, p, depth, n_trees):
    """Hyperplane trees packed into one node numbering are routed by projecting every row on every node's
    weights at once: the leaves are those of a row-by-row walk of ``x . w >= b``, rows on a hyperplane
    included, and each node's packed path is its path in its tree."""
    from treebook.tree.routing import apply_hyperplanes, pack_hyperplane_forest
    from treebook.tree.splits import HyperplaneSplit

    rng = np.random.default_rng(seed)
    trees = []
    for _ in range(n_trees):
        b = TreeBuilder(n_outputs=1)
        frontier = [(b.add_node([0.0], 1, 0.0), 0)]
        while frontier:
            node, d = frontier.pop()
            if d == depth or rng.random() < 0.2:
                continue
            w = rng.integers(-2, 3, size=p).astype(float)
            b.set_split(node, HyperplaneSplit(w, float(rng.integers(-2, 3))))
            for is_right in (False, True):
                frontier.append((b.add_node([rng.normal()], 1, 0.0, parent=node, is_right=is_right), d + 1))
        trees.append(b.build())
    packed = pack_hyperplane_forest(trees, p)
    roots, left, right, node_row, W, bias = (packed.roots, packed.left, packed.right, packed.node_row,
                                             packed.weights, packed.bias)
    for t, tree in enumerate(trees):  # every node's packed path is the tree's own path to it
        for node in range(tree.n_nodes):
            path = tree.path_to(node)
            g = roots[t] + node
            assert [int(r) for r in packed.path_rows[g] if r >= 0] == [int(node_row[roots[t] + a]) for a, _ in path]
            assert [int(v) for v in packed.path_signs[g][:len(path)]] == [1 if went_right else -1
                                                                         for _, went_right in path]
    X = rng.integers(-2, 3, size=(40, p)).astype(float)  # integer rows and weights: many rows on a hyperplane
    codes = apply_hyperplanes(X, W, bias, left, right, node_row, roots, max_elements=7)  # several batches
    for t, tree in enumerate(trees):
        np.testing.assert_array_equal(codes[:, t], walk(tree, X)[0])
        check_routes(tree, X)


def test_an_oblique_forest_encodes_as_its_trees_route():
    from treebook.oblique import ObliqueForestEmbedding

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 5))
    forest = ObliqueForestEmbedding(tree="randcart", n_estimators=4, max_depth=3, random_state=0).fit(X)
    codes = forest.transform(X)
    for t, est in enumerate(forest.estimators_):
        Xt = X[:, forest.feature_subsets_[t]]
        np.testing.assert_array_equal(codes[:, t], walk(est, Xt)[0])
