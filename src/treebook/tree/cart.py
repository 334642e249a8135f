"""CART (Breiman, Friedman, Olshen & Stone 1984) on the tree core.

:class:`CARTClassifier` and :class:`CARTRegressor` follow the scikit-learn API and, with all
features considered at each node, grow the same trees as scikit-learn's
``DecisionTreeClassifier`` / ``DecisionTreeRegressor`` (the book's chapter 0 checks this on
real data; ties between equally good splits may be broken differently).

``ccp_alpha`` prunes the grown tree by minimal cost-complexity (weakest-link) pruning, Breiman et al.
(1984), chapter 3, with scikit-learn's rule (:mod:`treebook.tree.prune`, ``method="sequential"``) and
scikit-learn's node costs (:func:`ccp_node_costs`): a tree identical to scikit-learn's before pruning is
identical after pruning at every ``ccp_alpha``, and ``cost_complexity_pruning_path`` returns the same
``ccp_alphas`` and ``impurities`` -- to the last bit for classification and for regression targets whose
sums are exact (integers); for other float targets scikit-learn sums in another order, the alphas agree to
~1e-14 relative, and a ``ccp_alpha`` within that rounding of an effective alpha may prune differently.

:class:`BaseTree` holds what every tree estimator of the book shares: prediction through the
fitted :class:`~treebook.tree.structure.Tree`, ``apply``, ``decision_path``, depth and leaf
counts, text export and drawing.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, clone
from sklearn.utils import Bunch
from sklearn.utils._param_validation import RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..validation import (
    RANDOM_STATE,
    NumberInterval,
    check_classification_targets,
    check_X_fitted,
    int_interval,
    real_interval,
    validate_fit,
)
from .criteria import check_criterion, node_impurity_classification, one_hot
from .export import export_text, plot_tree
from .grow import NodeSplitter, best_threshold_split, grow
from .presorted import PresortedSplitter, mse_leaf_value, mse_node_impurity, presorted_supports
from .prune import check_ccp_alpha, prune_tree, pruning_path
from .structure import Tree

__all__ = ["BaseTree", "CARTClassifier", "CARTRegressor", "GROWTH_CONSTRAINTS", "ccp_node_costs",
           "resolve_max_features"]

#: scikit-learn ``_parameter_constraints`` of the growth hyper-parameters shared by the tree estimators.
GROWTH_CONSTRAINTS = {
    "max_depth": [int_interval(0), None],
    "min_samples_split": [int_interval(2)],
    "min_samples_leaf": [int_interval(1)],
    "min_impurity_decrease": [real_interval(0)],
}

#: ``max_features`` as :func:`resolve_max_features` reads it.
MAX_FEATURES_CONSTRAINT = [None, int_interval(1), NumberInterval(RealNotInt, 0, 1, closed="right"),
                           StrOptions({"sqrt", "log2"})]

#: Largest ``n * max|y|`` for which the squared-error sums of a regression tree cannot overflow
#: (the split search forms ``(sum y)^2``).
MAX_TARGET_SPAN = 1e150


@njit(cache=True)
def _class_impurity_sklearn(counts, n):
    """Gini and entropy of each node from its class counts, in scikit-learn's order of operations:
    ``1 - sum(c_k^2) / n^2`` and ``-sum(p_k * (ln p_k / ln 2))`` with ``p_k = c_k / n``."""
    nn, k = counts.shape
    gini = np.empty(nn)
    entropy = np.empty(nn)
    for t in range(nn):
        sq = 0.0
        e = 0.0
        for c in range(k):
            ck = counts[t, c]
            sq += ck * ck
            if ck > 0.0:
                p = ck / n[t]
                e -= p * (math.log(p) / math.log(2.0))
        gini[t] = 1.0 - sq / (n[t] * n[t])
        entropy[t] = e
    return gini, entropy


def ccp_node_costs(tree: Tree, criterion: str) -> np.ndarray:
    """Per-node cost ``R(t) = n_t * i(t) / N`` of a CART tree for cost-complexity pruning, as scikit-learn
    computes it.

    For ``"gini"`` / ``"entropy"`` the impurity ``i(t)`` is recomputed from the node's class counts
    (``value * n_node_samples``) in scikit-learn's order of operations, which can differ from the
    growth-time impurity in the last bits: with identical trees the effective alphas are then
    bit-identical to scikit-learn's, so a ``ccp_alpha`` equal to one of them prunes the same branches.
    For ``"mse"`` it is the stored impurity (the same formula as scikit-learn's; equal to the last bit
    when the target sums are exact, e.g. integer targets).
    """
    check_criterion(criterion, ("gini", "entropy", "mse"))
    n = tree.n_node_samples.astype(np.float64)
    if criterion == "mse":
        imp = tree.impurity
    else:
        counts = np.rint(tree.value * n[:, None])
        gini, entropy = _class_impurity_sklearn(np.ascontiguousarray(counts), n)
        imp = gini if criterion == "gini" else entropy
    return n * imp / n[0]


def resolve_max_features(max_features, p: int) -> int | None:
    """The number of features drawn at each node for ``max_features`` (``MAX_FEATURES_CONSTRAINT``) among
    ``p``: ``None`` (all: returns ``None``), an int (at most ``p``), a float share of ``p``, ``"sqrt"`` or
    ``"log2"`` of ``p``; at least 1."""
    if max_features is None:
        return None
    if isinstance(max_features, str):
        if max_features == "sqrt":
            return max(1, int(np.sqrt(p)))
        if max_features == "log2":
            return max(1, int(np.log2(p)))
        raise ValueError(f"max_features must be None, an int, a float in (0, 1], 'sqrt' or 'log2'; "
                         f"got {max_features!r}")
    if isinstance(max_features, (float, np.floating)):
        if not 0 < max_features <= 1:
            raise ValueError(f"a float max_features must be in (0, 1]; got {max_features}")
        return max(1, int(max_features * p))
    if int(max_features) < 1:
        raise ValueError(f"max_features must be >= 1; got {max_features}")
    return min(int(max_features), p)


def _threshold_search(X, stats, features, min_samples_leaf, *, criterion):
    return best_threshold_split(X, stats, features, criterion, min_samples_leaf)


def _class_fractions(onehot):
    return onehot.sum(axis=0) / onehot.shape[0]


class BaseTree(BaseEstimator):
    """Shared behaviour of the fitted tree estimators (``tree_`` is a :class:`Tree`)."""

    def _validate_X_predict(self, X) -> np.ndarray:
        return check_X_fitted(self, X, "tree_")

    def apply(self, X) -> np.ndarray:
        """Leaf id reached by each sample."""
        X = self._validate_X_predict(X)  # first: an unfitted estimator has no ``tree_`` to look up
        return self.tree_.apply(X)

    def decision_path(self, X):
        """Sparse (n_samples x n_nodes) indicator of the nodes each sample passes through."""
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    def get_depth(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    def export_text(self, feature_names=None, decimals: int = 3) -> str:
        """The fitted tree as indented text."""
        check_is_fitted(self, "tree_")
        names = feature_names if feature_names is not None else getattr(self, "feature_names_in_", None)
        return export_text(self.tree_, feature_names=names, class_names=getattr(self, "classes_", None),
                           decimals=decimals)

    def plot(self, ax=None, feature_names=None, **kwargs):
        """Draw the fitted tree with matplotlib."""
        check_is_fitted(self, "tree_")
        names = feature_names if feature_names is not None else getattr(self, "feature_names_in_", None)
        return plot_tree(self.tree_, ax=ax, feature_names=names, class_names=getattr(self, "classes_", None),
                         **kwargs)

    def _grow(self, X, stats, criterion, leaf_value, node_impurity):
        """Grow ``tree_`` with the CART threshold search under this estimator's growth parameters: on
        presorted features (:mod:`treebook.tree.presorted`) for Gini and squared error, the vectorised
        per-node search otherwise -- the same tree either way."""
        growth = dict(max_depth=self.max_depth, min_samples_split=self.min_samples_split,
                      min_samples_leaf=self.min_samples_leaf, min_impurity_decrease=self.min_impurity_decrease,
                      max_features=resolve_max_features(self.max_features, X.shape[1]),
                      random_state=self.random_state)
        n_terms = stats.shape[1] if stats.ndim == 2 else 1
        if presorted_supports(criterion, n_terms):
            splitter = PresortedSplitter(X, stats, criterion, leaf_value, node_impurity)
        else:
            splitter = NodeSplitter(X, stats, partial(_threshold_search, criterion=criterion), leaf_value,
                                    node_impurity)
        self.tree_ = grow(splitter, **growth)
        return self


class _CostComplexityPruning:
    """``ccp_alpha`` and ``cost_complexity_pruning_path`` for the CART estimators (scikit-learn's rule)."""

    def _prune(self):
        """Replace ``tree_`` by its minimal cost-complexity subtree at ``ccp_alpha`` (0: unchanged)."""
        alpha = check_ccp_alpha(self.ccp_alpha)
        if alpha > 0:
            self.tree_ = prune_tree(self.tree_, alpha, ccp_node_costs(self.tree_, self.criterion))
        return self

    def cost_complexity_pruning_path(self, X, y) -> Bunch:
        """The weakest-link pruning path of the tree grown on ``(X, y)`` with ``ccp_alpha=0``.

        As scikit-learn's: a Bunch with ``ccp_alphas`` (0, then the effective alpha of each pruning step,
        one step per collapsed branch, so tied alphas repeat) and ``impurities`` (the total weighted
        impurity ``sum n_t/N i(t)`` of the leaves of the subtree after each step).
        """
        est = clone(self).set_params(ccp_alpha=0.0).fit(X, y)
        path = pruning_path(est.tree_, ccp_node_costs(est.tree_, est.criterion))
        return Bunch(ccp_alphas=path.ccp_alphas, impurities=path.impurities)


class CARTClassifier(_CostComplexityPruning, ClassifierMixin, BaseTree):
    """CART classification tree (greedy, axis-aligned, Gini or entropy).

    Parameters
    ----------
    criterion : {"gini", "entropy"}
    max_depth : int or None
    min_samples_split, min_samples_leaf : int
    min_impurity_decrease : float
    max_features : None, int, float or {"sqrt", "log2"}
        Features drawn (without replacement) at each node; ``None`` = all, in index order.
    random_state : int, Generator or None
        Seeds the feature draws.
    ccp_alpha : float >= 0
        Complexity parameter of minimal cost-complexity (weakest-link) pruning, Breiman et al. (1984),
        chapter 3, in scikit-learn's units (node cost ``n_t/N * impurity``): after growing, the weakest
        link (the branch of smallest effective alpha ``g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)``,
        lowest node id on ties) is collapsed into a leaf, again and again, while its effective alpha is
        ``<= ccp_alpha``, exactly as ``sklearn.tree.DecisionTreeClassifier(ccp_alpha=...)`` prunes.
        0 (the default) prunes nothing.
    """

    _parameter_constraints = {
        "criterion": [StrOptions({"gini", "entropy"})],
        **GROWTH_CONSTRAINTS,
        "max_features": MAX_FEATURES_CONSTRAINT,
        "random_state": RANDOM_STATE,
        "ccp_alpha": [real_interval(0)],
    }

    def __init__(self, criterion="gini", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_features=None, random_state=None, ccp_alpha=0.0):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_features = max_features
        self.random_state = random_state
        self.ccp_alpha = ccp_alpha

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the tree on ``X`` and class labels ``y``, then prune it at ``ccp_alpha``."""
        X, y = validate_fit(self, X, y)
        self.classes_, y_enc = check_classification_targets(y)
        self.n_features_in_ = X.shape[1]
        self.n_classes_ = self.classes_.size
        onehot = one_hot(y_enc, self.n_classes_)
        self._grow(X, onehot, self.criterion, _class_fractions,
                   partial(node_impurity_classification, criterion=self.criterion))
        return self._prune()

    def predict_proba(self, X) -> np.ndarray:
        """Class fractions of the training samples in the leaf each sample reaches."""
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)

    def predict(self, X) -> np.ndarray:
        """The most frequent training class of the leaf each sample reaches (the first on a tie, as
        ``argmax`` of :meth:`predict_proba`), looked up per leaf rather than per sample."""
        X = self._validate_X_predict(X)
        return self.classes_[np.argmax(self.tree_.value, axis=1)][self.tree_.apply(X)]


class CARTRegressor(_CostComplexityPruning, RegressorMixin, BaseTree):
    """CART regression tree (squared error); leaves predict the mean target.

    Parameters are those of :class:`CARTClassifier` except ``criterion`` (only ``"mse"``);
    ``ccp_alpha`` prunes as ``sklearn.tree.DecisionTreeRegressor(ccp_alpha=...)`` does (node cost: the
    node's share of the samples times its mean squared error).
    """

    _parameter_constraints = {**CARTClassifier._parameter_constraints, "criterion": [StrOptions({"mse"})]}

    def __init__(self, criterion="mse", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_features=None, random_state=None, ccp_alpha=0.0):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_features = max_features
        self.random_state = random_state
        self.ccp_alpha = ccp_alpha

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the tree on ``X`` and targets ``y`` ((n,) or (n, q)), then prune it at ``ccp_alpha``.

        Targets so large that their squared-error sums would overflow (``n * max|y|`` above
        :data:`MAX_TARGET_SPAN`) are refused: rescale them first."""
        multi = y is not None and np.asarray(y).ndim == 2
        X, y = validate_fit(self, X, y, y_numeric=True, multi_output=multi)
        largest = max(float(y.max()), -float(y.min()))  # max |y| without a temporary copy of y
        if largest * y.shape[0] > MAX_TARGET_SPAN:
            raise ValueError(f"y has values up to {largest:.3g}: with {y.shape[0]} samples the "
                             f"squared-error sums of the split search overflow; divide y by a constant "
                             f"(n * max|y| must stay below {MAX_TARGET_SPAN:g})")
        self.n_features_in_ = X.shape[1]
        self._multi = y.ndim == 2
        y2 = y.reshape(y.shape[0], -1)
        self._grow(X, y2, "mse", mse_leaf_value, mse_node_impurity)
        return self._prune()

    def predict(self, X) -> np.ndarray:
        X = self._validate_X_predict(X)
        leaves = self.tree_.apply(X)
        return self.tree_.value[leaves] if self._multi else self.tree_.value[:, 0][leaves]
