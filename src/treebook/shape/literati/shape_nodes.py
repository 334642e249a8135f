"""The shape (AND) states of the AO* search: one feature's shape function with its breakpoints so far,
whose children are the two data states it routes to, or a further breakpoint. Created from a data state's
action, expanded, materialised, their AND child chosen by the rule of the search and updated from their
children's bounds. A mixin of :class:`~treebook.shape.literati.search.LiteratiSearch`.
"""

from __future__ import annotations

import numpy as np

from ..candidates import (
    errors_of_counts,
)
from .data_nodes import _gini_weighted
from .queue import EPS, INF, ActionQueue
from .states import ShapeState

__all__ = ["ShapeNodes"]


class ShapeNodes:
    """The shape-state half of :class:`~treebook.shape.literati.search.LiteratiSearch`."""

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
            s.left = self._make_data(samples[~right], child_depth, owner.level + 1, presorted=pL,
                                     counts=counts_left)
            s.right = self._make_data(samples[right], child_depth, owner.level + 1, presorted=pR,
                                      counts=counts_right)
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

    def _expand_shape(self, s):
        self.n_expanded += 1
        owner = s.owner
        child_depth = owner.depth - 1
        right = self._right_mask(owner, s.feature, s.breakpoints)
        samples = owner.samples
        if s.left is None:
            s.left = self._make_data(samples[~right], child_depth, owner.level + 1, s.estimate_left,
                                     counts=s.counts_left)
            s.right = self._make_data(samples[right], child_depth, owner.level + 1, s.estimate_right,
                                      counts=s.counts_right)
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
