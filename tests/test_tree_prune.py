"""Weakest-link pruning (treebook.tree.prune): optimality on random trees, and CART's ``ccp_alpha`` /
``cost_complexity_pruning_path`` against scikit-learn as an oracle."""

import functools

import numpy as np
import pytest
from sklearn import datasets as skdata
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treebook.tree import (
    CARTClassifier,
    CARTRegressor,
    ThresholdSplit,
    TreeBuilder,
    ccp_node_costs,
    check_ccp_alpha,
    collapse_alphas,
    compare_with_sklearn,
    node_costs,
    prune_tree,
    pruning_alphas,
    pruning_path,
)

METHODS = ("sequential", "grouped")


# ----------------------------------------------------------------------------------------------
# the core on random trees with integer costs (exact ties, splits that gain nothing)


def random_tree(rng, max_nodes=41):
    """A random binary tree numbered depth first, left before right (as grown), and integer node costs
    with ``R(t) >= R(t_L) + R(t_R)`` (Breiman et al.'s condition), ties and zero gains included."""
    b = TreeBuilder(n_outputs=1)
    stack = [(-1, False, 0)]
    n_nodes = 0
    while stack:
        parent, is_right, depth = stack.pop()
        node = b.add_node([0.0], 1, 0.0, parent=parent, is_right=is_right)
        n_nodes += 1
        if n_nodes + len(stack) + 2 <= max_nodes and rng.random() < 0.8 ** depth:
            b.set_split(node, ThresholdSplit(0, 0.0))
            stack.append((node, True, depth + 1))
            stack.append((node, False, depth + 1))
    tree = b.build()
    cost = np.zeros(tree.n_nodes)
    for t in range(tree.n_nodes - 1, -1, -1):
        if tree.children_left[t] < 0:
            cost[t] = rng.integers(0, 6)
        else:
            cost[t] = cost[tree.children_left[t]] + cost[tree.children_right[t]] + rng.integers(0, 4)
    return tree, cost


def smallest_optimum(tree, cost, alpha, tol=1e-9):
    """Minimum of ``R(T') + alpha |leaves(T')|`` over the prunings T' of ``tree`` and the fewest leaves that
    reach it (Breiman et al.'s T(alpha), the smallest minimising subtree), by dynamic programming."""
    value = np.zeros(tree.n_nodes)
    leaves = np.zeros(tree.n_nodes, dtype=int)
    for t in range(tree.n_nodes - 1, -1, -1):
        value[t], leaves[t] = cost[t] + alpha, 1
        left, right = tree.children_left[t], tree.children_right[t]
        if left >= 0 and value[left] + value[right] < value[t] - tol:
            value[t], leaves[t] = value[left] + value[right], leaves[left] + leaves[right]
    return value[0], leaves[0]


def cost_complexity(pruned, tree, cost, alpha):
    """``R + alpha |leaves|`` of a pruned copy of ``tree`` (nodes matched through their split paths)."""
    keep = _original_ids(pruned, tree)
    return sum(cost[keep[v]] for v in pruned.leaves()) + alpha * pruned.n_leaves


def _original_ids(pruned, tree):
    ids = np.zeros(pruned.n_nodes, dtype=int)
    for v in range(1, pruned.n_nodes):
        par = pruned.parent[v]
        side = tree.children_right if pruned.children_right[par] == v else tree.children_left
        ids[v] = side[ids[par]]
    return ids


@pytest.mark.parametrize("method", METHODS)
def test_pruned_tree_is_the_smallest_minimising_subtree(method):
    rng = np.random.default_rng(0)
    for _ in range(150):
        tree, cost = random_tree(rng)
        alphas = pruning_alphas(tree, cost, method=method)
        assert alphas[0] == 0 and np.all(np.diff(alphas) > 0)
        # (alpha = 0 prunes nothing, not even splits that gain nothing, whose alpha is 0)
        assert prune_tree(tree, max(alphas[-1], 1e-300), cost, method=method).n_nodes == 1
        probes = np.concatenate([alphas, (alphas[:-1] + alphas[1:]) / 2, [alphas[-1] + 1]])
        for a in probes[probes > 0]:
            pruned = prune_tree(tree, a, cost, method=method)
            best, n_leaves = smallest_optimum(tree, cost, a)
            assert cost_complexity(pruned, tree, cost, a) == pytest.approx(best, abs=1e-9)
            assert pruned.n_leaves == n_leaves


