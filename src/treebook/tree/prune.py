"""Weakest-link (minimal cost-complexity) pruning of a :class:`~treebook.tree.Tree`.

Breiman, Friedman, Olshen & Stone (1984), *Classification and Regression Trees*, section 3.3. A node
``t`` kept as a leaf costs ``R(t)``; a subtree ``T`` costs ``R_alpha(T) = sum of R over its leaves +
alpha * |leaves(T)|``. For an internal node ``t`` with branch ``T_t``,

    g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)

is the ``alpha`` above which collapsing ``t`` into a leaf pays. Weakest-link pruning collapses the node
of smallest ``g`` (the weakest link), updates ``g`` of its ancestors and repeats until the root is a
leaf; the increasing ``alpha`` values met on the way index the nested minimal cost-complexity subtrees
(Breiman et al.'s ``T_1 > T_2 > ... > {root}``), and the subtree for a given ``alpha`` is the last one
whose ``alpha`` is ``<= alpha``.

What a node costs is the caller's: every function takes a per-node ``cost`` array (``R(t)``), by
default :func:`node_costs` -- scikit-learn's ``n_t / N * impurity(t)``, the node's share of the training
samples times its impurity (CART's weighted Gini, entropy or squared error; MMIT's node hinge loss,
whose ``impurity`` is the loss per sample).

Two book-keepings of the same sequence are provided (they coincide in exact arithmetic):

* ``method="sequential"`` (the default) is scikit-learn's ``ccp_alpha`` /
  ``cost_complexity_pruning_path`` rule (``sklearn/tree/_tree.pyx``, ``_cost_complexity_prune``): one
  branch is collapsed per step, the one of smallest ``g`` with ties going to the lowest node id; the
  branch sums of its ancestors are updated in place; pruning at ``ccp_alpha`` performs the steps while
  their effective ``alpha`` is ``<= ccp_alpha`` and stops at the first that exceeds it, and
  ``ccp_alpha = 0`` prunes nothing (not even splits that gain nothing). The path lists one entry per
  step, so ``alpha`` values repeat when several branches tie. With the same per-node costs and the
  same node numbering, the arithmetic is the same as scikit-learn's, operation for operation, so
  identical trees give bit-identical alphas (see :class:`treebook.tree.CARTClassifier`).
* ``method="grouped"`` is Breiman et al.'s statement: every branch whose ``g`` is within ``rtol`` of the
  minimum is collapsed in the same step, the branch sums are recomputed from the leaves at every step
  and the ``alpha`` sequence is forced to increase. This is the rule of chapter 2's MMIT protocol
  (:func:`treebook.interval.tree.pruning_alphas`).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
from numba import njit

from .structure import LEAF, Tree, TreeBuilder

__all__ = [
    "PRUNING_METHODS",
    "PruningPath",
    "check_ccp_alpha",
    "collapse_alphas",
    "node_costs",
    "prune_tree",
    "pruning_alphas",
    "pruning_path",
]

PRUNING_METHODS = ("sequential", "grouped")
_BIG = np.finfo(np.float64).max  # scikit-learn starts its search for the weakest link here


def check_ccp_alpha(alpha, name: str = "ccp_alpha", *, allow_inf: bool = False) -> float:
    """Return ``alpha`` as a float if it is a real number ``>= 0`` (and finite unless ``allow_inf``).

    Raises ``ValueError`` naming ``name`` otherwise (booleans, strings and NaN included).
    """
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, Real):
        raise ValueError(f"{name} must be a real number >= 0; got {alpha!r}")
    a = float(alpha)
    if np.isnan(a) or a < 0 or (np.isinf(a) and not allow_inf):
        what = "a number >= 0" if allow_inf else "finite and >= 0"
        raise ValueError(f"{name} must be {what}; got {alpha!r}")
    return a


def node_costs(tree: Tree) -> np.ndarray:
    """``R(t) = n_t * impurity(t) / N`` for every node (``N`` = training samples at the root).

    This is scikit-learn's node cost for minimal cost-complexity pruning (its weighted impurity
    ``weighted_n_node_samples[t] * impurity[t] / weighted_n_node_samples[0]``, computed in that order),
    so alphas are per training sample and comparable between trees grown on different data sets.
    """
    n = tree.n_node_samples.astype(np.float64)
    return n * tree.impurity / n[0]


def _check_costs(tree: Tree, cost) -> np.ndarray:
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a treebook.tree.Tree; got {type(tree).__name__}")
    R = node_costs(tree) if cost is None else np.asarray(cost, dtype=np.float64)
    if R.shape != (tree.n_nodes,):
        raise ValueError(f"cost must have one entry per node ({tree.n_nodes}); got shape {R.shape}")
    if not np.all(np.isfinite(R)):
        raise ValueError(f"cost must be finite; bad nodes: {np.flatnonzero(~np.isfinite(R))[:10].tolist()}")
    return np.ascontiguousarray(R)


def _check_method(method: str) -> str:
    if method not in PRUNING_METHODS:
        raise ValueError(f"method must be one of {PRUNING_METHODS}; got {method!r}")
    return method


def _arrays(tree: Tree):
    return (tree.children_left.astype(np.int64), tree.children_right.astype(np.int64),
            tree.parent.astype(np.int64))


# ----------------------------------------------------------------------------------------------
# scikit-learn's book-keeping: one branch per step


@njit(cache=True)
def _sequential_steps(left, right, parent, R):
    """Weakest-link steps, one branch per step (scikit-learn's order of operations).

    Returns ``(nodes, alphas, costs, step_of)``: step 0 is the full tree (node -1, alpha 0); step
    ``k >= 1`` collapses ``nodes[k]`` at effective alpha ``alphas[k]``, after which the leaves cost
    ``costs[k]`` in total; ``step_of[t]`` is the step at which internal node ``t`` stops being
    internal (as the collapsed branch's root or inside it), -1 at leaves.
    """
    nn = left.shape[0]
    r_branch = np.zeros(nn)
    n_leaves = np.zeros(nn, dtype=np.int64)
    # branch sums: every leaf, in node order, adds its cost to each of its ancestors
    for t in range(nn):
        if left[t] < 0:
            r_branch[t] = R[t]
            a = t
            while a != 0:
                a = parent[a]
                r_branch[a] += R[t]
                n_leaves[a] += 1
    candidate = left >= 0
    gone = np.zeros(nn, dtype=np.bool_)
    step_of = np.full(nn, -1, dtype=np.int64)
    n_internal = 0
    for t in range(nn):
        if candidate[t]:
            n_internal += 1
    nodes = np.full(n_internal + 1, -1, dtype=np.int64)
    alphas = np.zeros(n_internal + 1)
    costs = np.zeros(n_internal + 1)
    costs[0] = r_branch[0]
    stack = np.empty(nn, dtype=np.int64)
    k = 0
    while candidate[0]:
        best = _BIG
        node = -1
        for t in range(nn):
            if candidate[t]:
                g = (R[t] - r_branch[t]) / (n_leaves[t] - 1)
                if g < best:
                    best = g
                    node = t
        if node < 0:  # every g overflowed: collapse the first candidate
            for t in range(nn):
                if candidate[t]:
                    node = t
                    break
        k += 1
        # the branch's internal nodes stop being internal; nodes below it leave the tree
        top = 0
        stack[0] = node
        while top >= 0:
            t = stack[top]
            top -= 1
            if gone[t]:
                continue
            if candidate[t]:
                step_of[t] = k
                candidate[t] = False
            if t != node:
                gone[t] = True
            if left[t] >= 0:
                top += 1
                stack[top] = left[t]
                top += 1
                stack[top] = right[t]
        n_pruned = n_leaves[node] - 1
        n_leaves[node] = 0
        r_diff = R[node] - r_branch[node]
        r_branch[node] = R[node]
        a = parent[node]
        while a != LEAF:
            n_leaves[a] -= n_pruned
            r_branch[a] += r_diff
            a = parent[a]
        nodes[k] = node
        alphas[k] = best
        costs[k] = r_branch[0]
    return nodes[:k + 1], alphas[:k + 1], costs[:k + 1], step_of


# ----------------------------------------------------------------------------------------------
# Breiman et al.'s book-keeping: all weakest links of a step together


@njit(cache=True)
def _grouped_collapse(left, right, parent, R, rtol):
    """For each internal node, the alpha at which grouped weakest-link pruning stops it being internal.

    At every step the branch sums are recomputed from the leaves, every node whose ``g`` is within
    ``rtol * (1 + |g_min|)`` of the minimum becomes a leaf, and internal nodes below them leave the tree
    at the same alpha; alphas never decrease. Leaves get -1. Nodes must be numbered so that children
    follow their parents (true of every tree built top-down).
    """
    nn = left.shape[0]
    out = np.full(nn, -1.0)
    leaf = left < 0
    removed = np.zeros(nn, dtype=np.bool_)
    rsub = np.empty(nn)
    nleaf = np.empty(nn)
    alpha = 0.0
    while not leaf[0]:
        for t in range(nn - 1, -1, -1):
            if removed[t]:
                continue
            if leaf[t]:
                rsub[t] = R[t]
                nleaf[t] = 1.0
            else:
                rsub[t] = rsub[left[t]] + rsub[right[t]]
                nleaf[t] = nleaf[left[t]] + nleaf[right[t]]
        gmin = np.inf
        for t in range(nn):
            if not removed[t] and not leaf[t]:
                g = (R[t] - rsub[t]) / (nleaf[t] - 1.0)
                if g < gmin:
                    gmin = g
        if gmin > alpha:
            alpha = gmin
        thr = gmin + rtol * (1.0 + abs(gmin))
        for t in range(nn):
            if not removed[t] and not leaf[t]:
                g = (R[t] - rsub[t]) / (nleaf[t] - 1.0)
                if g <= thr:
                    leaf[t] = True
                    out[t] = alpha
        # the descendants of the new leaves leave the tree; internal ones stop being internal now
        for t in range(1, nn):
            par = parent[t]
            if removed[par] or leaf[par]:
                if not removed[t] and not leaf[t]:
                    out[t] = alpha
                removed[t] = True
    return out


# ----------------------------------------------------------------------------------------------
# public functions


@dataclass(frozen=True)
class PruningPath:
    """The weakest-link pruning path of a tree (scikit-learn's ``cost_complexity_pruning_path``).

    Attributes
    ----------
    ccp_alphas : ndarray
        ``0`` then the effective alpha of every step.
    impurities : ndarray
        Total cost of the leaves of the subtree after each step (``ccp_alphas[k]``'s subtree): with
        :func:`node_costs`, scikit-learn's "sum of the impurities of the subtree leaves".
    nodes : ndarray of int
        The node collapsed at each step (``-1`` for step 0, the full tree).
    """

    ccp_alphas: np.ndarray
    impurities: np.ndarray
    nodes: np.ndarray


def pruning_path(tree: Tree, cost=None) -> PruningPath:
    """scikit-learn's minimal cost-complexity pruning path of ``tree`` (one entry per collapsed branch).

    ``cost`` is the per-node cost ``R(t)`` (default :func:`node_costs`). The path of a tree grown like
    scikit-learn's, with scikit-learn's costs, equals ``DecisionTree*.cost_complexity_pruning_path``.
    """
    R = _check_costs(tree, cost)
    nodes, alphas, costs, _ = _sequential_steps(*_arrays(tree), R)
    return PruningPath(ccp_alphas=alphas, impurities=costs, nodes=nodes)


def collapse_alphas(tree: Tree, cost=None, *, method: str = "sequential", rtol: float = 1e-12) -> np.ndarray:
    """For every internal node, the alpha from which it is no longer internal in the pruned tree.

    ``prune_tree(tree, alpha)`` keeps an internal node a split exactly when its collapse alpha is
    ``> alpha`` (and its ancestors are kept). Leaves get ``-1``.

    With ``method="sequential"`` (scikit-learn's rule) a node's value is the largest effective alpha
    of the steps up to the one that collapsed it, so that a threshold reproduces scikit-learn's "stop at
    the first step whose alpha exceeds ``ccp_alpha``" even where rounding makes the effective alphas
    dip. With ``method="grouped"`` (Breiman et al.'s statement) near-ties within ``rtol`` are one step.
    """
    R = _check_costs(tree, cost)
    if _check_method(method) == "grouped":
        return _grouped_collapse(*_arrays(tree), R, float(rtol))
    _, alphas, _, step_of = _sequential_steps(*_arrays(tree), R)
    running = np.maximum.accumulate(np.concatenate([[-np.inf], alphas[1:]]))
    return np.where(step_of >= 0, running[np.maximum(step_of, 0)], -1.0)


def pruning_alphas(tree: Tree, cost=None, *, method: str = "sequential", rtol: float = 1e-12,
                   collapse=None) -> np.ndarray:
    """Breiman et al.'s increasing sequence ``0 = alpha_0 < alpha_1 < ...``: the distinct alphas at which
    the pruned tree changes (the last one leaves the root alone). ``collapse`` (from
    :func:`collapse_alphas`) saves recomputing it."""
    if collapse is None:
        collapse = collapse_alphas(tree, cost, method=method, rtol=rtol)
    collapse = np.asarray(collapse, dtype=np.float64)
    return np.unique(np.concatenate([[0.0], collapse[~tree.is_leaf]]))


def prune_tree(tree: Tree, alpha: float, cost=None, *, collapse=None, method: str = "sequential",
               rtol: float = 1e-12) -> Tree:
    """The minimal cost-complexity subtree of ``tree`` for ``alpha`` (Breiman et al. 1984, chapter 3).

    Internal nodes whose collapse alpha (:func:`collapse_alphas`, or ``collapse`` when given) is
    ``<= alpha`` become leaves and what lies below them is dropped; the remaining nodes keep their
    values, sample counts and impurities and are renumbered depth first, left before right, as
    scikit-learn numbers its pruned trees. ``alpha = 0`` returns ``tree`` itself, unpruned (as
    scikit-learn's ``ccp_alpha=0``); ``alpha = inf`` leaves the root alone.
    """
    alpha = check_ccp_alpha(alpha, "alpha", allow_inf=True)
    if alpha == 0.0:
        return tree
    if collapse is None:
        collapse = collapse_alphas(tree, cost, method=method, rtol=rtol)
    collapse = np.asarray(collapse, dtype=np.float64)
    if collapse.shape != (tree.n_nodes,):
        raise ValueError(f"collapse must have one entry per node ({tree.n_nodes}); got shape {collapse.shape}")
    b = TreeBuilder(n_outputs=tree.n_outputs)
    stack = [(0, LEAF, False)]
    while stack:
        old, par, is_right = stack.pop()
        new = b.add_node(tree.value[old], tree.n_node_samples[old], tree.impurity[old], parent=par,
                         is_right=is_right)
        if tree.children_left[old] != LEAF and collapse[old] > alpha:
            b.set_split(new, tree.splits[old])
            stack.append((tree.children_right[old], new, True))
            stack.append((tree.children_left[old], new, False))
    return b.build()
