"""Tree specs: the nested-tuple trees the search returns, the greedy CART tree as one, and conversions.

A spec is ``("leaf", samples)`` or ``("split", feature, breakpoints, samples, left, right)``; the pieces of
a split's shape function alternate sides, the first going left.
"""

from __future__ import annotations

import numpy as np

from ...tree import ShapeSplit, TreeBuilder
from ...tree.cart import CARTClassifier

__all__ = ["cart_spec", "spec_objective", "spec_to_tree"]


def cart_spec(X, y, max_depth):
    """The greedy CART tree (Gini, depth <= ``max_depth``) as a tree spec for :meth:`~treebook.shape.literati.LiteratiSearch.run`.

    Its thresholds are midpoints between consecutive distinct values of each node's samples, so it lies in
    the ``K = 1`` space over every midpoint: inserted as the first incumbent, it makes an all-thresholds
    search at least as good as CART from its first step.
    """
    t = CARTClassifier(max_depth=max_depth).fit(X, y).tree_

    def walk(k):
        s = t.splits[k]
        if s is None:
            return ("leaf", None)
        return ("split", s.feature, np.array([s.threshold]), None, walk(t.children_left[k]),
                walk(t.children_right[k]))

    return walk(0)


def spec_objective(spec, y, n_classes, lam, alpha):
    """Regularised objective of a tree spec on its training labels (recomputed from scratch)."""
    if spec[0] == "leaf":
        c = np.bincount(y[spec[1]], minlength=n_classes)
        return float(spec[1].size - c.max())
    _, _, thr, _, left, right = spec
    return lam + alpha * len(thr) + spec_objective(left, y, n_classes, lam, alpha) + \
        spec_objective(right, y, n_classes, lam, alpha)


def spec_to_tree(spec, y, n_classes):
    """Build a :class:`~treebook.tree.Tree` (class fractions as values) from a tree spec."""
    b = TreeBuilder(n_classes)

    def add(sp, parent, is_right):
        idx = sp[1] if sp[0] == "leaf" else sp[3]
        c = np.bincount(y[idx], minlength=n_classes).astype(float)
        n = idx.size
        frac = c / n if n else np.full(n_classes, 1.0 / n_classes)
        imp = 1.0 - float((frac ** 2).sum()) if n else 0.0
        node = b.add_node(frac, n, imp, parent=parent, is_right=is_right)
        if sp[0] == "split":
            _, j, thr, _, left, right = sp
            sides = (np.arange(len(thr) + 1) % 2) == 1
            b.set_split(node, ShapeSplit(j, thr, sides))
            add(left, node, False)
            add(right, node, True)
        return node

    add(spec, -1, False)
    return b.build()