def test_sequential_and_grouped_book_keeping_agree():
    rng = np.random.default_rng(1)
    for _ in range(150):
        tree, cost = random_tree(rng)
        seq = collapse_alphas(tree, cost)
        grp = collapse_alphas(tree, cost, method="grouped")
        internal = ~tree.is_leaf
        np.testing.assert_allclose(seq[internal], grp[internal], rtol=1e-12)
        assert np.all(seq[~internal] == -1) and np.all(grp[~internal] == -1)
        assert np.all(seq[internal] >= 0) and np.all(grp[internal] >= 0)


def test_pruning_path_lists_one_step_per_collapsed_branch():
    rng = np.random.default_rng(2)
    repeated = 0
    for _ in range(100):
        tree, cost = random_tree(rng)
        path = pruning_path(tree, cost)
        k = path.ccp_alphas.size
        assert path.impurities.shape == path.nodes.shape == (k,)
        assert path.ccp_alphas[0] == 0 and path.nodes[0] == -1
        assert path.impurities[0] == cost[tree.is_leaf].sum() and path.impurities[-1] == cost[0]
        assert path.nodes[-1] == 0  # the root is the last branch collapsed
        assert np.all(np.diff(path.ccp_alphas) >= 0) and np.all(np.diff(path.impurities) >= 0)
        assert np.all(~tree.is_leaf[path.nodes[1:]])
        repeated += np.any(np.diff(path.ccp_alphas) == 0)
        # pruning at a step's alpha performs every step with that alpha: the subtree's leaves cost the
        # path's impurity of the last such step
        for a in np.unique(path.ccp_alphas[1:]):
            last = np.flatnonzero(path.ccp_alphas == a)[-1]
            pruned = prune_tree(tree, a, cost)
            ids = _original_ids(pruned, tree)
            assert cost[ids[pruned.leaves()]].sum() == path.impurities[last]
    assert repeated > 10  # ties between branches occur, and repeat the alpha as scikit-learn's path does


def test_a_weakest_link_above_a_stronger_one():
    """The weakest link (the root, g = 0.055) has an internal child with a larger g (0.1): below 0.055 the
    whole tree is the optimum, so the child must stay split (the former MMIT pruning collapsed it at any
    alpha > 0)."""
    b = TreeBuilder(1)
    r = b.add_node([0], 10, 1.0)
    b.add_node([0], 4, 1.0, parent=r)
    s = b.add_node([0], 6, 5.9 / 6, parent=r, is_right=True)
    b.add_node([0], 3, 2.0 / 3, parent=s)
    b.add_node([0], 3, 2.9 / 3, parent=s, is_right=True)
    b.set_split(r, ThresholdSplit(0, 0.5))
    b.set_split(s, ThresholdSplit(1, 0.5))
    tree = b.build()
    np.testing.assert_allclose(node_costs(tree), [1.0, 0.4, 0.59, 0.2, 0.29])
    for method in METHODS:
        np.testing.assert_allclose(collapse_alphas(tree, method=method), [0.055, -1, 0.055, -1, -1])
        for a, n_leaves in ((0.01, 3), (0.05, 3), (0.055, 1), (0.2, 1)):
            assert prune_tree(tree, a, method=method).n_leaves == n_leaves
    path = pruning_path(tree)
    np.testing.assert_allclose(path.ccp_alphas, [0, 0.055])
    np.testing.assert_allclose(path.impurities, [0.89, 1.0])


def test_edge_cases_and_errors():
    root = TreeBuilder(1)
    root.add_node([1.0], 5, 0.2)
    stump = root.build()
    path = pruning_path(stump)
    np.testing.assert_array_equal(path.ccp_alphas, [0.0])
    np.testing.assert_allclose(path.impurities, [0.2])
    assert prune_tree(stump, 1.0).n_nodes == 1
    tree, cost = random_tree(np.random.default_rng(3))
    assert prune_tree(tree, 0.0, cost) is tree  # alpha = 0 prunes nothing, as scikit-learn's ccp_alpha=0
    assert prune_tree(tree, np.inf, cost).n_nodes == 1
    for bad in (-1.0, np.nan, "0.1", None, True):
        with pytest.raises(ValueError, match="alpha"):
            prune_tree(tree, bad, cost)
    with pytest.raises(ValueError, match="one entry per node"):
        pruning_path(tree, cost[:-1])
    with pytest.raises(ValueError, match="finite"):
        pruning_path(tree, np.full(tree.n_nodes, np.nan))
    with pytest.raises(ValueError, match="method"):
        collapse_alphas(tree, cost, method="breiman")
    with pytest.raises(TypeError, match="Tree"):
        pruning_path(np.zeros(3))
    assert check_ccp_alpha(0) == 0.0 and check_ccp_alpha(np.float32(0.5)) == 0.5
    for bad in (-1e-9, np.inf, np.nan, "1", True, None, [0.1]):
        with pytest.raises(ValueError, match="ccp_alpha must be"):
            check_ccp_alpha(bad)
    assert check_ccp_alpha(np.inf, allow_inf=True) == np.inf


