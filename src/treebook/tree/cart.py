"""CART (Breiman, Friedman, Olshen & Stone 1984) on the tree core.

:class:`CARTClassifier` and :class:`CARTRegressor` follow the scikit-learn API and, with all
features considered at each node, grow the same trees as scikit-learn's
``DecisionTreeClassifier`` / ``DecisionTreeRegressor`` (the book's chapter 0 checks this on
real data; ties between equally good splits may be broken differently).

:class:`BaseTree` holds what every tree estimator of the book shares: prediction through the
fitted :class:`~treebook.tree.structure.Tree`, ``apply``, ``decision_path``, depth and leaf
counts, text export and drawing.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..validation import check_array, check_classification_targets, check_n_features, check_X_y
from .criteria import check_criterion, node_impurity_classification, node_impurity_mse, one_hot
from .export import export_text, plot_tree
from .grow import best_threshold_split, grow_tree

__all__ = ["BaseTree", "CARTClassifier", "CARTRegressor"]


def _check_growth_params(est) -> None:
    """Validate the growth hyper-parameters shared by the tree estimators."""
    if est.max_depth is not None and (not isinstance(est.max_depth, (int, np.integer)) or est.max_depth < 0):
        raise ValueError(f"max_depth must be None or a non-negative int; got {est.max_depth!r}")
    if not isinstance(est.min_samples_split, (int, np.integer)) or est.min_samples_split < 2:
        raise ValueError(f"min_samples_split must be an int >= 2; got {est.min_samples_split!r}")
    if not isinstance(est.min_samples_leaf, (int, np.integer)) or est.min_samples_leaf < 1:
        raise ValueError(f"min_samples_leaf must be an int >= 1; got {est.min_samples_leaf!r}")
    mid = getattr(est, "min_impurity_decrease", 0.0)
    if mid < 0:
        raise ValueError(f"min_impurity_decrease must be >= 0; got {mid!r}")


def _resolve_max_features(max_features, p: int) -> int | None:
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


def _mean(y):
    return y.mean(axis=0)


class BaseTree(BaseEstimator):
    """Shared behaviour of the fitted tree estimators (``tree_`` is a :class:`Tree`)."""

    def _validate_X_predict(self, X) -> np.ndarray:
        check_is_fitted(self, "tree_")
        X = check_array(X)
        check_n_features(X, self.n_features_in_, estimator=type(self).__name__)
        return X

    def apply(self, X) -> np.ndarray:
        """Leaf id reached by each sample."""
        return self.tree_.apply(self._validate_X_predict(X))

    def decision_path(self, X):
        """Sparse (n_samples x n_nodes) indicator of the nodes each sample passes through."""
        return self.tree_.decision_path(self._validate_X_predict(X))

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
        """Grow ``tree_`` with the CART threshold search under this estimator's growth parameters."""
        self.tree_ = grow_tree(
            X, stats,
            find_split=partial(_threshold_search, criterion=criterion),
            leaf_value=leaf_value, node_impurity=node_impurity,
            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf, min_impurity_decrease=self.min_impurity_decrease,
            max_features=_resolve_max_features(self.max_features, X.shape[1]), random_state=self.random_state,
        )
        return self

    def _record_features(self, X) -> None:
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)


class CARTClassifier(ClassifierMixin, BaseTree):
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
    """

    def __init__(self, criterion="gini", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_features=None, random_state=None):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_features = max_features
        self.random_state = random_state

    def fit(self, X, y):
        check_criterion(self.criterion)
        _check_growth_params(self)
        self._record_features(X)
        X, y = check_X_y(X, y)
        self.classes_, y_enc = check_classification_targets(y)
        self.n_features_in_ = X.shape[1]
        self.n_classes_ = self.classes_.size
        onehot = one_hot(y_enc, self.n_classes_)
        return self._grow(X, onehot, self.criterion, _class_fractions,
                          partial(node_impurity_classification, criterion=self.criterion))

    def predict_proba(self, X) -> np.ndarray:
        """Class fractions of the training samples in the leaf each sample reaches."""
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class CARTRegressor(RegressorMixin, BaseTree):
    """CART regression tree (squared error); leaves predict the mean target.

    Parameters are those of :class:`CARTClassifier` except ``criterion`` (only ``"mse"``).
    """

    def __init__(self, criterion="mse", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_features=None, random_state=None):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_features = max_features
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y):
        check_criterion(self.criterion, ("mse",))
        _check_growth_params(self)
        self._record_features(X)
        multi = y is not None and np.asarray(y).ndim == 2
        X, y = check_X_y(X, y, y_numeric=True, multi_output=multi)
        self.n_features_in_ = X.shape[1]
        self._multi = y.ndim == 2
        y2 = y.reshape(y.shape[0], -1)
        return self._grow(X, y2, "mse", _mean, node_impurity_mse)

    def predict(self, X) -> np.ndarray:
        X = self._validate_X_predict(X)
        out = self.tree_.predict(X)
        return out if self._multi else out[:, 0]
