"""Oracle tests for chapter 4: oblique trees, the OF-AE encoder/decoder and the eForest baseline."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebook.oblique import (
    EForestEmbedding,
    HHCARTRegressor,
    InfeasibleCodeWarning,
    ObliqueForestEmbedding,
    RandCARTRegressor,
    l1_decode_highs,
    l1_decode_pulp,
    mcr_bounds,
    random_rotation,
)
from treebook.oblique.grow import _householder_u, grow_oblique_tree, node_direction
from treebook.oblique.splits import (
    ObliqueSplit,
    _best_scan,
    _mean_scan,
    hyperplane_candidate,
    projected_split,
)
from treebook.tree import BaseTree, HyperplaneSplit, Tree, TreeBuilder, best_threshold_split


def _blobs(n=60, p=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) + rng.normal(size=p)


# ---------------------------------------------------------------- split search
def _brute_split(Z, y, msl):
    best = None
    _n, q = Z.shape
    for j in range(q):
        vals = np.unique(Z[:, j])
        for a, b in itertools.pairwise(vals):
            t = 0.5 * (a + b)
            r = Z[:, j] >= t
            if r.sum() < msl or (~r).sum() < msl:
                continue
            c = ((y[r] - y[r].mean()) ** 2).sum() + ((y[~r] - y[~r].mean()) ** 2).sum()
            if best is None or c < best - 1e-9:
                best = c
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(1, 4), st.integers(1, 3), st.integers(0, 10**6))
def test_best_rule_matches_brute_force(n, q, msl, seed):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 4, size=(n, q)).astype(float)
    y = rng.normal(size=n)
    found = _best_scan(Z, y, msl)
    brute = _brute_split(Z, y, msl)
    if brute is None:
        assert found is None
    else:
        j, t, cost = found
        r = Z[:, j] >= t
        c = ((y[r] - y[r].mean()) ** 2).sum() + ((y[~r] - y[~r].mean()) ** 2).sum()
        assert cost == pytest.approx(brute, abs=1e-9)
        assert c == pytest.approx(brute, abs=1e-9)


def test_mean_rule_uses_column_means():
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(30, 3))
    y = rng.normal(size=30)
    j, t, _ = _mean_scan(Z, y, 1)
    assert t == pytest.approx(Z[:, j].mean())


def test_mean_rule_ignores_columns_constant_up_to_rounding():
    rng = np.random.default_rng(2)
    y = rng.uniform(size=40)
    noise = 1e-38 * rng.normal(size=40)  # a reflected copy of a constant pixel
    assert _mean_scan(np.c_[noise, np.full(40, 3.0)], y, 1) is None
    Z = np.c_[noise, 5 * rng.integers(0, 2, size=40) + noise]
    j, t, _ = _mean_scan(Z, y, 1)
    assert j == 1 and 0.1 < t < 4.9


def _brute_mean_split(Z, y, msl):
    """The authors' MeanSegmentor with their impurity, one column at a time."""
    best = None
    for j in range(Z.shape[1]):
        m = np.mean(Z[:, j])
        left, right = y[Z[:, j] < m], y[Z[:, j] >= m]
        if len(left) < msl or len(right) < msl:
            continue
        imp = (len(left) * np.std(left) + len(right) * np.std(right)) / len(y)
        if best is None or imp < best[2] - 1e-12:
            best = (j, m, imp)
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(1, 4), st.integers(1, 4), st.integers(0, 10**6))
def test_best_rule_finds_the_optimum_of_the_core_search(n, q, msl, seed):
    """The "best" rule and the core's CART search find the same least squared error (they differ only in
    how they round costs and break ties between equally good columns)."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, q))
    y = rng.normal(size=n)
    found = _best_scan(Z, y, msl)
    core = best_threshold_split(Z, y, np.arange(q), "mse", msl)
    assert (found is None) == (core is None)
    if found is None:
        return
    j, t, cost = found
    assert cost == pytest.approx(core.cost, rel=1e-9, abs=1e-12)
    r = Z[:, j] >= t
    assert ((y[r] - y[r].mean()) ** 2).sum() + ((y[~r] - y[~r].mean()) ** 2).sum() == pytest.approx(
        core.cost, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("rule", ["best", "mean"])
def test_projected_split_is_a_core_candidate_of_its_hyperplane(rule):
    X = _blobs(50, 3, seed=22)
    y = X[:, 0] - X[:, 2]
    Q = random_rotation(3, np.random.default_rng(0))
    cand = projected_split(X, y, X @ Q, lambda j, t: ObliqueSplit(Q[:, j].copy(), t), 1, rule)
    j, t, _ = (_best_scan if rule == "best" else _mean_scan)(X @ Q, y, 1)
    assert isinstance(cand.split, ObliqueSplit) and np.array_equal(cand.split.weights, Q[:, j])
    assert cand.split.bias == t and np.array_equal(cand.right, cand.split.route(X))
    r = cand.right
    assert cand.cost == pytest.approx(((y[r] - y[r].mean()) ** 2).sum() + ((y[~r] - y[~r].mean()) ** 2).sum())
    assert hyperplane_candidate(X, y, ObliqueSplit(np.ones(3), np.abs(X).sum() + 1)) is None  # no right child


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 14), st.integers(1, 5), st.integers(1, 3), st.integers(0, 10**6))
def test_mean_rule_matches_the_authors_segmentor(n, q, msl, seed):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 5, size=(n, q)).astype(float)
    y = rng.uniform(size=n)
    found = _mean_scan(Z, y, msl)
    brute = _brute_mean_split(Z, y, msl)
    if brute is None:
        assert found is None
        return
    j, t, cost = found
    assert cost == pytest.approx(brute[2], abs=1e-9)
    left, right = y[Z[:, j] < t], y[Z[:, j] >= t]
    assert (len(left) * np.std(left) + len(right) * np.std(right)) / n == pytest.approx(brute[2], abs=1e-9)


# ---------------------------------------------------------------- reflections and rotations
@settings(max_examples=30, deadline=None)
@given(st.integers(2, 8), st.integers(0, 10**6), st.sampled_from(["farthest", "largest"]))
def test_householder_maps_axis_onto_direction(p, seed, rule):
    rng = np.random.default_rng(seed)
    d = rng.normal(size=p)
    d /= np.linalg.norm(d)
    u, d2, i = _householder_u(d, rule)
    H = np.eye(p) - 2 * np.outer(u, u)
    assert np.allclose(H @ H, np.eye(p), atol=1e-10) and np.allclose(H, H.T)
    assert np.allclose(H[:, i], d2, atol=1e-10)  # H e_i = d
    if rule == "farthest":  # the authors' choice: the basis vector farthest from d, d as given
        assert np.array_equal(d2, d)
        assert i == int(np.argmax([np.linalg.norm(np.eye(p)[k] - d) for k in range(p)]))
    else:
        assert i == int(np.argmax(np.abs(d))) and d2[i] > 0 and np.allclose(np.abs(d2), np.abs(d))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 8), st.integers(0, 10**6), st.floats(0.01, 50))
def test_householder_farthest_with_an_unnormalised_component(p, seed, scale):
    """FastICA, FactorAnalysis and the random projection give components of any length; the authors
    reflect with ``u = (e_i - d) / ||e_i - d||`` all the same: ``H`` stays a reflection."""
    d = np.random.default_rng(seed).normal(size=p)
    d *= scale / np.linalg.norm(d)
    u, d2, i = _householder_u(d, "farthest")
    H = np.eye(p) - 2 * np.outer(u, u)
    assert np.allclose(H @ H, np.eye(p), atol=1e-9)
    dist = [np.linalg.norm(np.eye(p)[k] - d) for k in range(p)]
    assert i == int(np.argmax(dist))
    v = np.eye(p)[i] - d
    assert np.allclose(u, v / np.linalg.norm(v))


def test_householder_skips_a_direction_equal_to_every_basis_vector():
    u, _, i = _householder_u(np.array([1.0]), "farthest")  # ||e_0 - d|| = 0 <= tau
    assert u is None and i == -1


def test_pca_direction_sign_follows_scikit_learn_svd_flip():
    X = _blobs(40, 5, seed=3)
    d = node_direction(X, "pca", np.random.default_rng(0))
    scores = (X - X.mean(0)) @ d
    assert scores[np.argmax(np.abs(scores))] > 0
    raw = node_direction(X * 7.0, "fa", np.random.default_rng(0), normalise=False)
    assert np.linalg.norm(raw) > 2.0  # FactorAnalysis loadings keep the data's scale


def test_random_rotation_is_orthogonal_and_seeded():
    Q1 = random_rotation(6, np.random.default_rng(3))
    Q2 = random_rotation(6, np.random.default_rng(3))
    assert np.allclose(Q1.T @ Q1, np.eye(6), atol=1e-12)
    assert np.array_equal(Q1, Q2)


def test_pca_direction_is_first_principal_axis():
    X = _blobs(80, 4)
    d = node_direction(X, "pca", np.random.default_rng(0))
    _, _, Vt = np.linalg.svd(X - X.mean(0))
    assert abs(abs(d @ Vt[0]) - 1) < 1e-8


@pytest.mark.parametrize("direction", ["pca", "svd", "ica", "fa", "grp"])
def test_hhcart_tree_hyperplanes_route_training_data(direction):
    X = _blobs(50, 4, seed=2)
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * np.random.default_rng(0).normal(size=50)
    reg = HHCARTRegressor(direction=direction, max_depth=4, random_state=0).fit(X, y)
    tree = reg.tree_
    assert np.array_equal(tree.apply(X), reg.apply(X))
    assert np.allclose(tree.predict(X)[:, 0], reg.predict(X))
    # every leaf's stored sample count equals the number of training samples routed there
    leaves, counts = np.unique(reg.apply(X), return_counts=True)
    assert np.array_equal(tree.n_node_samples[leaves], counts)
    assert reg.score(X, y) > 0.5


def test_oblique_split_beats_axis_on_diagonal_boundary():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(float)
    hh = HHCARTRegressor(max_depth=1, random_state=0).fit(X, y)
    rc = RandCARTRegressor(max_depth=1, random_state=0).fit(X, y)
    from treebook.tree import CARTRegressor

    ax = CARTRegressor(max_depth=1).fit(X, y)
    assert hh.score(X, y) >= ax.score(X, y) - 1e-12
    assert np.isfinite(rc.score(X, y))


# ---------------------------------------------------------------- the decoding LP
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.floats(-5, 5), st.integers(0, 10**6))
def test_single_halfspace_closed_form(p, beta, seed):
    """min ||x||_1 s.t. a.x >= beta has value max(beta, 0) / ||a||_inf (Hoelder duality)."""
    a = np.random.default_rng(seed).normal(size=p)
    lo, hi = np.full(p, -np.inf), np.full(p, np.inf)
    x, status, obj = l1_decode_highs(a[None, :], np.array([beta]), lo, hi)
    assert status == "optimal"
    # HiGHS accepts a point violating a row by up to its primal feasibility tolerance (1e-7), so for a tiny
    # beta the optimum may be reported as 0: compare within that tolerance
    assert obj == pytest.approx(max(beta, 0) / np.abs(a).max(), rel=1e-7, abs=1e-7 / np.abs(a).max())
    assert a @ x >= beta - 1e-7


def test_box_closed_form():
    """x1 + x2 >= 300 with 0 <= x <= 255: optimum 300 (any split with both coordinates <= 255)."""
    x, status, obj = l1_decode_highs(np.array([[1.0, 1.0]]), np.array([300.0]), np.zeros(2), np.full(2, 255.0))
    assert status == "optimal" and obj == pytest.approx(300)
    assert np.all(x <= 255 + 1e-9) and x.sum() == pytest.approx(300)
    _, status, _ = l1_decode_highs(np.array([[1.0, 1.0]]), np.array([600.0]), np.zeros(2), np.full(2, 255.0))
    assert status == "infeasible"


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 5), st.integers(1, 6), st.integers(0, 10**6), st.booleans())
def test_highs_and_pulp_agree(p, m, seed, boxed):
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=p)
    A = rng.normal(size=(m, p))
    b = A @ x0 - rng.uniform(0, 1, size=m)  # x0 is feasible
    lo, hi = (x0 - 2, x0 + 2) if boxed else (np.full(p, -np.inf), np.full(p, np.inf))
    xh, sh, oh = l1_decode_highs(A, b, lo, hi)
    xp, sp_, op = l1_decode_pulp(A, b, lo, hi)
    assert sh == sp_ == "optimal"
    assert oh == pytest.approx(op, rel=1e-6, abs=1e-7)
    assert oh == pytest.approx(np.abs(xh).sum(), rel=1e-7, abs=1e-9)
    assert np.all(A @ xh >= b - 1e-6) and np.all(A @ xp >= b - 1e-6)


def test_cvxpy_reference_when_available():
    from treebook.oblique import l1_decode_cvxpy

    A = np.array([[1.0, 2.0], [-1.0, 1.0]])
    b = np.array([2.0, -1.0])
    lo, hi = np.full(2, -np.inf), np.full(2, np.inf)
    try:
        import cvxpy  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            l1_decode_cvxpy(A, b, lo, hi)
        return
    _, st_c, oc = l1_decode_cvxpy(A, b, lo, hi)
    _, st_h, oh = l1_decode_highs(A, b, lo, hi)
    assert st_c == st_h == "optimal"
    assert oc == pytest.approx(oh, rel=1e-6)


# ---------------------------------------------------------------- the forest autoencoder
@pytest.fixture(scope="module")
def small_forest():
    X = _blobs(60, 6, seed=4)
    f = ObliqueForestEmbedding(n_estimators=8, max_depth=3, max_features=0.8, random_state=0).fit(X)
    return f, X


@pytest.mark.parametrize("tree", ["hhcart", "randcart"])
def test_decoded_points_satisfy_paths_and_reencode(tree):
    X = _blobs(60, 6, seed=5)
    f = ObliqueForestEmbedding(tree=tree, n_estimators=10, max_depth=3, max_features=0.8,
                               random_state=1).fit(X[:40])
    codes = f.transform(X[40:])
    R, info = f.inverse_transform(codes, return_info=True)
    assert info["n_failed"] == 0
    assert np.array_equal(f.transform(R), codes)
    for i in range(len(R)):
        A, b = f.path_system(codes[i])
        assert np.all(A @ R[i] >= b - 1e-6)
        # the decoded point is no larger in l1 than the original sample, which is feasible too
        if np.all(A @ X[40 + i] >= b):
            assert np.abs(R[i]).sum() <= np.abs(X[40 + i]).sum() + 1e-6


def test_transform_matches_core_trees(small_forest):
    f, X = small_forest
    codes = f.transform(X)
    assert "estimators_" in vars(f) and len(f.estimators_) == f.n_estimators  # a fitted attribute
    for t, tree in enumerate(f.estimators_):
        assert isinstance(tree, Tree)
        assert np.array_equal(tree.apply(X), codes[:, t])
        assert set(np.unique(codes[:, t])) <= set(tree.leaves().tolist())


def test_packed_arrays_are_the_core_trees(small_forest):
    """The encoder's and decoders' arrays hold the splits of ``estimators_``, in the full feature space
    (zero outside each tree's feature subset), at the nodes of the codes."""
    f, X = small_forest
    assert len(f.feature_subsets_[0]) < X.shape[1]  # max_features=0.8: the trees read subsets
    for t, tree in enumerate(f.estimators_):
        r = f.roots_[t]
        assert f.n_nodes_[t] == tree.n_nodes and np.array_equal(f.is_leaf_[r:r + tree.n_nodes], tree.is_leaf)
        outside = np.setdiff1d(np.arange(X.shape[1]), f.feature_subsets_[t])
        for nd in np.flatnonzero(~tree.is_leaf):
            s, row = tree.splits[nd], f.node_row_[r + nd]
            assert isinstance(s, ObliqueSplit) and s.weights.shape == (X.shape[1],)
            assert not s.weights[outside].any()
            assert np.array_equal(f.weights_[row], s.weights) and f.bias_[row] == s.bias
            assert f.left_[r + nd] == r + tree.children_left[nd] and f.right_[r + nd] == r + tree.children_right[nd]
            if s.direction is None:
                assert not f.directions_[row].any() and f.dir_coef_[row] == 0
            else:
                assert not s.direction[outside].any()
                assert np.array_equal(f.directions_[row], s.direction) and f.dir_coef_[row] == s.dir_coef
            assert np.array_equal(tree.decision_path(X).toarray()[:, nd] == 1,
                                  np.isin(f.transform(X)[:, t], _subtree_leaves(tree, nd)))


def _subtree_leaves(tree, node):
    """Leaves below ``node`` of a core tree."""
    return [leaf for leaf in tree.leaves() if leaf == node or node in [p for p, _ in tree.path_to(leaf)]]


@pytest.mark.parametrize("kind", ["hhcart", "randcart", "axis", "random"])
def test_tree_grown_on_a_feature_subset_reads_the_full_space(kind):
    X = _blobs(70, 6, seed=21)
    y = np.random.default_rng(1).uniform(size=70)
    feats = np.array([0, 2, 3, 5])
    kw = dict(kind=kind, max_depth=3, rotation="per_tree")
    full = grow_oblique_tree(X, y, features=feats, rng=3, **kw)
    sub = grow_oblique_tree(np.ascontiguousarray(X[:, feats]), y, rng=3, **kw)
    assert np.array_equal(full.children_left, sub.children_left) and np.array_equal(full.value, sub.value)
    assert full.n_leaves > 1
    for a, b in zip(full.splits, sub.splits):
        if b is None:
            assert a is None
            continue
        assert np.array_equal(a.weights[feats], b.weights) and not np.delete(a.weights, feats).any()
        assert a.bias == b.bias and a.dir_coef == b.dir_coef
        assert (a.direction is None) == (b.direction is None)
        if b.direction is not None:
            assert np.array_equal(a.direction[feats], b.direction)
    leaves, counts = np.unique(full.apply(X), return_counts=True)  # the full-space tree routes X
    assert np.array_equal(full.n_node_samples[leaves], counts)


def test_path_system_matches_core_path_to(small_forest):
    f, X = small_forest
    codes = f.transform(X[:3])
    trees = f.estimators_
    A, b = f.path_system(codes[0])
    rows = []
    for t, tree in enumerate(trees):
        for node, went_right in tree.path_to(int(codes[0, t])):
            s = tree.splits[node]
            sign = 1.0 if went_right else -1.0
            rows.append(np.concatenate([sign * s.weights, [sign * s.bias]]))
    ref = np.array(rows)
    got = np.hstack([A, b[:, None]])
    assert ref.shape == got.shape
    def key(M):
        return M[np.lexsort(np.round(M, 9).T[::-1])]
    assert np.allclose(key(ref), key(got))


def test_parallel_decode_equals_serial(small_forest):
    f, X = small_forest
    codes = f.transform(X[:6])
    R1 = f.inverse_transform(codes)
    f2 = ObliqueForestEmbedding(**{**f.get_params(), "n_jobs": 2}).fit(X)
    R2 = f2.inverse_transform(codes)
    assert np.allclose(R1, R2, atol=1e-9)


@pytest.mark.parametrize("max_features", [1.0, 0.7])
def test_lowrank_decoder_matches_dense(max_features):
    from treebook.oblique.decode import lowrank_structure

    X = _blobs(50, 8, seed=11)
    f = ObliqueForestEmbedding(n_estimators=12, max_depth=3, max_features=max_features, random_state=2).fit(X[:30])
    S, C, V = lowrank_structure(f)
    assert np.allclose(S.toarray() + C @ V.T, f.weights_, atol=1e-10)
    assert (np.count_nonzero(S.toarray(), axis=1) <= np.where(f.dir_coef_ != 0, 2, 8)).all()
    codes = f.transform(X[30:])
    R1, i1 = f.inverse_transform(codes, return_info=True)
    f.set_params(solver="highs-lowrank")
    R2, i2 = f.inverse_transform(codes, return_info=True)
    assert np.allclose(i1["objective"], i2["objective"], rtol=1e-6)
    assert np.array_equal(f.transform(R2), codes)


def test_fit_is_reproducible():
    X = _blobs(40, 5)
    a = ObliqueForestEmbedding(n_estimators=5, random_state=7, max_features=0.6).fit(X)
    b = ObliqueForestEmbedding(n_estimators=5, random_state=7, max_features=0.6).fit(X)
    assert np.array_equal(a.weights_, b.weights_) and np.array_equal(a.transform(X), b.transform(X))


def _hand_forest(splits, p, box=None):
    """A forest of depth-1 core trees ``x . w >= t`` built by hand."""
    f = ObliqueForestEmbedding(n_estimators=len(splits), box=box)
    trees = []
    for w, t in splits:
        b = TreeBuilder(1)
        root = b.add_node([0.0], 1, 0.0)
        b.add_node([0.0], 1, 0.0, parent=root, is_right=False)
        b.add_node([0.0], 1, 0.0, parent=root, is_right=True)
        b.set_split(root, HyperplaneSplit(w, t))
        trees.append(b.build())
    f.n_features_in_ = p
    from treebook.oblique.forest import check_box

    f._box = check_box(box, p)
    f.estimators_, f.feature_subsets_ = trees, [np.arange(p)] * len(splits)
    f._pack()
    return f


def test_hand_made_forest_closed_form():
    # right of x1 + x2 >= 4 and left of x1 - x2 >= 1: min |x1|+|x2| = 4 (e.g. x = (2.5, 1.5))
    f = _hand_forest([(np.array([1.0, 1.0]), 4.0), (np.array([1.0, -1.0]), 1.0)], 2)
    R, info = f.inverse_transform(np.array([[2, 1]]), return_info=True)
    assert info["status"][0] == "optimal"
    assert info["objective"][0] == pytest.approx(4.0, rel=1e-5)
    assert R[0].sum() >= 4 - 1e-9 and R[0, 0] - R[0, 1] < 1
    assert np.array_equal(f.transform(R), [[2, 1]])


def test_infeasible_code_is_reported_with_fallback():
    # x1 >= 5 and x1 < 3 cannot both hold
    f = _hand_forest([(np.array([1.0, 0.0]), 5.0), (np.array([1.0, 0.0]), 3.0)], 2, box=(-10, 10))
    with pytest.warns(InfeasibleCodeWarning, match=r"1 of 2 codes .*rows 0 \(infeasible\)"):
        R, info = f.inverse_transform(np.array([[2, 1], [1, 1]]), return_info=True)
    assert info["status"][0] == "infeasible" and info["n_failed"] == 1
    assert info["infeasible"].tolist() == [True, False] and f.infeasible_rows_.tolist() == [0]
    assert np.allclose(R[0], 0.0)
    assert info["status"][1] == "optimal"
    f.set_params(on_infeasible="raise")
    with pytest.raises(ValueError, match=r"rows 0 \(infeasible\)"):
        f.inverse_transform(np.array([[2, 1], [1, 1]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a feasible code decodes without a warning
        f.inverse_transform(np.array([[1, 1]]))
    assert f.infeasible_rows_.tolist() == []


def _max_slack(A, b, lo, hi):
    """Oracle: the largest ``t`` with ``A x >= b + t`` (rows normalised) inside the box, by scipy's LP."""
    from scipy.optimize import linprog

    nrm = np.linalg.norm(A, axis=1)
    An, bn = A / nrm[:, None], b / nrm
    p = A.shape[1]
    res = linprog(np.r_[np.zeros(p), -1.0], A_ub=np.c_[-An, np.ones(len(bn))], b_ub=-bn,
                  bounds=[(lo[j], hi[j]) for j in range(p)] + [(None, 1.0)], method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("tree", ["hhcart", "randcart"])
def test_every_leaf_combination_of_three_trees(tree):
    """All 4 x 4 x 4 leaf combinations of three depth-2 trees: the infeasible ones are reported (and only
    they: the slack oracle decides), the feasible ones decode to a point satisfying every path inequality
    that re-encodes to the combination."""
    X = _blobs(80, 2, seed=13)
    box = (X.min(0) - 1, X.max(0) + 1)
    f = ObliqueForestEmbedding(tree=tree, n_estimators=3, max_depth=2, box=box, random_state=4).fit(X)
    leaves = [np.flatnonzero(f.is_leaf_[r:r + m]) for r, m in zip(f.roots_, f.n_nodes_)]
    assert [len(v) for v in leaves] == [4, 4, 4]
    combos = np.array(list(itertools.product(*leaves)))
    with pytest.warns(InfeasibleCodeWarning):
        R, info = f.inverse_transform(combos, return_info=True)
    lo, hi = f._box
    slack = np.array([_max_slack(*f.path_system(c), lo, hi) for c in combos])
    assert not np.any(np.abs(slack) < 1e-9)  # no combination on the edge of feasibility
    assert np.array_equal(info["infeasible"], slack < 0)
    assert f.infeasible_rows_.tolist() == np.flatnonzero(slack < 0).tolist()
    assert 0 < info["n_failed"] < len(combos)
    feasible = ~info["infeasible"]
    for c, x in zip(combos[feasible], R[feasible]):
        A, b = f.path_system(c)
        assert np.all(A @ x >= b - 1e-7) and np.all((lo <= x + 1e-9) & (x <= hi + 1e-9))
    assert np.array_equal(f.transform(R[feasible]), combos[feasible])
    # every combination that a sample of the box reaches is feasible
    grid = np.random.default_rng(0).uniform(lo, hi, size=(4000, 2))
    hit = {tuple(c) for c in f.transform(grid)}
    assert all(feasible[i] for i, c in enumerate(map(tuple, combos)) if c in hit)


def test_codes_of_another_model_are_refused():
    X = _blobs(60, 4, seed=14)
    a = ObliqueForestEmbedding(n_estimators=3, max_depth=2, random_state=0).fit(X)
    b = ObliqueForestEmbedding(n_estimators=4, max_depth=4, random_state=0).fit(X)
    with pytest.raises(ValueError, match="another model"):
        a.inverse_transform(b.transform(X[:2]))  # 4 trees, not 3
    deep = b.transform(X)[:, :3]
    bad = deep[np.any(deep >= a.n_nodes_[None, :], axis=1)]
    assert len(bad)
    with pytest.raises(ValueError, match="outside their tree.*another model"):
        a.inverse_transform(bad[:1])


# ---------------------------------------------------------------- the authors' forest
def _split_weights(tree):
    """The normals of a core tree's splits, in node order (n_internal x n_features)."""
    return np.array([s.weights for s in tree.splits if s is not None])


def test_shared_target_is_one_draw_for_the_ensemble():
    X = _blobs(40, 3, seed=15)
    kw = dict(tree="axis", n_estimators=4, max_depth=2, bootstrap=False, random_state=0)
    shared = ObliqueForestEmbedding(target="shared", **kw).fit(X)
    roots = [t.value[0, 0] for t in shared.estimators_]  # every tree sees the same target on the same rows
    assert np.allclose(roots, roots[0])
    assert len({_split_weights(t).tobytes() for t in shared.estimators_}) == 1  # and so grows the same CART tree
    own = ObliqueForestEmbedding(target="per_tree", **kw).fit(X)
    assert len({round(t.value[0, 0], 12) for t in own.estimators_}) == 4


@pytest.mark.parametrize("rotation", ["per_node", "per_tree"])
def test_randcart_rotation_per_node_or_per_tree(rotation):
    X = _blobs(200, 4, seed=16)
    f = ObliqueForestEmbedding(tree="randcart", rotation=rotation, n_estimators=3, max_depth=3,
                               random_state=0).fit(X)
    for t in f.estimators_:
        W = _split_weights(t)
        assert len(W) >= 3 and np.allclose(np.linalg.norm(W, axis=1), 1.0)
        G = np.abs(W @ W.T)
        columns_of_one_q = np.all(np.isclose(G, 0, atol=1e-9) | np.isclose(G, 1, atol=1e-9))
        assert columns_of_one_q == (rotation == "per_tree")


def test_feature_and_sample_counts_round_down_like_bagging():
    X = _blobs(30, 10, seed=17)
    f = ObliqueForestEmbedding(n_estimators=2, max_depth=1, max_features=0.75, max_samples=0.55,
                               random_state=0).fit(X)
    assert all(len(s) == 7 for s in f.feature_subsets_)  # floor(7.5)
    assert all(t.n_node_samples[0] == 16 for t in f.estimators_)  # floor(16.5)


# ---------------------------------------------------------------- eForest / MCR
def test_mcr_decodes_lie_in_path_boxes_and_reencode():
    X = _blobs(80, 5, seed=6)
    f = EForestEmbedding(n_estimators=15, max_depth=6, point="mid", random_state=0).fit(X[:60])
    codes = f.transform(X[60:])
    lower, upper = mcr_bounds(f, codes)
    R = f.inverse_transform(codes)
    assert np.all(lower <= R + 1e-12) and np.all(R <= upper + 1e-12)
    assert np.array_equal(f.transform(R), codes)
    # brute force: every path constraint, one by one
    for i in range(len(R)):
        A, b = f.path_system(codes[i])
        assert np.all(A @ R[i] >= b - 1e-9)


def test_eforest_minimal_decode_is_the_largest_lower_bound():
    """eForest's own decoder, checked against the trees' paths walked one by one."""
    X = _blobs(80, 5, seed=6)
    f = EForestEmbedding(n_estimators=12, max_depth=4, random_state=0).fit(X[:60])
    assert f.point == "minimal"
    codes = f.transform(X[60:])
    R, info = f.inverse_transform(codes, return_info=True)
    trees = f.estimators_
    for i in range(len(R)):
        lower = [[] for _ in range(5)]
        for t, tree in enumerate(trees):
            for node, went_right in tree.path_to(int(codes[i, t])):
                s_ = tree.splits[node]
                k = int(np.argmax(np.abs(s_.weights)))
                if went_right == (s_.weights[k] > 0):
                    lower[k].append(s_.bias / s_.weights[k])
        expect = [max(v) if v else 0.0 for v in lower]
        assert np.allclose(R[i], expect, rtol=0, atol=1e-12)
    assert info["n_failed"] == 0  # codes of real samples are feasible


def test_eforest_n_failed_counts_rows():
    X = _blobs(60, 3, seed=18)
    f = EForestEmbedding(n_estimators=3, max_depth=2, random_state=1).fit(X)
    leaves = [np.flatnonzero(f.is_leaf_[r:r + m]) for r, m in zip(f.roots_, f.n_nodes_)]
    combos = np.array(list(itertools.product(*leaves)))
    with pytest.warns(InfeasibleCodeWarning):
        _, info = f.inverse_transform(combos, return_info=True)
    slack = np.array([_max_slack(*f.path_system(c), np.full(3, -1e6), np.full(3, 1e6)) for c in combos])
    assert not np.any(np.abs(slack) < 1e-9)
    assert np.array_equal(info["infeasible"], slack < 0)
    assert info["n_failed"] == int((slack < 0).sum()) <= len(combos)
    assert 0 < info["n_failed"]


def test_mcr_l1_point_equals_lp_decode_for_axis_trees():
    X = _blobs(60, 4, seed=8)
    e = EForestEmbedding(n_estimators=6, max_depth=4, point="l1", random_state=3, box=(-50, 50)).fit(X)
    codes = e.transform(X[:5])
    R = e.inverse_transform(codes)
    from treebook.oblique.decode import system_with_margin

    g = e.check_codes(codes)
    for i in range(5):
        rows, signs = e.path_rows_[g[i]].ravel(), e.path_signs_[g[i]].ravel().astype(float)
        keep = rows >= 0
        A, b = system_with_margin(e.weights_, e.bias_, rows[keep], signs[keep], e.margin)
        _, st_, obj = l1_decode_highs(A, b, *e._box)
        assert st_ == "optimal" and obj == pytest.approx(np.abs(R[i]).sum(), rel=1e-7, abs=1e-9)
    assert np.array_equal(e.transform(R), codes)


# ---------------------------------------------------------------- bad input
def test_bad_inputs_raise_value_error(small_forest):
    f, X = small_forest
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ObliqueForestEmbedding().fit(Xn)
    with pytest.raises(ValueError, match="NaN"):
        f.transform(Xn)
    with pytest.raises(ValueError, match="features"):
        f.transform(X[:, :3])
    with pytest.raises(ValueError, match="shape"):
        f.inverse_transform(np.zeros((2, 3), dtype=int))
    codes = f.transform(X[:2])
    codes[0, 0] = 0  # the root is not a leaf
    with pytest.raises(ValueError, match="not leaves"):
        f.inverse_transform(codes)
    codes[0, 0] = 999
    with pytest.raises(ValueError, match="outside"):
        f.inverse_transform(codes)
    with pytest.raises(ValueError, match="lo > hi"):
        ObliqueForestEmbedding(box=(1, 0)).fit(X)
    with pytest.raises(ValueError):
        ObliqueForestEmbedding(tree="nope").fit(X)
    with pytest.raises(ValueError):
        ObliqueForestEmbedding(max_features=1.5).fit(X)
    with pytest.raises(ValueError):
        ObliqueForestEmbedding(direction="nope").fit(X)
    with pytest.raises(ValueError, match=r"0 sample\(s\)"):
        ObliqueForestEmbedding().fit(np.zeros((0, 3)))
    with pytest.raises(ValueError):
        HHCARTRegressor().fit(X, np.full(len(X), np.inf))
    with pytest.raises(ValueError):
        EForestEmbedding(tree="hhcart").fit(X)


def test_sklearn_api_clone_and_params():
    from sklearn.base import clone

    e = EForestEmbedding(n_estimators=3, point="l1", random_state=1)
    assert clone(e).get_params() == e.get_params()
    o = ObliqueForestEmbedding(tree="randcart", n_estimators=4, box=(0, 1), random_state=2)
    assert clone(o).get_params()["box"] == (0, 1)
    X = np.random.default_rng(0).uniform(size=(30, 4))
    Z = o.fit_transform(X)
    assert Z.shape == (30, 4) and np.issubdtype(Z.dtype, np.integer)
    with pytest.raises(ValueError, match="solver"):
        ObliqueForestEmbedding(solver="simplex").fit(X)


def test_htru_study_decodes_every_row_with_both_trees():
    from treebook.oblique.experiments import htru_trees_study

    d = htru_trees_study(n_estimators=(2, 5), n_runs=2, n_train=30, n_test=4)
    assert len(d) == 2 * 2 * 2 and set(d.tree) == {"hhcart", "randcart"}
    assert (d.n_failed == 0).all() and (d.fraction_reencoded == 1.0).all() and (d.mse > 0).all()
    again = htru_trees_study(n_estimators=(2, 5), n_runs=2, n_train=30, n_test=4)
    assert np.array_equal(d.mse.to_numpy(), again.mse.to_numpy())  # seeded


@pytest.mark.parametrize("cls", [HHCARTRegressor, RandCARTRegressor])
def test_single_trees_are_core_trees(cls):
    X = _blobs(60, 4, seed=19)
    y = X @ np.array([1.0, -1.0, 0.5, 0.0])
    reg = cls(max_depth=3, random_state=0).fit(X, y)
    tree = reg.tree_
    assert isinstance(tree, Tree) and all(isinstance(s, ObliqueSplit) for s in tree.splits if s is not None)
    assert np.array_equal(tree.apply(X), reg.apply(X)) and np.allclose(tree.predict(X)[:, 0], reg.predict(X))
    reached = np.unique(reg.apply(X))  # every leaf holds training rows: the leaves are the ones reached
    assert reg.get_n_leaves() == reached.size
    depth_from_paths = max(len(tree.path_to(leaf)) for leaf in reached)  # splits above the deepest leaf reached
    assert reg.get_depth() == depth_from_paths
    assert depth_from_paths >= 1  # the data is not a single leaf
    assert depth_from_paths <= 3  # max_depth=3
    leaves, counts = np.unique(tree.apply(X), return_counts=True)
    assert np.array_equal(tree.n_node_samples[leaves], counts)
    text = reg.export_text(feature_names=list("abcd"))
    assert text.count("\n") >= reg.get_n_leaves() and "a" in text
    for nd in np.flatnonzero(~tree.is_leaf):  # an HHCART normal is 2-sparse plus a multiple of its direction
        s = tree.splits[nd]
        if s.direction is not None:
            assert np.count_nonzero(np.abs(s.weights - s.dir_coef * s.direction) > 1e-12) <= 2


@pytest.mark.parametrize("cls", [HHCARTRegressor, RandCARTRegressor])
def test_single_trees_are_core_estimators(cls):
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    X = pd.DataFrame(_blobs(60, 4, seed=23), columns=["a", "b", "c", "d"])
    y = X["a"] - 2 * X["c"]
    reg = cls(max_depth=3, random_state=1).fit(X, y)
    assert isinstance(reg, BaseTree)
    leaves = reg.apply(X)
    assert np.array_equal(reg.predict(X), reg.tree_.value[leaves, 0])
    path = reg.decision_path(X)
    assert path.shape == (60, reg.tree_.n_nodes) and np.all(path[np.arange(60), leaves] == 1)
    assert np.array_equal(np.asarray(path.sum(axis=1)).ravel(), reg.tree_.depth[leaves] + 1)
    text = reg.export_text()
    assert text.count("value:") == reg.get_n_leaves() and any(f"*{c}" in text for c in "abcd")
    assert reg.plot() is not None
    with pytest.raises(ValueError, match="feature names"):
        reg.apply(X[["b", "a", "c", "d"]])


@pytest.mark.parametrize("cls", [HHCARTRegressor, RandCARTRegressor])
@pytest.mark.parametrize("param, value", [("max_depth", -1), ("max_depth", 1.5), ("max_depth", True),
                                          ("min_samples_leaf", -1), ("min_samples_leaf", 0),
                                          ("split_rule", "median")])
def test_single_trees_refuse_bad_hyperparameters(cls, param, value):
    X = _blobs(20, 3, seed=24)
    with pytest.raises(ValueError, match=f"'{param}' parameter of {cls.__name__} must be"):
        cls(**{param: value}).fit(X, X[:, 0])