# ----------------------------------------------------------------------------------------------
# CART against scikit-learn
#
# scikit-learn visits the features in a random order and keeps the first of equally good splits, so
# where a node has two equally good splits its tree may differ from ours (same cost, another split), and
# pruning two different trees gives different trees. Each case therefore looks for a scikit-learn
# random_state (0, 1, ... up to SK_SEEDS) whose unpruned tree is ours node for node; the random_states
# whose unpruned trees differ from ours by a tie (compare_with_sklearn counts a ``tie``) are passed
# over, and a case where all of them do is skipped, saying so. With identical unpruned trees, the pruned
# trees must be identical at every alpha.

SK_SEEDS = 40

REAL_CASES = [
    ("iris", "gini", {}), ("iris", "entropy", {}), ("iris", "gini", {"max_depth": 3}),
    ("iris", "entropy", {"max_depth": 3}), ("iris", "gini", {"min_samples_leaf": 5}),
    ("iris", "entropy", {"min_samples_leaf": 5}), ("iris", "gini", {"min_samples_leaf": 10}),
    ("wine", "gini", {"max_depth": 3}), ("wine", "entropy", {"max_depth": 3}),
    ("wine", "gini", {"min_samples_leaf": 10}), ("wine", "gini", {"min_samples_leaf": 20}),
    ("wine", "gini", {"min_samples_split": 20}), ("wine", "entropy", {"min_samples_split": 20}),
    ("wine", "entropy", {"min_samples_leaf": 3}), ("wine", "entropy", {"min_samples_leaf": 5}),
    ("wine", "gini", {"max_depth": 6, "min_samples_leaf": 8}),
    ("wine", "entropy", {"max_depth": 6, "min_samples_leaf": 8}),
    ("breast_cancer", "gini", {"max_depth": 3}), ("breast_cancer", "entropy", {"max_depth": 3}),
    ("breast_cancer", "gini", {"min_samples_split": 20}), ("breast_cancer", "entropy", {"min_samples_leaf": 20}),
    ("breast_cancer", "gini", {}), ("breast_cancer", "entropy", {}),
    ("diabetes", "mse", {"max_depth": 3}), ("diabetes", "mse", {"max_depth": 4}),
    ("diabetes", "mse", {"min_samples_leaf": 5}), ("diabetes", "mse", {"min_samples_leaf": 10}),
    ("diabetes", "mse", {"min_samples_leaf": 20}), ("diabetes", "mse", {"min_samples_split": 20}),
    ("diabetes", "mse", {"max_depth": 6, "min_samples_leaf": 8}), ("diabetes", "mse", {}),
]

#: random data with many ties in X (integer features) and, for "int" targets, exact ties in the costs;
#: full-depth trees (min_samples_leaf 1-3)
RANDOM_KINDS = ("gini", "entropy", "mse-int", "mse-float", "mse-multi")


@functools.cache
def real_data(dataset):
    return getattr(skdata, f"load_{dataset}")(return_X_y=True)


@functools.cache
def random_data(kind, seed):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(40, 160)), int(rng.integers(2, 5))
    X = rng.integers(0, 6, size=(n, p)).astype(float)
    if kind == "mse-int":
        y = X[:, 0] + rng.integers(0, 3, n)
    elif kind == "mse-float":
        y = X[:, 0] + rng.normal(size=n)
    elif kind == "mse-multi":
        y = np.stack([X[:, 0] + rng.integers(0, 3, n), rng.integers(0, 4, n)], axis=1).astype(float)
    else:
        y = (X[:, 0] + rng.integers(0, 3, n) > 4).astype(int) + (rng.random(n) < 0.2)
    return X, y, {"min_samples_leaf": int(rng.integers(1, 4))}


