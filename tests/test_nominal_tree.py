"""Behaviour of NominalTreeClassifier and the chapter-1 data loaders."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency
from sklearn.base import clone

import treebook.nominal
from treebook.datasets.nominal import NOMINAL_DATASETS, PAPER_DATASETS, load_nominal
from treebook.nominal import AUTHORS_TREE_RULES, NominalTreeClassifier, best_partition
from treebook.nominal.tree import chi2_independence_pvalue
from treebook.tree import CARTClassifier, SubsetSplit, ThresholdSplit


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
    for unseen in ("larger_child", "majority", "left", "right"):
        clf = NominalTreeClassifier(max_depth=3, unseen=unseen).fit(X, y)
        Xt = X.head(5).copy()
        Xt["a"] = pd.Categorical(["never-seen"] * 5)
        pred = clf.predict(Xt)
        assert pred.shape == (5,) and set(pred) <= set(clf.classes_)
        root = clf.tree_.splits[0]
        if isinstance(root, SubsetSplit):
            if unseen in ("left", "right"):
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
    with pytest.raises(ValueError, match="seen at fit time, yet now missing"):
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


# ---------------------------------------------------------------------------------------------------------------
# The authors' tree rules (felipeamp/max_cut_paper decision_tree.py, as configured for Table 4 by
# felipeamp/icml2018-real-datasets outputs/{gini,entropy}/experiment_config.json)


def frame_from_table(table, column="a"):
    """A one-column frame (and labels) whose ``column`` x class contingency table is ``table``."""
    a, y = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [f"v{i}"] * int(count)
            y += [f"c{j}"] * int(count)
    return pd.DataFrame({column: pd.Categorical(a)}), np.array(y)


def tree_fingerprint(clf, Xt):
    """Everything that defines a fitted tree and its predictions, as plain Python values."""
    t = clf.tree_
    splits = []
    for s in t.splits:
        if s is None:
            splits.append(None)
        elif isinstance(s, SubsetSplit):
            splits.append(("subset", s.feature, s.left_values.tolist(), s.seen_values.tolist(), s.unseen))
        else:
            splits.append(("threshold", s.feature, s.threshold))
    return (t.children_left.tolist(), t.children_right.tolist(), splits, t.value.tolist(),
            t.n_node_samples.tolist(), clf.predict(Xt).tolist(), clf.predict_proba(Xt).tolist())


def with_unseen_categories(X, every=5):
    Xt = X.copy()
    Xt["a"] = Xt["a"].astype(object)
    Xt.loc[Xt.index[::every], "a"] = "never-seen"
    return Xt


@pytest.mark.parametrize("table", [[[30, 20], [20, 30]], [[28, 22], [22, 28]], [[12, 3, 5], [6, 9, 5], [4, 4, 12]]])
def test_chi2_prepruning_splits_only_when_the_p_value_is_below_alpha(table):
    X, y = frame_from_table(table)
    p = chi2_contingency(np.array(table), correction=False).pvalue  # the authors use no continuity correction
    assert chi2_independence_pvalue(np.array(table, dtype=float)) == pytest.approx(p, rel=1e-12)
    # p >= alpha: the (only) attribute is rejected and the root stays a leaf; p < alpha: it splits
    below = NominalTreeClassifier(prepruning="chi2", chi2_alpha=p * (1 - 1e-9), max_depth=1).fit(X, y)
    above = NominalTreeClassifier(prepruning="chi2", chi2_alpha=min(p * (1 + 1e-9), 0.999), max_depth=1).fit(X, y)
    assert below.tree_.n_nodes == 1 and above.tree_.n_nodes == 3
    paper = NominalTreeClassifier(prepruning="chi2", max_depth=1).fit(X, y)  # chi2_alpha = 0.1
    assert paper.tree_.n_nodes == (3 if p < 0.1 else 1)
    assert NominalTreeClassifier(max_depth=1).fit(X, y).tree_.n_nodes == 3


def test_chi2_p_value_by_hand():
    # 2x2 table with all expected counts 25: X^2 = 4 * 5^2 / 25 = 4 on 1 degree of freedom, p = erfc(sqrt(2))
    assert chi2_independence_pvalue(np.array([[30.0, 20.0], [20.0, 30.0]])) == pytest.approx(
        math.erfc(math.sqrt(2)), rel=1e-12)
    # empty rows and columns are dropped (degrees of freedom of the non-empty table); one class gives 0
    t = np.array([[30.0, 0.0, 20.0], [0.0, 0.0, 0.0], [20.0, 0.0, 30.0]])
    assert chi2_independence_pvalue(t) == pytest.approx(math.erfc(math.sqrt(2)), rel=1e-12)
    assert chi2_independence_pvalue(np.array([[5.0, 0.0], [7.0, 0.0]])) == 0.0
    rng = np.random.default_rng(0)
    for _ in range(20):
        V = rng.integers(1, 30, size=(rng.integers(2, 9), rng.integers(2, 6))).astype(float)
        assert chi2_independence_pvalue(V) == pytest.approx(chi2_contingency(V, correction=False).pvalue,
                                                            rel=1e-9, abs=1e-300)


def many_valued_vs_binary():
    """100 samples, classes 50/50.  Attribute A has 50 values of 2 samples (15 pure c0, 15 pure c1, 20 mixed):
    its best partition beats B's, but X^2 = 60 on 49 degrees of freedom (p = 0.135).  B is binary with
    the table [[30, 20], [20, 30]] (p = 0.0455)."""
    A, y = [], []
    for v in range(50):
        kind = "c0c0" if v < 15 else ("c1c1" if v < 30 else "c0c1")
        A += [f"A{v:02d}"] * 2
        y += [kind[:2], kind[2:]]
    y = np.array(y)
    B = np.empty(100, dtype=object)
    c0, c1 = np.flatnonzero(y == "c0"), np.flatnonzero(y == "c1")
    B[c0[:30]], B[c0[30:]] = "b0", "b1"
    B[c1[:20]], B[c1[20:]] = "b0", "b1"
    return pd.DataFrame({"A": pd.Categorical(A), "B": pd.Categorical(B)}), y


def test_chi2_is_tested_per_attribute_before_the_best_split_is_chosen():
    X, y = many_valued_vs_binary()
    p_a = chi2_contingency(pd.crosstab(X["A"], y).to_numpy(), correction=False).pvalue
    p_b = chi2_contingency(pd.crosstab(X["B"], y).to_numpy(), correction=False).pvalue
    assert p_a == pytest.approx(0.1349, abs=1e-4) and p_b == pytest.approx(0.0455, abs=1e-4)
    plain = NominalTreeClassifier(max_depth=1).fit(X, y)
    assert plain.tree_.splits[0].feature == 0  # A has the lower impurity
    pruned = NominalTreeClassifier(prepruning="chi2", max_depth=1).fit(X, y)
    assert pruned.tree_.splits[0].feature == 1  # A fails the test at this node, B passes and is used
    # with alpha below B's p-value no nominal attribute passes: the node is a leaf
    assert NominalTreeClassifier(prepruning="chi2", chi2_alpha=0.04, max_depth=1).fit(X, y).tree_.n_nodes == 1


def test_prepruning_rules_never_restrict_numeric_attributes():
    X, y = frame_from_table([[28, 22], [22, 28]])  # p = 0.23: "a" fails the test
    X["x"] = np.random.default_rng(0).normal(size=len(y))  # pure noise, never tested
    clf = NominalTreeClassifier(prepruning="chi2", min_second_value_count=1000, max_depth=1).fit(X, y)
    assert isinstance(clf.tree_.splits[0], ThresholdSplit) and clf.tree_.splits[0].feature == 1
    rng = np.random.default_rng(5)
    Xn = rng.normal(size=(300, 4))
    yn = (Xn[:, 0] + Xn[:, 1] ** 2 > 0.5).astype(int) + (Xn[:, 2] > 1)
    a = NominalTreeClassifier(max_depth=5, **AUTHORS_TREE_RULES).fit(Xn, yn)
    b = CARTClassifier(max_depth=5).fit(Xn, yn)
    np.testing.assert_array_equal(a.predict(Xn), b.predict(Xn))
    assert a.tree_.n_nodes == b.tree_.n_nodes


@pytest.mark.parametrize("counts, usable", [([50, 14, 5], False), ([50, 15, 5], True), ([14, 14], False),
                                            ([15, 15], True), ([60, 14], False), ([60, 15], True)])
def test_min_second_value_count_disqualifies_the_attribute(counts, usable):
    # value v_i holds only class c(i mod 2): the attribute is perfectly predictive
    table = [[c, 0] if i % 2 == 0 else [0, c] for i, c in enumerate(counts)]
    X, y = frame_from_table(table)
    clf = NominalTreeClassifier(min_second_value_count=15, max_depth=1).fit(X, y)
    assert clf.tree_.n_nodes == (3 if usable else 1)
    assert NominalTreeClassifier(max_depth=1).fit(X, y).tree_.n_nodes == 3


@pytest.mark.parametrize("second, used", [(14, 1), (15, 0)])
def test_min_second_value_count_disqualifies_the_attribute_not_the_node(second, used):
    # "a" is perfectly predictive (v0 -> c0: 50, v1 -> c1: second); "b" (32+ samples per value) is weak
    X, y = frame_from_table([[50, 0], [0, second]])
    X["b"] = pd.Categorical(np.where(np.arange(len(y)) % 2 == 0, "w0", "w1"))
    assert NominalTreeClassifier(max_depth=1).fit(X, y).tree_.splits[0].feature == 0
    clf = NominalTreeClassifier(min_second_value_count=15, max_depth=1).fit(X, y)
    assert clf.tree_.splits[0].feature == used


def test_min_second_value_count_counts_the_samples_at_the_node():
    # x separates {c0, c1} from {c2, c3}; a's second most frequent value has 29 samples at the root, 14 in the
    # x = 0 child and 15 in the x = 1 child
    rows = ([(0.0, "v0", "c0")] * 20 + [(0.0, "v1", "c1")] * 14
            + [(1.0, "v0", "c2")] * 20 + [(1.0, "v1", "c3")] * 15)
    X = pd.DataFrame({"x": [r[0] for r in rows], "a": pd.Categorical([r[1] for r in rows])})
    y = np.array([r[2] for r in rows])
    t = NominalTreeClassifier(min_second_value_count=15, max_depth=2).fit(X, y).tree_
    assert isinstance(t.splits[0], ThresholdSplit) and t.splits[0].feature == 0
    left, right = t.children_left[0], t.children_right[0]
    assert t.splits[left] is None  # 14 < 15 at this node: no attribute left, the node is a leaf
    assert isinstance(t.splits[right], SubsetSplit) and t.splits[right].feature == 1
    t0 = NominalTreeClassifier(max_depth=2).fit(X, y).tree_
    assert isinstance(t0.splits[t0.children_left[0]], SubsetSplit)


def node_majority_case():
    """x = 0: 50 samples of c2 (a in v0, v1, v2).  x = 1: a = v0 -> 15 c0 + 25 c1, a = v1 -> 20 c0.
    The x = 1 node splits on a; its majority is c0 (35 of 60) but its larger child (v0, 40 samples) predicts c1."""
    rows = ([(0.0, "v0", "c2")] * 20 + [(0.0, "v1", "c2")] * 20 + [(0.0, "v2", "c2")] * 10
            + [(1.0, "v0", "c0")] * 15 + [(1.0, "v0", "c1")] * 25 + [(1.0, "v1", "c0")] * 20)
    X = pd.DataFrame({"x": [r[0] for r in rows], "a": pd.Categorical([r[1] for r in rows])})
    return X, np.array([r[2] for r in rows])


def test_unseen_node_majority_predicts_the_majority_of_the_node_where_the_value_is_met():
    X, y = node_majority_case()
    Xt = pd.DataFrame({"x": [1.0, 1.0, 0.0, 1.0, 1.0], "a": ["v9", "v2", "v9", "v1", "v0"]})
    # v9: never seen; v2: seen in training but not at the x = 1 node
    nm = NominalTreeClassifier(max_depth=2, unseen="node_majority").fit(X, y)
    lc = NominalTreeClassifier(max_depth=2, unseen="larger_child").fit(X, y)
    t = nm.tree_
    node = t.children_right[0]
    assert isinstance(t.splits[0], ThresholdSplit) and isinstance(t.splits[node], SubsetSplit)
    assert nm.predict(Xt).tolist() == ["c0", "c0", "c2", "c0", "c1"]
    assert lc.predict(Xt).tolist() == ["c1", "c1", "c2", "c0", "c1"]
    np.testing.assert_allclose(nm.predict_proba(Xt)[0], [35 / 60, 25 / 60, 0.0])
    np.testing.assert_allclose(nm.predict_proba(Xt)[0], t.value[node])
    # prediction stops at the internal node: apply and decision_path end there
    stop = nm.apply(Xt)
    assert stop[0] == stop[1] == node and t.splits[stop[0]] is not None
    assert all(t.splits[s] is None for s in stop[2:])
    path = nm.decision_path(Xt).toarray()
    assert path[0].nonzero()[0].tolist() == [0, node]
    np.testing.assert_array_equal(path[2:], lc.decision_path(Xt).toarray()[2:])
    # the tree itself is the same; only prediction differs
    assert tree_fingerprint(nm, X)[:5] == tree_fingerprint(lc, X)[:5]


def test_larger_child_keeps_the_tree_routing():
    X, y = synthetic(seed=4)
    Xt = with_unseen_categories(X)
    clf = NominalTreeClassifier(max_depth=4, unseen="larger_child").fit(X, y)
    Xc = clf._validate_X_predict(Xt)
    np.testing.assert_array_equal(clf.predict_proba(Xt), clf.tree_.predict(Xc))
    np.testing.assert_array_equal(clf.apply(Xt), clf.tree_.apply(Xc))
    legacy = NominalTreeClassifier(max_depth=4, unseen="majority").fit(X, y)  # the former name
    assert tree_fingerprint(legacy, Xt) == tree_fingerprint(clf, Xt)


@pytest.mark.parametrize("splitter", ["hcc", "lca", "pcext", "sliqext"])
def test_default_options_reproduce_the_trees(splitter):
    X, y = synthetic(seed=7)
    Xt = with_unseen_categories(X)
    default = NominalTreeClassifier(splitter=splitter, criterion="entropy").fit(X, y)
    explicit = NominalTreeClassifier(splitter=splitter, criterion="entropy", prepruning=None, chi2_alpha=0.1,
                                     min_second_value_count=None, unseen="larger_child").fit(X, y)
    assert tree_fingerprint(default, Xt) == tree_fingerprint(explicit, Xt)
    # a minimum of 1 sample in the second value never binds (a split needs two values at the node)
    one = NominalTreeClassifier(splitter=splitter, criterion="entropy", min_second_value_count=1).fit(X, y)
    assert tree_fingerprint(one, Xt) == tree_fingerprint(default, Xt)
    params = NominalTreeClassifier().get_params()
    assert (params["prepruning"], params["chi2_alpha"], params["min_second_value_count"], params["unseen"]) == (
        None, 0.1, None, "larger_child")


def test_authors_rules_prune_and_round_trip_through_clone_and_pickle():
    X, y = synthetic(n=400, seed=2)
    X = X[["a"]]  # nominal only: the rules can only turn nodes into leaves
    Xt = with_unseen_categories(X)
    clf = NominalTreeClassifier(max_depth=16, **AUTHORS_TREE_RULES)
    assert AUTHORS_TREE_RULES == {"prepruning": "chi2", "chi2_alpha": 0.1, "min_second_value_count": 15,
                                  "unseen": "node_majority"}
    params = clf.get_params()
    for key, value in AUTHORS_TREE_RULES.items():
        assert params[key] == value
        assert clone(clf).get_params()[key] == value
    clf.fit(X, y)
    assert clf.tree_.n_leaves < NominalTreeClassifier(max_depth=16).fit(X, y).tree_.n_leaves
    clf2 = pickle.loads(pickle.dumps(clf))
    assert clf2.get_params() == clf.get_params()
    np.testing.assert_array_equal(clf2.predict_proba(Xt), clf.predict_proba(Xt))
    np.testing.assert_array_equal(clf2.apply(Xt), clf.apply(Xt))
    clf.set_params(chi2_alpha=0.05, min_second_value_count=20, unseen="left", prepruning=None)
    assert clone(clf).get_params()["min_second_value_count"] == 20


def test_new_parameters_are_validated():
    X, y = synthetic(n=100)
    bad = [({"prepruning": "fisher"}, "prepruning"), ({"prepruning": True}, "prepruning"),
           ({"chi2_alpha": 0.0}, "chi2_alpha"), ({"chi2_alpha": 1.0}, "chi2_alpha"),
           ({"chi2_alpha": -0.5}, "chi2_alpha"), ({"chi2_alpha": "0.1"}, "chi2_alpha"),
           ({"chi2_alpha": float("nan")}, "chi2_alpha"),
           ({"min_second_value_count": -1}, "min_second_value_count"),
           ({"min_second_value_count": 2.5}, "min_second_value_count"),
           ({"min_second_value_count": True}, "min_second_value_count"),
           ({"unseen": "nope"}, "unseen"), ({"unseen": "majority_class"}, "unseen")]
    for kwargs, name in bad:
        with pytest.raises(ValueError, match=name):
            NominalTreeClassifier(**kwargs).fit(X, y)
    NominalTreeClassifier(min_second_value_count=0, chi2_alpha=0.5).fit(X, y)
    NominalTreeClassifier(min_second_value_count=np.int64(3)).fit(X, y)


def test_nominal_package_exports_the_classifier():
    assert treebook.nominal.NominalTreeClassifier is NominalTreeClassifier
    assert "NominalTreeClassifier" in treebook.nominal.__all__
    assert "AUTHORS_TREE_RULES" in treebook.nominal.__all__
