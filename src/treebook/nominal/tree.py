"""A decision tree whose nominal attributes are split by the procedures of :mod:`treebook.nominal`.

:class:`NominalTreeClassifier` grows a binary tree with the book's greedy grower
(:func:`treebook.tree.grow_tree`).  At each node, a nominal attribute is split by one of the binary-partition
procedures of Laber, Molinaro & Pereira (2018) (HcC, LCA, ...) applied to the node's contingency table
(values x classes), and a numeric attribute by CART's threshold search.  The split of lowest weighted impurity
``I(L) + I(R)`` (section 1.1) over all attributes is chosen; ties go to the attribute of lowest index.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from treebook.nominal.partitions import MAX_EXHAUSTIVE_VALUES, METHODS, best_partition
from treebook.tree import BaseTree, Candidate, SubsetSplit, best_threshold_split, grow_tree
from treebook.tree.criteria import node_impurity_classification, one_hot
from treebook.validation import check_classification_targets

__all__ = ["NominalTreeClassifier", "nominal_find_split"]

SPLITTERS = tuple(m for m in METHODS if m != "breiman")


def nominal_find_split(X_node, S_node, features, min_samples_leaf, *, nominal_mask, n_codes, method,
                       criterion, unseen="majority", labels=None):
    """Best split of a node over ``features`` (a ``find_split`` for :func:`treebook.tree.grow_tree`).

    ``X_node`` holds category codes (as floats) in the nominal columns (``nominal_mask``) and numbers
    elsewhere; ``S_node`` is the one-hot class matrix.  A nominal column is split by
    ``best_partition(V, method, criterion)`` on its contingency table restricted to the codes present at the
    node; a partition leaving fewer than ``min_samples_leaf`` samples on a side is discarded.  Codes absent
    from the node go to the ``unseen`` side at prediction time (``"majority"``: the child with more training
    samples at the node, ties to the left).
    """
    n, k = S_node.shape
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
        part = best_partition(V[present], method=method, impurity=criterion)
        left_codes = present[part.left]
        right = ~np.isin(codes, left_codes)
        n_right = int(right.sum())
        if min(n_right, n - n_right) < min_samples_leaf:
            continue
        key = (part.impurity, int(f))
        if best_key is None or key < best_key:
            side = unseen
            if side == "majority":
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
        (Largest Class Alone, Theorems 4.2/4.5), ``"pcext"``, ``"sliqext"``, ``"twoing"``, ``"balanced"``
        (Theorem 4.4), ``"one_vs_rest"`` or ``"exhaustive"`` (exact; at most
        ``MAX_EXHAUSTIVE_VALUES`` categories per attribute).
    criterion : {"gini", "entropy"}
    max_depth, min_samples_split, min_samples_leaf, min_impurity_decrease
        As in :class:`treebook.tree.CARTClassifier`.
    nominal_features : None or list of column names / indices
        Columns to treat as nominal.  ``None``: the pandas categorical, object, string and bool columns of a
        DataFrame (a numpy array is then all numeric).
    unseen : {"majority", "left", "right"}
        Side taken at prediction time by a category that did not reach the node at fit time (including
        categories never seen in training): ``"majority"`` follows the child with more training samples.

    Attributes
    ----------
    tree_ : treebook.tree.Tree
    classes_, n_classes_, n_features_in_, feature_names_in_ (DataFrame input)
    nominal_mask_ : bool array, which features are nominal
    categories_ : dict feature index -> array of the training categories (code = position)
    """

    def __init__(self, splitter="hcc", criterion="gini", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, nominal_features=None, unseen="majority"):
        self.splitter = splitter
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.nominal_features = nominal_features
        self.unseen = unseen

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
        if isinstance(X, pd.DataFrame):
            return X
        arr = np.asarray(X, dtype=object) if not isinstance(X, np.ndarray) else X
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-D, got {arr.ndim}-D")
        return pd.DataFrame(arr, columns=list(range(arr.shape[1])))

    def _encode(self, X, fit: bool):
        df = self._as_frame(X)
        if df.shape[0] == 0:
            raise ValueError("X has no samples")
        if df.shape[1] == 0:
            raise ValueError("X has no features")
        columns = list(df.columns)
        if fit:
            self.nominal_mask_ = self._nominal_columns(X, columns)
            self.categories_ = {}
        elif len(columns) != self.n_features_in_:
            raise ValueError(f"X has {len(columns)} features, but the tree was fitted with {self.n_features_in_}")
        out = np.empty(df.shape, dtype=float)
        for j, c in enumerate(columns):
            col = df[c]
            if self.nominal_mask_[j]:
                values = col.astype(object).to_numpy()
                missing = pd.isna(col).to_numpy()
                if fit:
                    if missing.any():
                        raise ValueError(f"nominal column {c!r} has missing values at rows "
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
                    vals = pd.to_numeric(col, errors="raise").to_numpy(dtype=float)
                except (TypeError, ValueError):
                    raise ValueError(f"numeric column {c!r} holds non-numeric values; list it in "
                                     "nominal_features or make it categorical") from None
                bad = ~np.isfinite(vals)
                if bad.any():
                    raise ValueError(f"numeric column {c!r} has NaN or infinite values at rows "
                                     f"{np.flatnonzero(bad)[:5].tolist()}")
                out[:, j] = vals
        return out

    # ------------------------------------------------------------------ API
    def fit(self, X, y):
        """Grow the tree on ``X`` (DataFrame or array) and class labels ``y``."""
        from treebook.tree.cart import _check_growth_params

        if self.splitter not in SPLITTERS:
            raise ValueError(f"splitter must be one of {SPLITTERS}, got {self.splitter!r}")
        if self.criterion not in ("gini", "entropy"):
            raise ValueError(f"criterion must be 'gini' or 'entropy', got {self.criterion!r}")
        if self.unseen not in ("majority", "left", "right"):
            raise ValueError(f"unseen must be 'majority', 'left' or 'right', got {self.unseen!r}")
        _check_growth_params(self)
        self._record_features(X)
        Xc = self._encode(X, fit=True)
        y = np.asarray(y)
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
                       method=self.splitter, criterion=self.criterion, unseen=self.unseen, labels=labels)
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

    def predict_proba(self, X):
        """Class fractions of the training samples in the leaf reached by each sample."""
        return self.tree_.predict(self._validate_X_predict(X))

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