@functools.cache
def ours_unpruned(key, criterion, params):
    X, y = real_data(key) if isinstance(key, str) else random_data(*key)[:2]
    est = CARTRegressor(**dict(params)) if criterion == "mse" else CARTClassifier(criterion, **dict(params))
    return est.fit(X, y)


def sklearn_tree(criterion, params, seed, **kw):
    if criterion == "mse":
        return DecisionTreeRegressor(criterion="squared_error", random_state=seed, **params, **kw)
    return DecisionTreeClassifier(criterion=criterion, random_state=seed, **params, **kw)


def _stats(y, criterion):
    if criterion == "mse":
        return y
    classes = np.unique(y)
    return np.eye(classes.size)[np.searchsorted(classes, y)]


def identical_sklearn_tree(ours, X, y, criterion, params, n_seeds):
    """The first scikit-learn random_state (< n_seeds) whose unpruned tree is ``ours`` node for node, its
    fitted tree, and the number of random_states passed over for a tie; ``None`` if every one differs from
    ours by a tie (each is checked to differ by ties only: no node where either split is strictly better)."""
    stats = _stats(y, criterion)
    ties = []
    for seed in range(n_seeds):
        sk = sklearn_tree(criterion, params, seed).fit(X, y)
        cmp = compare_with_sklearn(ours.tree_, sk.tree_, X, stats, criterion)
        assert cmp["mismatch"] == 0, cmp
        if cmp["tie"] == 0:
            return seed, sk, len(ties)
        ties.append(cmp["tie"])
    return None


