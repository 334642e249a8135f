"""A decision tree whose nominal attributes are split by the procedures of :mod:`treebook.nominal`.

:class:`NominalTreeClassifier` grows a binary tree with the book's greedy grower
(:func:`treebook.tree.grow_tree`).  At each node, a nominal attribute is split by one of the binary-partition
procedures of Laber, Molinaro & Pereira (2018) (HcC, LCA, ...) applied to the node's contingency table
(values x classes), and a numeric attribute by CART's threshold search.  The split of lowest weighted impurity
``I(L) + I(R)`` (section 1.1) over all attributes is chosen; ties go to the attribute of lowest index.

Optional rules of the authors' tree code
----------------------------------------
The decision trees behind Table 4 were grown by the authors' own code, which adds rules the paper does not
state.  We read them in ``decision_tree.py`` of felipeamp/max_cut_paper (the same author's tree code; the
Table 4 repository felipeamp/icml2018-real-datasets drives an identically-called ``decision_tree`` module
whose file is not in our reference index) and in the Table 4 configurations
felipeamp/icml2018-real-datasets ``outputs/gini/experiment_config.json`` and
``outputs/entropy/experiment_config.json`` (``"use chi-sq test": true``, ``"max chi-sq p-value": 0.1``,
``"second most freq value min samples": 15``, ``"max depth": 16``, ``"min num samples allowed": [1]``).
:data:`AUTHORS_TREE_RULES` switches all of them on:

* ``prepruning="chi2"`` (``TreeNode._is_attribute_valid`` / ``create_subtree``): at every node, **before** the
  best split is searched, each nominal attribute's values x classes table at the node (empty rows and
  columns dropped) gets a chi-square test of independence, without continuity correction, on
  ``(values - 1)(classes - 1)`` degrees of freedom.  An attribute with ``p >= chi2_alpha`` is not split at
  this node (it may be at a descendant).  Numeric attributes are never tested.  The node becomes a leaf
  only when no attribute is left.
* ``min_second_value_count=15`` (same functions): a nominal attribute whose second most frequent value has
  fewer samples *at the node* is not split there.  The authors also drop it for the whole subtree; that
  follows here without bookkeeping, because a child's counts never exceed its parent's.  Their code turns
  this rule on and off together with the chi-square test; here the two options are separate.
* ``unseen="node_majority"`` (``DecisionTree._classify_sample``): a sample whose category did not reach a
  nominal split's node at fit time stops there and is given that node's class distribution (hence its
  majority class), instead of following a child.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.exceptions import DataConversionWarning
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from treebook.nominal.partitions import MAX_EXHAUSTIVE_VALUES, METHODS, best_partition
from treebook.tree import BaseTree, Candidate, SubsetSplit, best_threshold_split, grow_tree
from treebook.tree.cart import GROWTH_CONSTRAINTS
from treebook.tree.criteria import node_impurity_classification, one_hot
from treebook.validation import (
    check_classification_targets,
    check_feature_names,
    check_y_given,
    int_interval,
    real_interval,
)

__all__ = ["AUTHORS_TREE_RULES", "NominalTreeClassifier", "chi2_independence_pvalue", "nominal_find_split"]

SPLITTERS = tuple(m for m in METHODS if m != "breiman")
PREPRUNING = (None, "chi2")
UNSEEN = ("larger_child", "node_majority", "left", "right")
#: Former name of ``unseen="larger_child"``, still accepted.
_UNSEEN_ALIASES = {"majority": "larger_child"}

#: The tree rules of the authors' Table 4 runs (see the module docstring for where each one is read).
AUTHORS_TREE_RULES = {"prepruning": "chi2", "chi2_alpha": 0.1, "min_second_value_count": 15,
                      "unseen": "node_majority"}


def chi2_independence_pvalue(table) -> float:
    """p-value of Pearson's chi-square test of independence of a contingency table (rows x classes).

    Rows and columns without samples are dropped first, and the statistic sum (O - E)^2 / E is referred to
    the chi-square law on (rows - 1)(columns - 1) degrees of freedom, with no continuity correction -- the
    test of the authors' tree code (felipeamp/max_cut_paper ``decision_tree.py``,
    ``TreeNode._is_attribute_valid``), equal to ``scipy.stats.chi2_contingency(table, correction=False)``.
    A table with a single non-empty class gives 0 (as there); one with a single non-empty row gives 1.
    """
    V = np.asarray(table, dtype=float)
    V = V[V.sum(axis=1) > 0][:, V.sum(axis=0) > 0]
    if V.shape[1] < 2:
        return 0.0
    if V.shape[0] < 2:
        return 1.0
    n = V.sum()
    expected = np.outer(V.sum(axis=1), V.sum(axis=0)) / n
    statistic = float(np.sum((V - expected) ** 2 / expected))
    dof = (V.shape[0] - 1) * (V.shape[1] - 1)
    return float(stats.chi2.sf(statistic, dof))


def nominal_find_split(X_node, S_node, features, min_samples_leaf, *, nominal_mask, n_codes, method,
                       criterion, unseen="larger_child", labels=None, prepruning=None, chi2_alpha=0.1,
                       min_second_value_count=None):
    """Best split of a node over ``features`` (a ``find_split`` for :func:`treebook.tree.grow_tree`).

    ``X_node`` holds category codes (as floats) in the nominal columns (``nominal_mask``) and numbers
    elsewhere; ``S_node`` is the one-hot class matrix.  A nominal column is split by
    ``best_partition(V, method, criterion)`` on its contingency table restricted to the codes present at the
    node; a partition leaving fewer than ``min_samples_leaf`` samples on a side is discarded.  Codes absent
    from the node go to the ``unseen`` side of the :class:`SubsetSplit` (``"larger_child"``, formerly
    ``"majority"``: the child with more training samples at the node, ties to the left; or ``"left"`` /
    ``"right"``).

    Before its partition is searched, a nominal column is skipped when its second most frequent code at the
    node has fewer than ``min_second_value_count`` samples, or, with ``prepruning="chi2"``, when the
    chi-square test of its table (:func:`chi2_independence_pvalue`) gives ``p >= chi2_alpha`` -- the
    authors' rules (see the module docstring).  Numeric columns are never skipped.
    """
    n, k = S_node.shape
    unseen = _UNSEEN_ALIASES.get(unseen, unseen)
    features = np.asarray(features, dtype=np.intp)
    best = None
    best_key = None
    numeric = features[~nominal_mask[features]]
    if numeric.size:
        cand = best_threshold_split(X_node, S_node, numeric, criterion, min_samples_leaf)
        if cand is not None:
            best, best_key = cand, (cand.cost, cand.split.feature)
    cls = np.argmax(S_node, axis=1)
    for f in features[nominal_mask[features]]:
        codes = X_node[:, f].astype(np.int64)
        m = int(n_codes[f])
        V = np.bincount(codes * k + cls, minlength=m * k).reshape(m, k).astype(float)
        present = np.flatnonzero(V.sum(axis=1) > 0)
        if present.size < 2:
            continue
        if min_second_value_count is not None:
            second = np.partition(V[present].sum(axis=1), -2)[-2]
            if second < min_second_value_count:
                continue
        if prepruning == "chi2" and chi2_independence_pvalue(V[present]) >= chi2_alpha:
            continue
        part = best_partition(V[present], method=method, impurity=criterion)
        left_codes = present[part.left]
        right = ~np.isin(codes, left_codes)
        n_right = int(right.sum())
        if min(n_right, n - n_right) < min_samples_leaf:
            continue
        key = (part.impurity, int(f))
        if best_key is None or key < best_key:
            side = unseen
            if side in ("larger_child", "node_majority"):
                side = "right" if n_right > n - n_right else "left"
            split = SubsetSplit(int(f), left_codes, seen_values=present, unseen=side,
                                labels=None if labels is None else labels[f])
            best, best_key = Candidate(split, float(part.impurity), right), key
    return best


class NominalTreeClassifier(ClassifierMixin, BaseTree):
    """Classification tree with binary subset splits of nominal attributes (Laber, Molinaro & Pereira, 2018).

    Parameters
    ----------
    splitter : str
        Partition procedure for nominal attributes: ``"hcc"`` (Hypercube Cover, Theorem 3.5), ``"lca"``
        (Largest Class Alone, Theorems 4.2/4.5), ``"pcext"``, ``"sliqext"``, ``"pcext_counts"`` and
        ``"sliqext_authors"`` (PCext and SLIQext as the authors' code runs them; the rounds of the latter walk
        the categories in code order), ``"twoing"``, ``"balanced"`` (Theorem 4.4), ``"one_vs_rest"`` or
        ``"exhaustive"`` (exact; at most ``MAX_EXHAUSTIVE_VALUES`` categories per attribute).
    criterion : {"gini", "entropy"}
    max_depth, min_samples_split, min_samples_leaf, min_impurity_decrease
        As in :class:`treebook.tree.CARTClassifier`.
    nominal_features : None or list of column names / indices
        Columns to treat as nominal.  ``None``: the pandas categorical, object, string and bool columns of a
        DataFrame (a numpy array is then all numeric).
    unseen : {"larger_child", "node_majority", "left", "right"}
        What prediction does with a category that did not reach a nominal split's node at fit time
        (including categories never seen in training).  ``"larger_child"`` (default; formerly called
        ``"majority"``, still accepted) follows the child with more training samples at the node (ties to the
        left); ``"left"`` / ``"right"`` always take that side; ``"node_majority"`` (the authors' rule) stops
        at the node: ``predict_proba`` returns the node's class fractions, ``predict`` its majority class
        (ties to the first class of ``classes_``), and ``apply`` / ``decision_path`` end at that internal
        node.  ``tree_`` alone (``tree_.predict``) routes such samples to the larger child in that mode.
    prepruning : {None, "chi2"}
        ``"chi2"``: the authors' pre-pruning -- at each node, a nominal attribute whose values x classes table
        fails the chi-square test of independence (``p >= chi2_alpha``) is not split there; numeric
        attributes are never tested; a node with no attribute left is a leaf (module docstring).
    chi2_alpha : float in (0, 1)
        Level of that test (0.1 in the authors' Table 4 runs).
    min_second_value_count : None or int >= 0
        A nominal attribute whose second most frequent value has fewer training samples at the node is not
        split there (15 in the authors' Table 4 runs).  ``None`` (default) disables the rule.

    :data:`AUTHORS_TREE_RULES` holds the authors' settings of the last four parameters; their depth limit
    was 16 (``max_depth=16``).

    Attributes
    ----------
    tree_ : treebook.tree.Tree
    classes_, n_classes_, n_features_in_, feature_names_in_ (DataFrame input)
    nominal_mask_ : bool array, which features are nominal
    categories_ : dict feature index -> array of the training categories (code = position)
    """

    _parameter_constraints = {
        "splitter": [StrOptions(set(SPLITTERS))],
        "criterion": [StrOptions({"gini", "entropy"})],
        **GROWTH_CONSTRAINTS,
        "nominal_features": [None, "array-like"],
        "unseen": [StrOptions(set(UNSEEN) | set(_UNSEEN_ALIASES))],
        "prepruning": [None, StrOptions({"chi2"})],
        "chi2_alpha": [real_interval(0.0, 1.0, closed="neither")],
        "min_second_value_count": [None, int_interval(0)],
    }

    def __init__(self, splitter="hcc", criterion="gini", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, nominal_features=None, unseen="larger_child", prepruning=None,
                 chi2_alpha=0.1, min_second_value_count=None):
        self.splitter = splitter
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.nominal_features = nominal_features
        self.unseen = unseen
        self.prepruning = prepruning
        self.chi2_alpha = chi2_alpha
        self.min_second_value_count = min_second_value_count

    # ------------------------------------------------------------------ encoding
    def _nominal_columns(self, X, columns):
        p = len(columns)
        mask = np.zeros(p, dtype=bool)
        if self.nominal_features is None:
            if isinstance(X, pd.DataFrame):
                for j, c in enumerate(columns):
                    dt = X[c].dtype
                    mask[j] = (isinstance(dt, pd.CategoricalDtype) or pd.api.types.is_object_dtype(dt)
                               or pd.api.types.is_bool_dtype(dt) or pd.api.types.is_string_dtype(dt))
            return mask
        for f in self.nominal_features:
            if isinstance(f, (int, np.integer)) and not (isinstance(X, pd.DataFrame) and f in columns):
                if not 0 <= f < p:
                    raise ValueError(f"nominal feature index {f} is out of range for {p} features")
                mask[int(f)] = True
            elif f in columns:
                mask[columns.index(f)] = True
            else:
                raise ValueError(f"nominal feature {f!r} is not a column of X")
        return mask

    def _as_frame(self, X):
        if sp.issparse(X):
            raise TypeError("X is a sparse matrix, but dense data is required (sparse input is not supported); "
                            "convert it with X.toarray()")
        if isinstance(X, pd.DataFrame):
            return X
        arr = np.asarray(X, dtype=object) if not isinstance(X, np.ndarray) else X
        if arr.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_samples, n_features); got {arr.ndim}-D, shape {arr.shape}. "
                             "Reshape your data with X.reshape(-1, 1) for one feature or X.reshape(1, -1) for "
                             "one sample")
        return pd.DataFrame(arr, columns=list(range(arr.shape[1])))

    def _encode(self, X, fit: bool):
        df = self._as_frame(X)
        if df.shape[0] == 0:
            raise ValueError(f"0 sample(s) (shape={df.shape}) while a minimum of 1 is required: X has no samples")
        if df.shape[1] == 0:
            raise ValueError(f"0 feature(s) (shape={df.shape}) while a minimum of 1 is required: X has no "
                             "features")
        columns = list(df.columns)
        if fit:
            self.nominal_mask_ = self._nominal_columns(X, columns)
            self.categories_ = {}
        else:
            check_feature_names(self, X, reset=False)
        out = np.empty(df.shape, dtype=float)
        for j, c in enumerate(columns):
            col = df[c]
            if self.nominal_mask_[j]:
                values = col.astype(object).to_numpy()
                missing = pd.isna(col).to_numpy()
                if fit:
                    if missing.any():
                        raise ValueError(f"nominal column {c!r} of X has missing values at rows "
                                         f"{np.flatnonzero(missing)[:5].tolist()}; encode them as a category")
                    cats = pd.unique(values)
                    try:
                        cats = np.array(sorted(cats), dtype=object)
                    except TypeError:
                        cats = np.array(sorted(cats, key=str), dtype=object)
                    self.categories_[j] = cats
                index = pd.Index(self.categories_[j])
                codes = index.get_indexer(values).astype(float)
                codes[missing] = -1.0
                out[:, j] = codes  # -1 for a category not seen in training
            else:
                try:
                    num = pd.to_numeric(col, errors="raise")
                except (TypeError, ValueError):
                    try:  # numpy's own message says which value failed
                        np.asarray(col.to_numpy(), dtype=float)
                        detail, kind = "", ValueError
                    except (TypeError, ValueError) as exc:
                        detail, kind = f" ({exc})", type(exc)
                    raise kind(f"numeric column {c!r} of X holds non-numeric values{detail}; list it in "
                               "nominal_features or make it categorical") from None
                if np.iscomplexobj(num.to_numpy()):
                    raise ValueError(f"Complex data not supported: numeric column {c!r} of X has complex values")
                vals = num.to_numpy(dtype=float)
                bad = ~np.isfinite(vals)
                if bad.any():
                    raise ValueError(f"numeric column {c!r} of X has NaN or infinite values at rows "
                                     f"{np.flatnonzero(bad)[:5].tolist()}")
                out[:, j] = vals
        return out

    # ------------------------------------------------------------------ API
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the tree on ``X`` (DataFrame or array) and class labels ``y``."""
        check_y_given(y, type(self).__name__)
        Xc = self._encode(X, fit=True)
        check_feature_names(self, X, reset=True)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected; it was flattened to shape "
                          "(n_samples,)", DataConversionWarning, stacklevel=2)
            y = y.ravel()
        if y.ndim != 1 or y.shape[0] != Xc.shape[0]:
            raise ValueError(f"y must be 1-D with {Xc.shape[0]} labels, got shape {y.shape}")
        if pd.isna(y).any():
            raise ValueError("y has missing labels")
        self.classes_, y_enc = check_classification_targets(y)
        self.n_features_in_ = Xc.shape[1]
        self.n_classes_ = self.classes_.size
        if self.splitter == "exhaustive":
            big = [j for j, c in self.categories_.items() if c.size > MAX_EXHAUSTIVE_VALUES]
            if big:
                raise ValueError(f"splitter='exhaustive' handles at most {MAX_EXHAUSTIVE_VALUES} categories; "
                                 f"features {big} have more")
        onehot = one_hot(y_enc, self.n_classes_)
        n_codes = np.zeros(self.n_features_in_, dtype=np.int64)
        labels = {}
        for j, cats in self.categories_.items():
            n_codes[j] = cats.size
            labels[j] = [str(c) for c in cats]
        find = partial(nominal_find_split, nominal_mask=self.nominal_mask_, n_codes=n_codes,
                       method=self.splitter, criterion=self.criterion, unseen=self.unseen, labels=labels,
                       prepruning=self.prepruning, chi2_alpha=float(self.chi2_alpha),
                       min_second_value_count=self.min_second_value_count)
        self.tree_ = grow_tree(
            Xc, onehot, find_split=find,
            leaf_value=lambda Sn: Sn.sum(axis=0) / Sn.shape[0],
            node_impurity=partial(node_impurity_classification, criterion=self.criterion),
            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf, min_impurity_decrease=self.min_impurity_decrease,
        )
        return self

    def _validate_X_predict(self, X):
        check_is_fitted(self, "tree_")
        return self._encode(X, fit=False)

    def _stops_at_unseen(self) -> bool:
        return self.unseen == "node_majority"

    def predict_proba(self, X):
        """Class fractions of the training samples in the node whose prediction each sample receives: the leaf
        it reaches, or with ``unseen="node_majority"`` the node where its category was unseen."""
        Xc = self._validate_X_predict(X)  # first: an unfitted estimator has no ``tree_``
        return self.tree_.predict(Xc, stop_unseen=self._stops_at_unseen())

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def apply(self, X):
        """Id of the node whose value predicts each sample (a leaf, except for categories stopped at their
        node by ``unseen="node_majority"``)."""
        Xc = self._validate_X_predict(X)  # first: an unfitted estimator has no ``tree_``
        return self.tree_.apply(Xc, stop_unseen=self._stops_at_unseen())

    def decision_path(self, X):
        """Sparse (n_samples x n_nodes) indicator of the nodes each sample passes through (up to the node
        where ``unseen="node_majority"`` stops it)."""
        Xc = self._validate_X_predict(X)  # first: an unfitted estimator has no ``tree_``
        return self.tree_.decision_path(Xc, stop_unseen=self._stops_at_unseen())
