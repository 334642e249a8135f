"""Node-by-node comparison of a treebook tree with a scikit-learn tree grown on the same data.

Two greedy trees can differ only where the split search met a tie: two splits with the same
children's cost, broken differently (scikit-learn visits features in a random order). The
comparison walks both trees from the root; a node where the splits are the same is
``identical`` (and the walk continues into both children), a node where they differ but cost
the same on the node's samples is a ``tie`` (the subtrees below are not compared), and any other
difference is a ``mismatch`` — a real disagreement.
"""

from __future__ import annotations

import numpy as np

from .cart import CARTClassifier, CARTRegressor
from .criteria import weighted_impurity
from .splits import ThresholdSplit
from .structure import Tree

__all__ = ["TOY_DATASETS", "agreement_point", "compare_with_sklearn", "load_toy"]


def _cost(stats: np.ndarray, right: np.ndarray, criterion: str) -> float:
    if criterion == "mse":
        y = stats.reshape(len(stats), -1)
        total = 0.0
        for part in (y[right], y[~right]):
            if len(part):
                total += float(((part - part.mean(axis=0)) ** 2).sum(axis=0).mean())
        return total
    return float(weighted_impurity(stats[right].sum(axis=0), criterion)
                 + weighted_impurity(stats[~right].sum(axis=0), criterion))


def compare_with_sklearn(ours: Tree, sk_tree, X: np.ndarray, stats: np.ndarray, criterion: str,
                         rtol: float = 1e-9) -> dict:
    """Compare ``ours`` (a :class:`Tree`) with ``sk_tree`` (a fitted estimator's ``tree_``).

    ``stats`` are the training targets as the criterion sees them (one-hot classes, or ``y``).
    Returns counts of ``identical``, ``tie`` and ``mismatch`` nodes, and ``compared`` (all three).
    """
    X = np.asarray(X, dtype=float)
    out = {"identical": 0, "tie": 0, "mismatch": 0}
    stack = [(0, 0, np.arange(X.shape[0]))]
    while stack:
        a, b, idx = stack.pop()
        a_leaf = ours.children_left[a] == -1
        b_leaf = sk_tree.children_left[b] == -1
        if a_leaf and b_leaf:
            out["identical"] += 1
            continue
        if a_leaf != b_leaf:
            out["mismatch"] += 1
            continue
        split = ours.splits[a]
        r_ours = np.asarray(split.route(X[idx]), dtype=bool)
        # scikit-learn sorts float32 copies of X, so its thresholds differ from ours in the last
        # bits; the same split is the same feature routing the node's samples the same way.
        r_sk = X[idx, sk_tree.feature[b]].astype(np.float32) > np.float32(sk_tree.threshold[b])
        if isinstance(split, ThresholdSplit) and split.feature == sk_tree.feature[b] and np.array_equal(r_ours, r_sk):
            out["identical"] += 1
            stack.append((ours.children_left[a], sk_tree.children_left[b], idx[~r_ours]))
            stack.append((ours.children_right[a], sk_tree.children_right[b], idx[r_ours]))
            continue
        c_ours = _cost(stats[idx], r_ours, criterion)
        c_sk = _cost(stats[idx], r_sk, criterion)
        if np.isclose(c_ours, c_sk, rtol=rtol, atol=1e-12):
            out["tie"] += 1
        else:
            out["mismatch"] += 1
    out["compared"] = out["identical"] + out["tie"] + out["mismatch"]
    return out


#: the scikit-learn toy data sets of chapter 0's agreement experiment (the last one is a regression)
TOY_DATASETS = ("iris", "wine", "breast_cancer", "diabetes")


def load_toy(dataset: str):
    """``(X, y, regression)`` of one of scikit-learn's bundled toy data sets (:data:`TOY_DATASETS`)."""
    from sklearn import datasets as skdata

    if dataset not in TOY_DATASETS:
        raise ValueError(f"dataset must be one of {TOY_DATASETS}; got {dataset!r}")
    X, y = getattr(skdata, f"load_{dataset}")(return_X_y=True)
    return X, y, dataset == "diabetes"


def agreement_point(dataset: str, split_seed: int, test_size: float, criterion: str, max_depth,
                    sklearn_seed: int, timings: dict | None = None) -> dict:
    """One fit of chapter 0's agreement experiment: our CART beside scikit-learn's on one split.

    The data set is split by ``train_test_split(random_state=split_seed)``; both trees are grown
    with ``criterion`` and ``max_depth`` (scikit-learn with ``random_state=sklearn_seed``) and
    compared node by node (:func:`compare_with_sklearn`). Returns the node counts, the tree sizes,
    the share of test predictions on which the two agree, ``test_boundary`` (test points within
    float32 rounding of one of our thresholds on its feature: scikit-learn stores float32
    thresholds and we midpoints in float64, so two identical trees may send such a point to
    different sides) and the agreement on the other test points: all deterministic. Wall-clock fit
    times, which are not, go into ``timings`` (``fit_ms_ours``, ``fit_ms_sklearn``) when given.
    """
    import time

    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    X, y, regression = load_toy(dataset)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, random_state=int(split_seed))
    Est, SkEst = (CARTRegressor, DecisionTreeRegressor) if regression else (CARTClassifier, DecisionTreeClassifier)
    t0 = time.perf_counter()
    ours = Est(criterion=criterion, max_depth=max_depth).fit(Xtr, ytr)
    t1 = time.perf_counter()
    sk = SkEst(criterion="squared_error" if criterion == "mse" else criterion, max_depth=max_depth,
               random_state=int(sklearn_seed)).fit(Xtr, ytr)
    t2 = time.perf_counter()
    if timings is not None:
        timings.update(fit_ms_ours=1e3 * (t1 - t0), fit_ms_sklearn=1e3 * (t2 - t1))
    stats = ytr if regression else np.eye(len(ours.classes_))[np.searchsorted(ours.classes_, ytr)]
    cmp = compare_with_sklearn(ours.tree_, sk.tree_, Xtr, stats, criterion)
    pred, pred_sk = ours.predict(Xte), sk.predict(Xte)
    same = np.isclose(pred, pred_sk) if regression else pred == pred_sk
    near = np.zeros(len(Xte), dtype=bool)
    for split in ours.tree_.splits:
        if isinstance(split, ThresholdSplit):
            t = split.threshold
            near |= np.abs(Xte[:, split.feature] - t) <= 1e-6 * max(1.0, abs(t))
    return {"nodes_ours": int(ours.tree_.n_nodes), "nodes_sklearn": int(sk.tree_.node_count),
            **{k: int(v) for k, v in cmp.items()}, "test_agreement": float(same.mean()),
            "test_boundary": int(near.sum()),
            "test_agreement_off_boundary": float(same[~near].mean()) if (~near).any() else 1.0}
