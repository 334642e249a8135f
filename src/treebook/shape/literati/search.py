"""The AO* search over the incremental AND/OR graph (Algorithm 1 of the paper).

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

from ...tree.criteria import weighted_impurity
from ..candidates import (
    best_depth1_all,
    best_depth1_presorted,
    best_shape_1d,
    cart_candidates,
    errors_of_counts,
    greedy_lookahead_loss,
)
from ..depth2 import best_depth2_all, sub_orders
from .queue import EPS, INF, ActionQueue, SimilarityQueue
from .states import DataState, ShapeState

__all__ = ["AND_RULES", "DEFAULT_CART_LEAVES", "HEURISTICS", "LiteratiSearch"]

#: default ``B_d`` (leaves of the local CART proposing candidates), from the root downwards
DEFAULT_CART_LEAVES = (32, 16, 8, 8, 4, 4, 4)
#: secondary estimates ``V~`` of the OR choice (the paper's ablation); ``"cart"`` is Literati
HEURISTICS = ("cart", "admissible", "impurity", "primal")
#: AND choices: Literati's round-robin, the child of larger upper bound (``worst_primal``, as Branches) or
#: of larger ``V~`` (``worst_informative``)
AND_RULES = ("round_robin", "worst_primal", "worst_informative")
#: the depth-2 solver's results kept per state of the value cache (``cache_size``): a result is a value and a
#: small tuple, a state holds arrays
DEPTH2_CACHE_FACTOR = 20
#: actions a depth-3 state of the similarity search materialises at a time (``batch`` for the others)
BATCH_DEPTH3 = 128


def _gini_weighted(counts: np.ndarray) -> np.ndarray:
    """n * gini(counts / n), over leading axes (0 for empty rows): the tree core's weighted impurity."""
    return weighted_impurity(counts, "gini")