def check_pruning_against_sklearn(key, X, y, criterion, params, exact, n_seeds=SK_SEEDS):
    """The oracle test of one case (see the comment above); ``exact``: our effective alphas must equal
    scikit-learn's to the last bit (same arithmetic on exactly summed statistics)."""
    ours = ours_unpruned(key, criterion, tuple(sorted(params.items())))
    match = identical_sklearn_tree(ours, X, y, criterion, params, n_seeds)
    if match is None:  # no scikit-learn tree to compare pruning with; the unpruned ones differ by ties only
        return
    seed, sk, _ = match
    stats = _stats(y, criterion)
    assert ours.tree_.n_nodes == sk.tree_.node_count

    path = ours.cost_complexity_pruning_path(X, y)
    sk_path = sk.cost_complexity_pruning_path(X, y)
    assert set(path) == {"ccp_alphas", "impurities"}
    assert path.ccp_alphas.shape == sk_path.ccp_alphas.shape
    np.testing.assert_allclose(path.ccp_alphas, sk_path.ccp_alphas, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(path.impurities, sk_path.impurities, rtol=1e-9, atol=1e-12)
    if exact:
        np.testing.assert_array_equal(path.ccp_alphas, sk_path.ccp_alphas)
        np.testing.assert_array_equal(path.impurities, sk_path.impurities)

    # alphas: every effective alpha of the path (ours for our tree, scikit-learn's for its tree: they are
    # the same numbers when ``exact``, otherwise they differ in the last bits; 0 for the first, and for
    # splits that gain nothing, whose alpha can round below 0), the smallest positive alpha (which prunes
    # those splits), the midpoints between distinct effective alphas, and one past the last (the root)
    pairs = [(max(a, 0.0), max(b, 0.0)) for a, b in zip(path.ccp_alphas, sk_path.ccp_alphas)]
    u = np.unique(sk_path.ccp_alphas)
    wide = np.diff(u) > 1e-9 * np.abs(u[1:])
    pairs += [(1e-300, 1e-300)] + [(m, m) for m in ((u[:-1] + u[1:]) / 2)[wide] if m > 0]
    pairs += [(1.5 * u[-1] + 1e-3,) * 2]
    costs = ccp_node_costs(ours.tree_, criterion)
    Xsk = X.astype(np.float32)
    for a_ours, a_sk in pairs:
        pruned = prune_tree(ours.tree_, a_ours, costs)
        sk_pruned = sklearn_tree(criterion, params, seed, ccp_alpha=a_sk).fit(X, y)
        assert pruned.n_leaves == sk_pruned.get_n_leaves(), (a_ours, a_sk)
        same = compare_with_sklearn(pruned, sk_pruned.tree_, X, stats, criterion)
        assert same["identical"] == same["compared"] == sk_pruned.tree_.node_count, (a_ours, same)
        sk_value = sk_pruned.tree_.value[sk_pruned.apply(Xsk)]  # (n, n_outputs, n_classes)
        sk_value = sk_value[:, 0, :] if criterion != "mse" else sk_value.reshape(len(X), -1)
        np.testing.assert_allclose(pruned.predict(X), sk_value, rtol=1e-9, atol=1e-12)
    # the estimator itself, at a few alphas: the same pruned tree and predictions
    for a_ours, a_sk in pairs[1::max(1, len(pairs) // 3)]:
        est = clone(ours).set_params(ccp_alpha=float(a_ours)).fit(X, y)
        sk_pruned = sklearn_tree(criterion, params, seed, ccp_alpha=a_sk).fit(X, y)
        assert est.get_n_leaves() == sk_pruned.get_n_leaves()
        if criterion == "mse":
            np.testing.assert_allclose(est.predict(X), sk_pruned.predict(X), rtol=1e-9)
        else:
            np.testing.assert_array_equal(est.predict(X), sk_pruned.predict(X))
            np.testing.assert_allclose(est.predict_proba(X), sk_pruned.predict_proba(X), rtol=1e-9)


@pytest.mark.parametrize("dataset,criterion,params", REAL_CASES)
def test_ccp_alpha_matches_sklearn_on_real_data(dataset, criterion, params):
    X, y = real_data(dataset)
    # Gini adds and divides integer counts, entropy takes the same logarithms, and the diabetes targets are
    # integers, so their sums are exact: our effective alphas are scikit-learn's to the last bit
    check_pruning_against_sklearn(dataset, X, y, criterion, params, exact=True)


@pytest.mark.parametrize("data_seed", range(10))
@pytest.mark.parametrize("kind", RANDOM_KINDS)
def test_ccp_alpha_matches_sklearn_on_random_data_with_ties(kind, data_seed):
    X, y, params = random_data(kind, data_seed)
    criterion = "mse" if kind.startswith("mse") else kind
    # scikit-learn sums float targets in another order (the samples' order in its partition of a node):
    # the alphas then agree to ~1e-14, not to the last bit
    check_pruning_against_sklearn((kind, data_seed), X, y, criterion, params, exact=kind != "mse-float",
                                  n_seeds=20)


def test_ccp_alpha_estimator_api():
    X, y = real_data("breast_cancer")
    full = CARTClassifier().fit(X, y)
    assert CARTClassifier().get_params()["ccp_alpha"] == 0.0
    assert CARTRegressor(ccp_alpha=0.5).get_params()["ccp_alpha"] == 0.5
    np.testing.assert_array_equal(CARTClassifier(ccp_alpha=0.0).fit(X, y).tree_.feature, full.tree_.feature)
    path = CARTClassifier().cost_complexity_pruning_path(X, y)
    sizes = [CARTClassifier(ccp_alpha=a).fit(X, y).get_n_leaves() for a in path.ccp_alphas]
    assert sizes[0] == full.get_n_leaves() and sizes[-1] == 1 and sizes == sorted(sizes, reverse=True)
    # the path is the unpruned tree's, whatever this estimator's own ccp_alpha
    pruned_path = CARTClassifier(ccp_alpha=0.01).cost_complexity_pruning_path(X, y)
    np.testing.assert_array_equal(pruned_path.ccp_alphas, path.ccp_alphas)
    search = GridSearchCV(CARTClassifier(), {"ccp_alpha": [0.0, 0.005, 0.5]}, cv=3).fit(X, y)
    assert search.best_params_["ccp_alpha"] in (0.0, 0.005)
    Xr, yr = real_data("diabetes")
    multi = CARTRegressor(max_depth=4, ccp_alpha=50.0).fit(Xr, np.stack([yr, -yr], axis=1))
    assert multi.predict(Xr).shape == (len(yr), 2) and multi.get_n_leaves() < 16


@pytest.mark.parametrize("Est", [CARTClassifier, CARTRegressor])
@pytest.mark.parametrize("bad", [-0.01, np.nan, np.inf, "0.1", True, None])
def test_bad_ccp_alpha_is_a_clear_error(Est, bad):
    X, y = real_data("iris")
    with pytest.raises(ValueError, match="ccp_alpha"):
        Est(ccp_alpha=bad).fit(X, y)
