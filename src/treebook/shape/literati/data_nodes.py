"""The data (OR) states of the AO* search: a subset of the samples at a depth, whose choices are the
feature-and-shape actions. Created with their bounds and estimates (depth-1 and depth-2 states solved
exactly on creation), expanded into their actions, materialised lazily, selected by the OR rule and updated
from their actions' bounds. A mixin of :class:`~treebook.shape.literati.search.LiteratiSearch`, whose
attributes (the data, the options, the caches) these methods use.
"""

from __future__ import annotations

import numpy as np

from ...tree.criteria import weighted_impurity
from ..candidates import (
    best_depth1_all,
    best_depth1_presorted,
    best_shape_1d,
    errors_of_counts,
)
from ..depth2 import best_depth2_all, best_depth2_rows
from .queue import EPS, INF, ActionQueue, SimilarityQueue
from .states import DataState, ShapeState

__all__ = ["DataNodes"]

#: the depth-2 solver's results kept per state of the value cache (``cache_size``): a result is a value and a
#: small tuple, a state holds arrays
DEPTH2_CACHE_FACTOR = 20


def _gini_weighted(counts: np.ndarray) -> np.ndarray:
    """n * gini(counts / n), over leading axes (0 for empty rows): the tree core's weighted impurity."""
    return weighted_impurity(counts, "gini")


class DataNodes:
    """The data-state half of :class:`~treebook.shape.literati.search.LiteratiSearch`."""

    def _presorted(self, node):
        if node.presorted is None:
            Xo = np.ascontiguousarray(self.X[node.samples])
            node.presorted = (Xo, np.ascontiguousarray(self.y[node.samples]),
                              np.ascontiguousarray(np.argsort(Xo, axis=0, kind="stable").T))
        return node.presorted

    def _make_data(self, samples, depth, level, estimate=None, presorted=None, counts=None):
        """The data state of ``samples`` at ``depth`` (``counts``: their class counts, when known)."""
        self.n_created += 1
        if counts is None:
            counts = np.bincount(self.y[samples], minlength=self.n_classes)
        label = int(counts.argmax())
        err = float(samples.size - counts[label])
        node = DataState(samples, depth, level, err, label)
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
        if presorted is None:
            samples = node.samples
            v, tree, _ = best_depth2_all(self.X[samples], self.y[samples], self.n_classes, self.split_cost)
        else:
            v, tree, _ = best_depth2_rows(*presorted, self.n_classes, self.split_cost)
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
            if node.level == 0 and self.root_action is not None:
                raise ValueError(f"root_action {self.root_action!r}: the root has no candidate splits")
            node.queue = ActionQueue.empty()
            return
        feats, cands, bounds, uppers, ginis = (np.concatenate(a) for a in (feats, cands, bounds, uppers, ginis))
        if node.level == 0 and self.root_action is not None:
            j, thr = self.root_action
            keep = np.flatnonzero(feats == j)
            keep = keep[node.candidates[j][cands[keep]] == thr]
            if keep.size == 0:
                raise ValueError(f"root_action {self.root_action!r}: the threshold is not one of feature {j}'s "
                                 f"candidates at the root ({node.candidates[j].tolist()})")
            feats, cands, bounds, uppers, ginis = (a[keep] for a in (feats, cands, bounds, uppers, ginis))
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
