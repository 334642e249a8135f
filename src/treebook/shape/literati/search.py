"""The AO* search over the incremental AND/OR graph (Algorithm 1 of the paper): the loop, the bounds and the
incumbent; the two kinds of state are handled by the mixins of :mod:`.data_nodes` (OR: a subset of the
samples) and :mod:`.shape_nodes` (AND: a shape function and the two subsets it routes to).

Each iteration descends from the root along the OR choices (least ``V~``, ties by least lower bound) and
the AND choices (round-robin between the unsolved children of a commit), expands the frontier state it
reaches, and backs the bounds up along the path.  The search stops when the root is solved (proved
optimal), at an expansion budget, at a time limit or on ``KeyboardInterrupt``; the incumbent is always a
valid tree.
"""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np

from ..candidates import (
    cart_candidates,
    greedy_lookahead_loss,
)
from .data_nodes import DataNodes, _gini_weighted
from .queue import EPS, INF
from .shape_nodes import ShapeNodes
from .states import DataState, ShapeState

__all__ = ["AND_RULES", "DEFAULT_CART_LEAVES", "HEURISTICS", "LiteratiSearch"]

#: default ``B_d`` (leaves of the local CART proposing candidates), from the root downwards
DEFAULT_CART_LEAVES = (32, 16, 8, 8, 4, 4, 4)
#: secondary estimates ``V~`` of the OR choice (the paper's ablation); ``"cart"`` is Literati
HEURISTICS = ("cart", "admissible", "impurity", "primal")
#: AND choices: Literati's round-robin, the child of larger upper bound (``worst_primal``, as Branches) or
#: of larger ``V~`` (``worst_informative``)
AND_RULES = ("round_robin", "worst_primal", "worst_informative")
#: actions a depth-3 state of the similarity search materialises at a time (``batch`` for the others)
BATCH_DEPTH3 = 128


