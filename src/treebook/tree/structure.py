"""The array-based binary tree shared by every chapter.

Like scikit-learn's ``tree_``, a :class:`Tree` is a set of parallel node arrays. Node 0 is the
root; ``children_left[i] == children_right[i] == -1`` marks a leaf. What an internal node tests is
a :class:`~treebook.tree.splits.Split` object in ``splits[i]``. A tree whose internal nodes are all
threshold splits is routed by a compiled loop over the rows (:mod:`treebook.tree.routing`); any other
tree is routed node by node, each split kind sending a whole matrix at once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .routing import apply_thresholds, threshold_paths
from .splits import Split, ThresholdSplit

__all__ = ["Tree", "TreeBuilder", "LEAF"]

LEAF = -1


class Tree:
    """A fitted binary tree.

    Attributes
    ----------
    children_left, children_right : int arrays
        Child ids, ``-1`` at leaves.
    parent : int array
        Parent id (``-1`` at the root).
    splits : list
        The :class:`Split` of each internal node, ``None`` at leaves.
    value : float array (n_nodes, n_outputs)
        What a node predicts (class fractions for classifiers, the fitted value for regressors).
    n_node_samples : int array
        Training samples that reached the node.
    impurity : float array
        The node's impurity (per sample) under the tree's criterion.
    depth : int array
        Depth of each node (root = 0).
    """

    def __init__(self, children_left, children_right, parent, splits, value, n_node_samples, impurity, depth):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.asarray(children_right, dtype=np.intp)
        self.parent = np.asarray(parent, dtype=np.intp)
        self.splits = list(splits)
        self.value = np.asarray(value, dtype=float)
        if self.value.ndim == 1:
            self.value = self.value[:, None]
        self.n_node_samples = np.asarray(n_node_samples, dtype=np.intp)
        self.impurity = np.asarray(impurity, dtype=float)
        self.depth = np.asarray(depth, dtype=np.intp)

    # ------------------------------------------------------------------ shape
    @property
    def n_nodes(self) -> int:
        return int(self.children_left.size)

    @property
    def n_outputs(self) -> int:
        return int(self.value.shape[1])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.children_left == LEAF

    @property
    def n_leaves(self) -> int:
        return int(self.is_leaf.sum())

    @property
    def max_depth(self) -> int:
        return int(self.depth.max()) if self.n_nodes else 0

    def leaves(self) -> np.ndarray:
        """Ids of the leaves, in node order."""
        return np.flatnonzero(self.is_leaf)

    @property
    def feature(self) -> np.ndarray:
        """scikit-learn-style feature array: the first feature a node reads, ``-2`` at leaves."""
        return np.array([s.features[0] if s is not None and s.features else -2 for s in self.splits],
                        dtype=np.intp)

    @property
    def threshold(self) -> np.ndarray:
        """scikit-learn-style thresholds (``NaN`` for leaves and non-threshold splits)."""
        return np.array([s.threshold if isinstance(s, ThresholdSplit) else np.nan for s in self.splits])

    # ------------------------------------------------------------------ routing
    def _traverse(self, X: np.ndarray, stop_unseen: bool = False):
        """Yield ``(node, sample_indices)`` for every node a sample reaches (preorder). With
        ``stop_unseen``, the rows a split finds unseen (:meth:`Split.unseen_rows`) stop at its node."""
        stack = [(0, np.arange(X.shape[0]))]
        while stack:
            node, idx = stack.pop()
            if idx.size == 0:
                continue
            if self.children_left[node] == LEAF:
                yield node, idx, True
                continue
            split = self.splits[node]
            Xn = X[idx]
            here = split.unseen_rows(Xn) if stop_unseen else None
            if here is not None and here.any():
                yield node, idx, idx[here]
                idx, Xn = idx[~here], Xn[~here]
            else:
                yield node, idx, None
            right = np.asarray(split.route(Xn), dtype=bool)
            stack.append((self.children_right[node], idx[right]))
            stack.append((self.children_left[node], idx[~right]))

    def _packed_thresholds(self):
        """``(left, right, feature, threshold)`` when every internal node is a :class:`ThresholdSplit`
        (computed once per tree), else ``None``."""
        packed = self.__dict__.get("_packed")
        if packed is None:
            internal = self.children_left != LEAF
            if all(type(self.splits[i]) is ThresholdSplit for i in np.flatnonzero(internal)):
                feature = np.zeros(self.n_nodes, dtype=np.intp)
                threshold = np.zeros(self.n_nodes, dtype=np.float64)
                for i in np.flatnonzero(internal):
                    feature[i] = self.splits[i].feature
                    threshold[i] = self.splits[i].threshold
                ids = np.arange(self.n_nodes)
                ordered = bool(np.all(self.children_left[internal] > ids[internal])
                               and np.all(self.children_right[internal] > ids[internal]))
                packed = (np.ascontiguousarray(self.children_left), np.ascontiguousarray(self.children_right),
                          feature, threshold, ordered)
            else:
                packed = False
            self._packed = packed
        return packed or None

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_packed", None)
        return state

    def _compiled(self, X, stop_unseen: bool = False):
        packed = self._packed_thresholds() if self.n_nodes and not stop_unseen else None
        X = np.asarray(X)
        if packed is None or X.ndim != 2 or X.dtype.kind not in "biuf":
            return None, X
        return packed, X

    def apply(self, X, stop_unseen: bool = False) -> np.ndarray:
        """Leaf id reached by each row of ``X``; with ``stop_unseen``, the node where a split found the row's
        value unseen, for the rows that stop before a leaf (:meth:`Split.unseen_rows`)."""
        packed, X = self._compiled(X, stop_unseen)
        if packed is not None:
            return apply_thresholds(X, *packed[:4])
        out = np.full(X.shape[0], -1, dtype=np.intp)
        for node, idx, stops in self._traverse(X, stop_unseen):
            if stops is True:
                out[idx] = node
            elif stops is not None:
                out[stops] = node
        return out

    def predict(self, X, stop_unseen: bool = False) -> np.ndarray:
        """The ``value`` row of the node :meth:`apply` gives for each row of ``X``."""
        return self.value[self.apply(X, stop_unseen)]

    def decision_path(self, X, stop_unseen: bool = False) -> sp.csr_matrix:
        """Sparse indicator (n_samples x n_nodes) of the nodes each row passes through (up to the node where
        it stops, with ``stop_unseen``)."""
        packed, X = self._compiled(X, stop_unseen)
        if packed is not None:
            indptr, indices = threshold_paths(X, *packed[:4])
            m = sp.csr_matrix((np.ones(indices.size, dtype=np.int8), indices, indptr),
                              shape=(X.shape[0], self.n_nodes))
            if not packed[4]:
                m.sort_indices()
            return m
        rows, cols = [], []
        for node, idx, _ in self._traverse(X, stop_unseen):
            rows.append(idx)
            cols.append(np.full(idx.size, node, dtype=np.intp))
        r = np.concatenate(rows) if rows else np.zeros(0, np.intp)
        c = np.concatenate(cols) if cols else np.zeros(0, np.intp)
        m = sp.csr_matrix((np.ones(r.size, dtype=np.int8), (r, c)), shape=(X.shape[0], self.n_nodes))
        m.sort_indices()
        return m

    def path_to(self, node: int) -> list[tuple[int, bool]]:
        """The internal nodes from the root to ``node``, each with ``True`` when the path went right."""
        path = []
        child = int(node)
        while self.parent[child] != LEAF:
            par = int(self.parent[child])
            path.append((par, bool(self.children_right[par] == child)))
            child = par
        return path[::-1]

    def __repr__(self) -> str:
        return f"Tree(n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, max_depth={self.max_depth})"


class TreeBuilder:
    """Incremental construction of a :class:`Tree`.

    >>> b = TreeBuilder(n_outputs=1)
    >>> root = b.add_node([0.5], n_samples=10, impurity=0.25)
    >>> left = b.add_node([0.0], 5, 0.0, parent=root, is_right=False)
    >>> right = b.add_node([1.0], 5, 0.0, parent=root, is_right=True)
    >>> b.set_split(root, ThresholdSplit(0, 0.5))
    >>> b.build().n_leaves
    2
    """

    def __init__(self, n_outputs: int = 1):
        self.n_outputs = int(n_outputs)
        self._left: list[int] = []
        self._right: list[int] = []
        self._parent: list[int] = []
        self._splits: list[Split | None] = []
        self._value: list[np.ndarray] = []
        self._n: list[int] = []
        self._imp: list[float] = []
        self._depth: list[int] = []

    def add_node(self, value, n_samples: int, impurity: float, parent: int = LEAF, is_right: bool = False) -> int:
        """Append a node (a leaf until :meth:`set_split` is called) and link it to ``parent``."""
        node = len(self._left)
        v = np.asarray(value, dtype=float).ravel()
        if v.size != self.n_outputs:
            raise ValueError(f"value has {v.size} entries; the tree has {self.n_outputs} outputs")
        self._left.append(LEAF)
        self._right.append(LEAF)
        self._parent.append(int(parent))
        self._splits.append(None)
        self._value.append(v)
        self._n.append(int(n_samples))
        self._imp.append(float(impurity))
        if parent == LEAF:
            if node != 0:
                raise ValueError("only the first node may be a root")
            self._depth.append(0)
        else:
            self._depth.append(self._depth[parent] + 1)
            if is_right:
                self._right[parent] = node
            else:
                self._left[parent] = node
        return node

    def set_split(self, node: int, split: Split) -> None:
        """Make ``node`` internal with the given split."""
        if not isinstance(split, Split):
            raise TypeError(f"split must be a treebook.tree.Split; got {type(split).__name__}")
        self._splits[node] = split

    def build(self) -> Tree:
        """Check that every node with a split has both children and return the :class:`Tree`."""
        if not self._left:
            raise ValueError("the tree has no nodes")
        for i, s in enumerate(self._splits):
            has_children = self._left[i] != LEAF and self._right[i] != LEAF
            if (s is None) == has_children or (self._left[i] == LEAF) != (self._right[i] == LEAF):
                raise ValueError(f"node {i}: a split needs exactly two children, a leaf none")
        return Tree(self._left, self._right, self._parent, self._splits, np.vstack(self._value),
                    self._n, self._imp, self._depth)