class LiteratiSearch:
    """The AO* search on one data set (``y`` = class codes ``0..C-1``); see :mod:`treebook.shape.literati`.

    Call :meth:`run`; afterwards :attr:`root` holds the bounds and :meth:`tree_spec` the best tree.
    ``batch`` is the number of pending actions a state materialises at a time (a depth-3 state of the
    similarity search, whose actions' children are depth-2 states solved on creation, takes
    :data:`BATCH_DEPTH3`).
    """

    def __init__(self, X, y, n_classes, *, max_depth=3, max_breakpoints=3, lam=0.0, alpha=0.0,
                 candidates="cart", cart_leaves=DEFAULT_CART_LEAVES, heuristic="cart", and_rule="round_robin",
                 exact_depth1=True, similarity=True, cache_size=10_000, batch=8, random_state=0):
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

    def _presorted(self, node):
        if node.presorted is None:
            Xo = np.ascontiguousarray(self.X[node.samples])
            node.presorted = (Xo, np.ascontiguousarray(self.y[node.samples]),
                              np.ascontiguousarray(np.argsort(Xo, axis=0, kind="stable").T))
        return node.presorted

    # ----------------------------------------------------------------- state creation
    def _make_data(self, samples, depth, level, estimate=None, presorted=None):
        self.n_created += 1
        counts = np.bincount(self.y[samples], minlength=self.n_classes)
        err = float(samples.size - counts.max())
        node = DataState(samples, depth, level, err, int(np.argmax(counts)))
        if depth == 0 or samples.size < 2 or err <= self.split_cost + EPS:
            # depth exhausted, or Corollary 1: Err(D_s) <= lam + alpha closes the state as a leaf
            node.lower = node.upper = node.estimate = err
            node.solved = True
            return node
        key = self._key(samples, depth)
        hit = self.cache.get(key)
        if hit is not None:
            self.cache.move_to_end(key)
            self.cache_hits += 1
            return hit
        node.key = key
        if depth == 1 and self.exact_depth1:
            self._solve_depth1(node, presorted)
            self._remember(node)
            return node
        if depth == 2 and self.similarity:
            self._solve_depth2(node, presorted)
            self._remember(node)
            return node
        node.lower = min(err, self.split_cost)
        node.upper = err
        node.estimate = self._estimate(samples, depth, counts) if estimate is None else estimate
        node.estimate = self._clamp(node.estimate, node.lower, node.upper)
        return node

    def _solve_depth1(self, node, presorted=None):
        samples = node.samples
        K = self.max_breakpoints
        if self.candidates == "all":
            if presorted is None:
                v, j, thr = best_depth1_all(self.X[samples], self.y[samples], self.n_classes, K, self.alpha)
            else:
                Xo, yo, orders, keep = presorted
                v, j, thr = best_depth1_presorted(Xo, yo, orders, keep, self.n_classes, K, self.alpha)
            v += self.lam
            node.solved = node.expanded = True
            if v < node.leaf_error - EPS:
                node.lower = node.upper = node.estimate = v
                node.best = ShapeState(node, j, tuple(range(thr.size)), thr, None, None)
                node.best.solved = True
            else:
                node.lower = node.upper = node.estimate = node.leaf_error
            return
        best, best_j, best_mask, best_t = node.leaf_error, -1, None, None
        for j, (t, pieces) in enumerate(self._candidates(samples, node.level)):
            if t.size == 0:
                continue
            cnt = np.bincount(pieces * self.n_classes + self.y[samples],
                              minlength=(t.size + 1) * self.n_classes).reshape(-1, self.n_classes)
            v, mask = best_shape_1d(cnt, K, self.alpha)
            v += self.lam
            if v < best - EPS:
                best, best_j, best_mask, best_t = v, j, mask, t
        node.lower = node.upper = node.estimate = best
        node.solved = True
        node.expanded = True
        if best_j >= 0:
            bps = tuple(int(i) for i in np.flatnonzero(best_mask))
            node.best = ShapeState(node, best_j, bps, best_t[best_mask].copy(), None, None)
            node.best.solved = True

    def _solve_depth2(self, node, presorted=None):
        """Exact depth-2 threshold tree (:func:`~treebook.shape.depth2.best_depth2_all`)."""
        v, tree = self._depth2_result(node, presorted)
        node.lower = node.upper = node.estimate = min(v, node.leaf_error)
        node.solved = node.expanded = True
        if tree is None or v >= node.leaf_error - EPS:
            return
        j, thr, left, right = tree
        s = ShapeState(node, j, (0,), np.array([thr]), None, None)
        s.solved = True
        s.child_splits = (left, right)  # the children's states are built when the tree is read
        node.best = s

    def _depth2_result(self, node, presorted=None):
        """``(value, tree)`` of :func:`best_depth2_all` on ``node``'s samples, from the depth-2 cache (the
        ``DEPTH2_CACHE_FACTOR * cache_size`` most recent results) or solved."""
        hit = self.depth2_cache.get(node.key)
        if hit is not None:
            self.depth2_cache.move_to_end(node.key)
            return hit
        samples = node.samples
        if presorted is None:
            Xs, ys, orders = self.X[samples], self.y[samples], None
        else:
            Xo, yo, order_o, keep = presorted
            Xs, ys, orders = Xo[keep], yo[keep], sub_orders(order_o, keep)
        v, tree, _ = best_depth2_all(Xs, ys, self.n_classes, self.split_cost, orders)
        if self.cache_size > 0:
            self.depth2_cache[node.key] = (v, tree)
            if len(self.depth2_cache) > DEPTH2_CACHE_FACTOR * self.cache_size:
                self.depth2_cache.popitem(last=False)
        return v, tree

    def _depth1_leaf_pair(self, samples, level, split):
        """A solved depth-1 state: a leaf (``split is None``) or the threshold split ``(feature, threshold)``."""
        c = np.bincount(self.y[samples], minlength=self.n_classes)
        child = DataState(samples, 1, level, float(samples.size - c.max()), int(np.argmax(c)))
        child.solved = child.expanded = True
        value = child.leaf_error
        if split is not None:
            j, thr = split
            cs = ShapeState(child, j, (0,), np.array([thr]), None, None)
            cs.solved = True
            child.best = cs
            goes_right = self.X[samples, j] > thr
            value = self.split_cost + sum(
                float(part.size - np.bincount(self.y[part], minlength=self.n_classes).max())
                for part in (samples[~goes_right], samples[goes_right]))
        child.lower = child.upper = child.estimate = value
        return child

    def _remember(self, node):
        """Keep a solved state in the LRU value cache (the ``cache_size`` most recent)."""
        if node.key is None or self.cache_size <= 0:
            return
        self.cache[node.key] = node
        self.cache.move_to_end(node.key)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    def _make_shape(self, owner, j, bps, counts_left, counts_right):
        self.n_created += 1
        t = owner.candidates[j]
        s = ShapeState(owner, j, bps, t[list(bps)], counts_left, counts_right)
        child_depth = owner.depth - 1
        eL, eR = float(errors_of_counts(counts_left)), float(errors_of_counts(counts_right))
        refinable = len(bps) < self.max_breakpoints and bps[-1] < t.size - 1
        s.lower = min(self.alpha if refinable else INF,
                      self._child_bound(eL, child_depth) + self._child_bound(eR, child_depth))
        s.upper = eL + eR
        if child_depth == 0 or (child_depth == 1 and self.exact_depth1) or (child_depth == 2 and self.similarity):
            # the children are solved on creation (leaves, or the exact depth-1 programme): evaluate the
            # commit now, which makes the bounds of this shape state exact up to its refinements
            right = self._right_mask(owner, j, bps)
            samples = owner.samples
            pL = pR = None
            if (child_depth == 1 and self.candidates == "all") or (child_depth == 2 and self.similarity):
                sorted_ = self._presorted(owner)
                pL, pR = sorted_ + (~right,), sorted_ + (right,)
            s.left = self._make_data(samples[~right], child_depth, owner.level + 1, presorted=pL)
            s.right = self._make_data(samples[right], child_depth, owner.level + 1, presorted=pR)
            s.estimate_left, s.estimate_right = s.left.upper, s.right.upper
            s.upper = s.left.upper + s.right.upper
            s.lower = min(self.alpha if refinable else INF, s.upper)
            s.estimate = s.upper
            if s.lower >= s.upper - EPS:
                s.solved = True
            return s
        if self.heuristic == "cart" and child_depth > 0:
            right = self._right_mask(owner, j, bps)
            samples = owner.samples
            s.estimate_left = self._estimate(samples[~right], child_depth, counts_left)
            s.estimate_right = self._estimate(samples[right], child_depth, counts_right)
        elif self.heuristic == "impurity" and child_depth > 0:
            s.estimate_left = float(_gini_weighted(counts_left))
            s.estimate_right = float(_gini_weighted(counts_right))
        elif self.heuristic == "admissible":
            s.estimate_left = self._child_bound(eL, child_depth)
            s.estimate_right = self._child_bound(eR, child_depth)
        else:
            s.estimate_left, s.estimate_right = eL, eR
        s.estimate = self._clamp(s.estimate_left + s.estimate_right, s.lower, s.upper)
        return s

    @staticmethod
    def _right_mask(owner, j, bps):
        """Samples of ``owner`` on the right of the shape function with breakpoints ``bps`` of feature ``j``."""
        return (np.searchsorted(np.asarray(bps), owner.pieces[j], side="left") % 2) == 1

    # ----------------------------------------------------------------- expansion
    def _expand_data(self, node):
        self.n_expanded += 1
        samples = node.samples
        per_feature = self._candidates(samples, node.level)
        node.candidates = [t for t, _ in per_feature]
        node.pieces, node.counts = [], []
        feats, cands, bounds, uppers, ginis = [], [], [], [], []
        sim_left, sim_right, sim_n, sim_gini = [], [], [], []
        child_depth = node.depth - 1
        C = self.n_classes
        ys = self.y[samples]
        for j, (t, pieces) in enumerate(per_feature):
            cnt = np.bincount(pieces * C + ys, minlength=(t.size + 1) * C).reshape(-1, C)
            node.pieces.append(pieces)
            node.counts.append(cnt)
            left = np.cumsum(cnt, axis=0)[:-1]
            right = cnt.sum(axis=0) - left
            eL, eR = errors_of_counts(left).astype(float), errors_of_counts(right).astype(float)
            if self.similarity:
                sim_n.append(left.sum(axis=1).astype(float))
                sim_left.append(self._child_bound(eL, child_depth))
                sim_right.append(self._child_bound(eR, child_depth))
                sim_gini.append(_gini_weighted(left) + _gini_weighted(right))
            if t.size == 0:
                continue
            refinable = (self.max_breakpoints > 1) & (np.arange(t.size) < t.size - 1)
            v = np.minimum(np.where(refinable, self.alpha, INF),
                           self._child_bound(eL, child_depth) + self._child_bound(eR, child_depth))
            feats.append(np.full(t.size, j))
            cands.append(np.arange(t.size))
            bounds.append(self.split_cost + v)
            uppers.append(self.split_cost + eL + eR)
            ginis.append(_gini_weighted(left) + _gini_weighted(right))
        node.expanded = True
        if self.similarity:
            node.queue = SimilarityQueue(sim_n, sim_left, sim_right, sim_gini)
            if feats:
                uppers = np.concatenate(uppers)
                k = int(np.argmin(uppers))
                j, i = int(np.concatenate(feats)[k]), int(np.concatenate(cands)[k])
                node.queue.mark_done(j, i)
                self._add_action(node, j, i)
            node.queue.refresh(self.split_cost, node.actions)
            return
        if not feats:
            node.queue = ActionQueue.empty()
            return
        feats, cands, bounds, uppers, ginis = (np.concatenate(a) for a in (feats, cands, bounds, uppers, ginis))
        # the best single split first (the first incumbent), then by the children's weighted Gini impurity
        order = np.argsort(ginis, kind="stable")
        first = int(np.argmin(uppers))
        order = np.concatenate(([first], order[order != first]))
        node.queue = ActionQueue(bounds[order], feats[order], cands[order])
        self._materialise_data(node, force_first=True)

    def _add_action(self, node, j, i):
        cnt = node.counts[j]
        left = cnt[: i + 1].sum(axis=0)
        a = self._make_shape(node, j, (i,), left, cnt.sum(axis=0) - left)
        node.actions.append(a)
        return a

    def _materialise_data(self, node, force_first=False):
        made = 0
        # a depth-3 state of the similarity search: its actions' children are solved on creation, and taking
        # many of them at once (in the bisection order, pruned as they go) costs far fewer iterations
        limit = self.batch_depth3 if self.similarity and node.depth == 3 else self.batch
        while made < limit:
            action = node.queue.pop(node.upper, force_first)
            if action is None:
                break
            a = self._add_action(node, int(action[0]), int(action[1]))
            made += 1
            if self.similarity:
                if self.split_cost + a.upper < node.upper - EPS:
                    node.upper, node.best = self.split_cost + a.upper, a
                node.queue.refresh(self.split_cost, [a])
        return made

    def _expand_shape(self, s):
        self.n_expanded += 1
        owner = s.owner
        child_depth = owner.depth - 1
        right = self._right_mask(owner, s.feature, s.breakpoints)
        samples = owner.samples
        if s.left is None:
            s.left = self._make_data(samples[~right], child_depth, owner.level + 1, s.estimate_left)
            s.right = self._make_data(samples[right], child_depth, owner.level + 1, s.estimate_right)
        s.expanded = True
        t = owner.candidates[s.feature]
        last = s.breakpoints[-1]
        if len(s.breakpoints) >= self.max_breakpoints or last >= t.size - 1:
            s.queue = ActionQueue.empty()
            return
        cum = np.cumsum(owner.counts[s.feature], axis=0)
        ii = np.arange(last + 1, t.size)
        tail = cum[-1] - cum[ii]  # counts of the pieces beyond candidate i
        if len(s.breakpoints) % 2 == 0:  # the last pieces are on the left: the new breakpoint moves the tail right
            L2, R2 = s.counts_left - tail, s.counts_right + tail
        else:
            L2, R2 = s.counts_left + tail, s.counts_right - tail
        eL, eR = errors_of_counts(L2).astype(float), errors_of_counts(R2).astype(float)
        refinable = (len(s.breakpoints) + 1 < self.max_breakpoints) & (ii < t.size - 1)
        v = np.minimum(np.where(refinable, self.alpha, INF),
                       self._child_bound(eL, child_depth) + self._child_bound(eR, child_depth))
        order = np.argsort(_gini_weighted(L2) + _gini_weighted(R2), kind="stable")
        s.queue = ActionQueue((self.alpha + v)[order], ii[order], L2[order], R2[order])
        self._materialise_shape(s)

    def _materialise_shape(self, s):
        made = 0
        while made < self.batch:
            action = s.queue.pop(s.upper)
            if action is None:
                break
            i, L2, R2 = action
            s.refinements.append(self._make_shape(s.owner, s.feature, s.breakpoints + (int(i),), L2, R2))
            made += 1
        return made

    # ----------------------------------------------------------------- selection
    def _select_data(self, node):
        """OR choice: the unsolved action of least ``V~`` (ties: least lower bound), materialising a batch of
        pending actions when none is left."""
        tried = False
        while True:
            best, best_key = None, None
            for a in node.actions:
                if a.solved:
                    continue
                key = (a.estimate, a.lower)
                if best_key is None or key < best_key:
                    best, best_key = a, key
            if best is not None or not node.queue.pending() or tried:
                return best
            self._materialise_data(node)
            tried = True

    def _commit_open(self, s):
        return (not s.commit_pruned) and not (s.left.solved and s.right.solved)

    def _select_shape(self, s):
        tried = False
        while True:
            best, best_key = None, None
            if self._commit_open(s):
                best, best_key = "commit", (s.left.estimate + s.right.estimate, s.left.lower + s.right.lower)
            for r in s.refinements:
                if r.solved:
                    continue
                key = (self.alpha + r.estimate, self.alpha + r.lower)
                if best_key is None or key < best_key:
                    best, best_key = r, key
            if best == "commit":
                return self._and_child(s)
            if best is not None or not s.queue.pending() or tried:
                return best
            self._materialise_shape(s)
            tried = True

    def _and_child(self, s):
        """AND choice between the children of a commit (only the unsolved one once the other is solved)."""
        L, R = s.left, s.right
        if L.solved:
            return R
        if R.solved:
            return L
        if self.and_rule == "worst_primal":
            return L if L.upper >= R.upper else R
        if self.and_rule == "worst_informative":
            return L if L.estimate >= R.estimate else R
        s.turn ^= 1
        return L if s.turn else R

    # ----------------------------------------------------------------- backpropagation
    def _update_data(self, node):
        if node.solved or not node.expanded:
            return
        c = self.split_cost
        if self.similarity:
            node.queue.refresh(c, node.actions)
        upper, best = node.leaf_error, None
        for a in node.actions:
            if c + a.upper < upper - EPS:
                upper, best = c + a.upper, a
        node.upper, node.best = upper, best
        keep = [a for a in node.actions if a is best or c + a.lower < upper - EPS]  # dual pruning
        node.actions = keep
        lower = min(upper, node.queue.min_bound)
        estimate = INF
        for a in keep:
            if not a.solved or a is best:
                lower = min(lower, c + a.lower)
                estimate = min(estimate, c + a.estimate)
        node.lower = min(max(node.lower, lower), upper)
        node.estimate = self._clamp(estimate, node.lower, upper)
        if node.lower >= node.upper - EPS:
            node.solved = True
            node.actions = [best] if best is not None else []
            node.pieces = node.counts = node.queue = node.presorted = None  # free the solved subgraph
            self._remember(node)

    def _update_shape(self, s):
        if s.solved or not s.expanded:
            return
        a = self.alpha
        upper, best = INF, None
        if not s.commit_pruned:
            upper, best = s.left.upper + s.right.upper, "commit"
        for r in s.refinements:
            if a + r.upper < upper - EPS:
                upper, best = a + r.upper, r
        s.upper, s.best = upper, best
        s.refinements = [r for r in s.refinements if r is best or a + r.lower < upper - EPS]
        if best != "commit" and not s.commit_pruned and s.left.lower + s.right.lower >= upper - EPS:
            s.commit_pruned = True
            s.left = s.right = None
        lower = min(upper, s.queue.min_bound)
        estimate = INF
        if not s.commit_pruned:
            lower = min(lower, s.left.lower + s.right.lower)
            estimate = min(estimate, s.left.estimate + s.right.estimate)
        for r in s.refinements:
            lower = min(lower, a + r.lower)
            estimate = min(estimate, a + r.estimate)
        s.lower = min(max(s.lower, lower), upper)
        s.estimate = self._clamp(estimate, s.lower, upper)
        if s.lower >= s.upper - EPS:
            s.solved = True
            if best == "commit":
                s.refinements = []
            else:
                s.refinements = [best]
                s.left = s.right = None
                s.commit_pruned = True
            s.queue = ActionQueue.empty()

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