class LiteratiSearch(DataNodes, ShapeNodes):
    """The AO* search on one data set (``y`` = class codes ``0..C-1``); see :mod:`treebook.shape.literati`.

    Call :meth:`run`; afterwards :attr:`root` holds the bounds and :meth:`tree_spec` the best tree.
    ``batch`` is the number of pending actions a state materialises at a time (a depth-3 state of the
    similarity search, whose actions' children are depth-2 states solved on creation, takes
    :data:`BATCH_DEPTH3`).

    A diagnostic: ``root_action=(feature, threshold)`` lets the root open only shape functions of ``feature``
    whose first breakpoint is ``threshold`` (one of the root's candidates), so the search finds the best tree
    under that root split; it needs the search without similarity bounds. :attr:`root_choices` counts, per
    root action ``(feature, first threshold)`` in the order first taken, the iterations that went down it, and
    :attr:`root_first_taken` gives the states expanded (as the trace counts them) when each was first taken.
    """

    def __init__(self, X, y, n_classes, *, max_depth=3, max_breakpoints=3, lam=0.0, alpha=0.0,
                 candidates="cart", cart_leaves=DEFAULT_CART_LEAVES, heuristic="cart", and_rule="round_robin",
                 exact_depth1=True, similarity=True, cache_size=10_000, batch=8, random_state=0, root_action=None):
        if heuristic not in HEURISTICS:
            raise ValueError(f"heuristic must be one of {HEURISTICS}; got {heuristic!r}")
        if and_rule not in AND_RULES:
            raise ValueError(f"and_rule must be one of {AND_RULES}; got {and_rule!r}")
        if candidates not in ("cart", "all"):
            raise ValueError(f"candidates must be 'cart' or 'all'; got {candidates!r}")
        self.X = np.ascontiguousarray(X, dtype=float)
        self.y = np.asarray(y, dtype=np.int64)
        self.n_classes = int(n_classes)
        self.max_depth = int(max_depth)
        self.max_breakpoints = int(max_breakpoints)
        self.lam = float(lam)
        self.alpha = float(alpha)
        self.split_cost = self.lam + self.alpha
        self.candidates = candidates
        self.cart_leaves = tuple(int(b) for b in cart_leaves)
        self.heuristic = heuristic
        self.and_rule = and_rule
        self.exact_depth1 = bool(exact_depth1)
        # K = 1 over every midpoint: depth-2 states solved exactly, similarity bounds between thresholds
        self.similarity = bool(similarity) and self.max_breakpoints == 1 and candidates == "all"
        self.cache_size = int(cache_size)
        self.batch = int(batch)
        self.batch_depth3 = BATCH_DEPTH3
        self.random_state = int(random_state)
        if root_action is not None:
            if self.similarity:
                raise ValueError("root_action needs the search without similarity bounds (similarity=False, "
                                 "or max_breakpoints > 1, or candidates='cart')")
            j, thr = root_action
            if not (0 <= int(j) < self.X.shape[1]) or not np.isfinite(thr):
                raise ValueError(f"root_action must be (feature index, finite threshold); got {root_action!r}")
            root_action = (int(j), float(thr))
            if self.max_depth < 2 and self.exact_depth1:
                raise ValueError("root_action needs max_depth >= 2 (a depth-1 root is solved on creation by the "
                                 "exact programme; or exact_depth1=False)")
        self.root_action = root_action
        self.root_choices: dict = {}
        self.root_first_taken: dict = {}
        self._expansion_offset = 0
        self.cache: OrderedDict = OrderedDict()
        # the results of the exact depth-2 solver, (value, tree) per sample set: far smaller than a state, so
        # DEPTH2_CACHE_FACTOR times as many are kept (a sample set recurs when two splits are taken in either order)
        self.depth2_cache: OrderedDict = OrderedDict()
        self.n_expanded = 0
        self.n_created = 0
        self.cache_hits = 0
        self.trace: list[tuple[float, float, float, int]] = []
        self.root = None
        self.interrupted = False
        self.elapsed = 0.0

    # ----------------------------------------------------------------- helpers
    def _candidates(self, samples, level):
        """Per feature: (sorted candidate breakpoints, piece index of every sample of the state)."""
        Xs = self.X[samples]
        out = []
        if self.candidates == "all":
            for j in range(Xs.shape[1]):
                u, inv = np.unique(Xs[:, j], return_inverse=True)
                out.append(((u[:-1] + u[1:]) * 0.5, inv.astype(np.int32)))
            return out
        b = self.cart_leaves[min(level, len(self.cart_leaves) - 1)]
        for j, t in enumerate(cart_candidates(Xs, self.y[samples], b, random_state=self.random_state)):
            out.append((t, np.searchsorted(t, Xs[:, j], side="left").astype(np.int32)))
        return out

    def _child_bound(self, err, child_depth):
        """Admissible value of a child data state with errors ``err`` and remaining depth ``child_depth``."""
        if child_depth == 0:
            return err
        return np.minimum(err, self.split_cost)

    def _clamp(self, estimate, lower, upper):
        """``V~`` kept within a state's bounds. The weighted Gini impurity is never below the errors (for every
        class distribution ``1 - sum p^2 >= 1 - max p``), so clamped to the upper bound (the errors of the
        state's best tree so far) it would rank the actions as the primal bound does: it is kept above the
        lower bound only."""
        if self.heuristic == "impurity":
            return max(estimate, lower)
        return min(max(estimate, lower), upper)

    def _estimate(self, samples, depth, counts=None):
        """Secondary heuristic V~ of a data state (lookahead CART, impurity, primal or admissible)."""
        if counts is None:
            counts = np.bincount(self.y[samples], minlength=self.n_classes)
        err = float(samples.size - counts.max())
        h = self.heuristic
        if depth == 0 or err <= self.split_cost + EPS:
            return err
        if h == "impurity":
            return float(_gini_weighted(counts))
        if h == "primal":
            return err
        if h == "admissible":
            return min(err, self.split_cost)
        return min(err, greedy_lookahead_loss(self.X[samples], self.y[samples], self.n_classes, depth,
                                              self.split_cost))

    @staticmethod
    def _key(samples, depth):
        return (depth, samples.size, hash(samples.tobytes()))

    # ----------------------------------------------------------------- state creation
    def _remember(self, node):
        """Keep a solved state in the LRU value cache (the ``cache_size`` most recent)."""
        if node.key is None or self.cache_size <= 0:
            return
        self.cache[node.key] = node
        self.cache.move_to_end(node.key)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    # ----------------------------------------------------------------- expansion
    # ----------------------------------------------------------------- selection
    # ----------------------------------------------------------------- backpropagation
    # ----------------------------------------------------------------- main loop
    def run(self, time_limit=60.0, progress=False, max_expansions=None, seed_tree=None, time_offset=0.0,
            expansion_offset=0):
        """Run AO* until the root is solved (proved optimal), a budget is spent or an interrupt.

        ``time_limit`` (seconds, ``None``: none) and ``max_expansions`` (states expanded, ``None``: none)
        are the budgets; with ``time_limit=None`` the search is deterministic.  ``seed_tree`` (a
        :meth:`tree_spec` of a search over the same candidates, e.g. with ``K = 1``) is inserted into the
        graph first, so the incumbent starts at least as good as that tree; its expansions count.
        ``time_offset`` / ``expansion_offset`` are added to the recorded times / expansions (what a warm
        start already spent).
        """
        t0 = time.perf_counter() - time_offset
        self._expansion_offset = int(expansion_offset)
        limit = INF if time_limit is None else float(time_limit)
        n = self.X.shape[0]
        self.root = root = self._make_data(np.arange(n), self.max_depth, 0)
        self.interrupted = False
        if seed_tree is not None and not root.solved:
            try:
                self._seed(root, seed_tree)
            except KeyboardInterrupt:
                self.interrupted = True

        def mark():
            self.trace.append((time.perf_counter() - t0, root.upper, root.lower, expansion_offset + self.n_expanded))

        self.trace = []
        mark()
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(desc="Literati", unit="exp", total=max_expansions)
        last = (root.upper, root.lower)
        try:
            while not root.solved and not self.interrupted:
                if time.perf_counter() - t0 > limit:
                    break
                if max_expansions is not None and self.n_expanded >= max_expansions:
                    break
                self._iterate(root)
                if (root.upper, root.lower) != last:
                    last = (root.upper, root.lower)
                    mark()
                if bar is not None and self.n_expanded % 50 == 0:
                    bar.n = self.n_expanded
                    gap = root.upper - root.lower
                    bar.set_postfix_str(f"UB={root.upper:.2f} LB={root.lower:.2f} gap={gap:.2f}", refresh=True)
        except KeyboardInterrupt:
            self.interrupted = True
        finally:
            if bar is not None:
                bar.close()
        self.elapsed = time.perf_counter() - t0
        mark()
        return self

    def _iterate(self, root):
        """One AO* iteration: descend along the choices, expand the frontier state, back the bounds up."""
        path = []
        node = root
        while True:
            path.append(node)
            if isinstance(node, DataState):
                if not node.expanded:
                    self._expand_data(node)
                    break
                nxt = self._select_data(node)
            else:
                if not node.expanded:
                    self._expand_shape(node)
                    break
                nxt = self._select_shape(node)
            if nxt is None:
                break
            if node is root:
                key = (nxt.feature, float(nxt.thresholds[0]))
                if key not in self.root_choices:
                    self.root_first_taken[key] = self._expansion_offset + self.n_expanded
                self.root_choices[key] = self.root_choices.get(key, 0) + 1
            node = nxt
        for nd in reversed(path):
            if isinstance(nd, DataState):
                self._update_data(nd)
            else:
                self._update_shape(nd)

    def _seed(self, node, spec):
        """Insert the path of a known tree (threshold or shape) into the graph and back up its bounds."""
        if spec[0] == "leaf" or node.solved:
            return
        _, j, thr, _, left, right = spec
        if node is self.root and self.root_action is not None and self.root_action != (j, float(thr[0])):
            return  # the root is restricted to another split
        if not node.expanded:
            self._expand_data(node)
        t = node.candidates[j]
        ii = np.searchsorted(t, thr)
        if (np.any(ii >= t.size) or not np.array_equal(t[np.minimum(ii, t.size - 1)], thr)
                or len(thr) > self.max_breakpoints):
            return  # not in this search space (different candidates)
        bps = tuple(int(i) for i in ii)
        a = next((a for a in node.actions if a.feature == j and a.breakpoints[: len(bps)] == bps[: len(a.breakpoints)]
                  and len(a.breakpoints) <= len(bps)), None)
        if a is None or a.breakpoints[0] != bps[0]:
            cnt = node.counts[j]
            left_c = cnt[: bps[0] + 1].sum(axis=0)
            a = self._make_shape(node, j, bps[:1], left_c, cnt.sum(axis=0) - left_c)
            node.actions.append(a)
            if self.similarity:
                node.queue.mark_done(j, bps[0])
        chain = [a]
        while len(a.breakpoints) < len(bps) and not a.solved:
            if not a.expanded:
                self._expand_shape(a)
            nxt = next((r for r in a.refinements if r.breakpoints == bps[: len(a.breakpoints) + 1]), None)
            if nxt is None:
                k = len(a.breakpoints)
                sub = node.counts[j][bps[k] + 1:].sum(axis=0)
                if k % 2 == 0:
                    L2, R2 = a.counts_left - sub, a.counts_right + sub
                else:
                    L2, R2 = a.counts_left + sub, a.counts_right - sub
                nxt = self._make_shape(node, j, bps[: k + 1], L2, R2)
                a.refinements.append(nxt)
            a = nxt
            chain.append(a)
        if not a.solved:
            if not a.expanded:
                self._expand_shape(a)
            self._seed(a.left, left)
            self._seed(a.right, right)
        for s in reversed(chain):
            self._update_shape(s)
        self._update_data(node)

    # ----------------------------------------------------------------- the incumbent tree
    def tree_spec(self):
        """Best tree found: nested tuples ``("leaf", idx)`` / ``("split", j, breakpoints, idx, left, right)``."""
        return self._spec(self.root, self.root.samples)

    def _spec(self, node, samples):
        if node.best is None:
            return ("leaf", samples)
        s = node.best
        while isinstance(s.best, ShapeState):
            s = s.best
        pos = np.searchsorted(s.thresholds, self.X[samples, s.feature], side="left")
        right = (pos % 2) == 1
        if s.left is None and s.child_splits is not None:
            s.left, s.right = (self._depth1_leaf_pair(sub, s.owner.level + 1, split)
                               for sub, split in ((samples[~right], s.child_splits[0]),
                                                  (samples[right], s.child_splits[1])))
        if s.left is None or s.right is None:
            return ("split", s.feature, s.thresholds, samples, ("leaf", samples[~right]), ("leaf", samples[right]))
        return ("split", s.feature, s.thresholds, samples, self._spec(s.left, samples[~right]),
                self._spec(s.right, samples[right]))
