"""Behaviour of NominalTreeClassifier and the chapter-1 data loaders."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from treebook.datasets.nominal import NOMINAL_DATASETS, PAPER_DATASETS, load_nominal
from treebook.nominal import best_partition
from treebook.nominal.tree import NominalTreeClassifier
from treebook.tree import CARTClassifier, SubsetSplit


def synthetic(n=600, n_values=12, k=4, seed=0):
    rng = np.random.default_rng(seed)
    vals = np.array([f"v{i:02d}" for i in range(n_values)])
    a = rng.integers(0, n_values, n)
    probs = rng.dirichlet(np.ones(k), size=n_values)
    y = np.array([rng.choice(k, p=probs[v]) for v in a])
    x = rng.normal(size=n) + (y == 1)
    X = pd.DataFrame({"a": pd.Categorical(vals[a]), "x": x})
    return X, np.array(["c0", "c1", "c2", "c3"])[y]


@pytest.mark.parametrize("splitter", ["hcc", "lca", "pcext", "sliqext", "twoing", "balanced", "one_vs_rest",
                                      "exhaustive"])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_root_split_is_the_procedures_partition(splitter, criterion):
    X, y = synthetic()
    Xa = X[["a"]]
    clf = NominalTreeClassifier(splitter=splitter, criterion=criterion, max_depth=1).fit(Xa, y)
    codes = clf.categories_[0]
    V = pd.crosstab(pd.Categorical(Xa["a"], categories=codes), y).to_numpy(dtype=float)
    part = best_partition(V, splitter, criterion)
    split = clf.tree_.splits[0]
    assert isinstance(split, SubsetSplit)
    left = np.zeros(len(codes), dtype=bool)
    left[split.left_values.astype(int)] = True
    assert left.tolist() == part.left.tolist()
    # the children's impurities add up to the reported partition impurity
    t = clf.tree_
    kids = [t.children_left[0], t.children_right[0]]
    total = sum(t.n_node_samples[c] * t.impurity[c] for c in kids)
    assert total == pytest.approx(part.impurity, rel=1e-9)


def test_exhaustive_root_is_never_worse_than_heuristics():
    X, y = synthetic(seed=3)
    costs = {}
    for sp in ("exhaustive", "hcc", "lca", "pcext", "sliqext"):
        t = NominalTreeClassifier(splitter=sp, criterion="entropy", max_depth=1).fit(X[["a"]], y).tree_
        costs[sp] = sum(t.n_node_samples[c] * t.impurity[c] for c in (t.children_left[0], t.children_right[0]))
    assert all(costs["exhaustive"] <= v + 1e-9 for v in costs.values())


def test_learns_a_subset_concept_perfectly():
    rng = np.random.default_rng(1)
    letters = np.array(list("abcdefghijklmnop"))
    a = rng.choice(letters, 500)
    y = np.isin(a, list("bdgkmo")).astype(int)
    X = pd.DataFrame({"a": pd.Categorical(a)})
    clf = NominalTreeClassifier(splitter="lca").fit(X, y)
    assert clf.tree_.n_leaves == 2 and clf.score(X, y) == 1.0
    assert "a in {" in clf.export_text()


def test_unseen_categories_do_not_crash_and_follow_the_documented_side():
    X, y = synthetic(seed=2)
    for unseen in ("majority", "left", "right"):
        clf = NominalTreeClassifier(max_depth=3, unseen=unseen).fit(X, y)
        Xt = X.head(5).copy()
        Xt["a"] = pd.Categorical(["never-seen"] * 5)
        pred = clf.predict(Xt)
        assert pred.shape == (5,) and set(pred) <= set(clf.classes_)
        root = clf.tree_.splits[0]
        if isinstance(root, SubsetSplit):
            if unseen != "majority":
                assert root.unseen == unseen
            leaf_ids = clf.apply(Xt)
            went_right = clf.tree_.decision_path(clf._validate_X_predict(Xt))[:, clf.tree_.children_right[0]]
            assert leaf_ids.shape == (5,)
            assert bool(went_right.toarray().all()) == (root.unseen == "right")


def test_majority_side_for_categories_absent_at_a_node():
    X, y = synthetic(seed=4)
    clf = NominalTreeClassifier(max_depth=4).fit(X, y)
    t = clf.tree_
    for node, split in enumerate(t.splits):
        if isinstance(split, SubsetSplit):
            nl = t.n_node_samples[t.children_left[node]]
            nr = t.n_node_samples[t.children_right[node]]
            assert split.unseen == ("right" if nr > nl else "left")


def test_all_numeric_matches_cart():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int) + (X[:, 2] > 1)
    a = NominalTreeClassifier(max_depth=5).fit(X, y)
    b = CARTClassifier(max_depth=5).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert a.tree_.n_nodes == b.tree_.n_nodes


def test_numpy_input_with_nominal_feature_indices_and_sklearn_api():
    rng = np.random.default_rng(6)
    a = rng.integers(0, 9, 400)
    X = np.column_stack([a, rng.normal(size=400)])
    y = (a % 3 == 0).astype(int)
    clf = NominalTreeClassifier(nominal_features=[0], splitter="hcc", criterion="entropy")
    assert clone(clf).get_params()["nominal_features"] == [0]
    clf.set_params(max_depth=2).fit(X, y)
    assert clf.score(X, y) == 1.0
    assert clf.nominal_mask_.tolist() == [True, False]
    clf2 = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clf2.predict(X), clf.predict(X))
    # a code never seen in training
    Xt = X[:3].copy()
    Xt[:, 0] = 99
    assert clf.predict(Xt).shape == (3,)


def test_bad_inputs_raise_value_error():
    X, y = synthetic(n=100)
    with pytest.raises(ValueError, match="splitter"):
        NominalTreeClassifier(splitter="nope").fit(X, y)
    with pytest.raises(ValueError, match="criterion"):
        NominalTreeClassifier(criterion="mse").fit(X, y)
    with pytest.raises(ValueError, match="class"):
        NominalTreeClassifier().fit(X, np.zeros(100))
    Xn = X.copy()
    Xn.loc[3, "x"] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        NominalTreeClassifier().fit(Xn, y)
    Xm = X.copy()
    Xm["a"] = Xm["a"].astype(object)
    Xm.loc[2, "a"] = None
    with pytest.raises(ValueError, match="missing"):
        NominalTreeClassifier().fit(Xm, y)
    with pytest.raises(ValueError, match="1-D"):
        NominalTreeClassifier().fit(X, y[:50])
    with pytest.raises(ValueError, match="not a column"):
        NominalTreeClassifier(nominal_features=["zzz"]).fit(X, y)
    with pytest.raises(ValueError, match="exhaustive"):
        big = pd.DataFrame({"a": pd.Categorical([f"c{i}" for i in range(100)])})
        NominalTreeClassifier(splitter="exhaustive").fit(big, np.arange(100) % 2)
    clf = NominalTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[["a"]])
    with pytest.raises(ValueError, match="no samples"):
        clf.predict(X.iloc[:0])


def test_paper_datasets_load_with_nominal_categoricals():
    expected_rows = {"adult": 30162, "mushroom": 5644, "cars": 1728, "contraceptive": 1473}
    for name, rows in expected_rows.items():
        X, y = load_nominal(name)
        assert len(X) == rows == len(y)
        assert not X.isna().any().any()
    X, _ = load_nominal("contraceptive")
    assert isinstance(X["aggreg_working_occupation_sol"].dtype, pd.CategoricalDtype)
    assert X["aggreg_working_occupation_sol"].nunique() == 32
    assert X["wifes_age"].dtype == float
    assert set(PAPER_DATASETS) <= set(NOMINAL_DATASETS)
    with pytest.raises(ValueError, match="unknown"):
        load_nominal("covertype")
