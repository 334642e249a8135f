"""Pending actions of a state: the actions not yet materialised as states, with their lower bounds.

A state materialises its actions lazily, ``batch`` at a time (8 by default; 128 for a depth-3 state of the
similarity search), in an order that puts the
promising ones first; an action whose bound already meets the state's upper bound is dropped instead
(dual pruning before materialisation).  The least bound of the pending actions enters the state's lower
bound, so a state whose pending actions are all pruned can be closed.  Both queues answer the same three
questions: :meth:`pending`, :attr:`min_bound` and :meth:`pop`.

* :class:`ActionQueue` — a fixed order (the first action is the best single split, then by the children's
  weighted Gini impurity), with the suffix minima of the bounds;
* :class:`SimilarityQueue` — the first thresholds of a ``K = 1`` data state over every midpoint, whose
  bounds tighten as neighbouring thresholds are evaluated (similarity bounds).
"""

from __future__ import annotations

import numpy as np

__all__ = ["EPS", "INF", "ActionQueue", "SimilarityQueue"]

EPS = 1e-9
INF = np.inf


def _suffix_minima(bounds: np.ndarray) -> np.ndarray:
    """``out[k] = min(bounds[k:])``, with ``out[len(bounds)] = inf``."""
    if bounds.size == 0:
        return np.array([INF])
    return np.append(np.minimum.accumulate(bounds[::-1])[::-1], INF)


class ActionQueue:
    """Pending actions in a fixed materialisation order.

    ``items`` are arrays aligned with ``bounds`` (e.g. feature and candidate index); :meth:`pop` returns the
    next action whose bound is below the state's upper bound, as a tuple of the items' entries.
    """

    __slots__ = ("bounds", "items", "position", "suffix")

    def __init__(self, bounds, *items):
        self.bounds = np.asarray(bounds, dtype=float)
        self.items = items
        self.position = 0
        self.suffix = _suffix_minima(self.bounds)

    @classmethod
    def empty(cls) -> ActionQueue:
        return cls(np.empty(0))

    def pending(self) -> bool:
        return self.position < self.bounds.size

    @property
    def min_bound(self) -> float:
        """Least bound of the actions not yet popped (``inf`` when none)."""
        return self.suffix[self.position]

    def pop(self, upper: float, force_first: bool = False):
        """The next action with bound ``< upper`` (skipping the pruned ones), or ``None`` when exhausted.

        ``force_first`` keeps the first action of the order even when pruned (the first incumbent).
        """
        while self.position < self.bounds.size:
            k = self.position
            self.position += 1
            if self.bounds[k] >= upper - EPS and not (force_first and k == 0):
                continue
            return tuple(a[k] for a in self.items)
        return None


class SimilarityQueue:
    """Pending first thresholds of a ``K = 1`` data state over every midpoint, with similarity bounds.

    The optimum of a child is monotone and 1-Lipschitz in its sample set
    (:mod:`treebook.shape.depth2`), so the lower bound of any threshold's left (right) child also bounds
    every threshold further right (left), and, less the number of samples in between, every threshold
    further left (right).  ``lower_left`` / ``lower_right`` hold the best known lower bound of each
    threshold's children (the admissible ``V`` at first, the children's search bounds once materialised);
    the bound of a pending action is the best one these propagate to it.
    """

    __slots__ = ("_best", "_cost", "_stale", "bounds", "done", "gini", "lower_left", "lower_right", "min_bound",
                 "n_left")

    def __init__(self, n_left, lower_left, lower_right, gini):
        self.n_left = n_left  # per feature: samples left of each threshold
        self.lower_left = lower_left
        self.lower_right = lower_right
        self.gini = gini
        self.done = [np.zeros(a.size, dtype=bool) for a in n_left]
        self.bounds = [None] * len(n_left)
        self.min_bound = -INF
        self._cost = None
        self._stale = set(range(len(n_left)))  # features whose bounds are to be recomputed
        self._best = [None] * len(n_left)  # per feature: (bound, gini, index) of the best pending threshold

    def mark_done(self, j, i):
        """Threshold ``i`` of feature ``j`` has been materialised."""
        self.done[j][i] = True
        self._best[j] = None

    def _pending_best(self, j):
        """``(bound, gini, index)`` of the pending threshold of feature ``j`` of least bound (ties: least Gini
        impurity, then first), ``(inf, inf, -1)`` when none is pending."""
        if self._best[j] is None:
            done = self.done[j]
            if done.all():
                self._best[j] = (INF, INF, -1)
            else:
                qq = np.where(done, INF, self.bounds[j])
                ties = np.flatnonzero(qq == qq.min())
                i = int(ties[np.argmin(self.gini[j][ties])]) if ties.size > 1 else int(ties[0])
                self._best[j] = (float(qq[i]), float(self.gini[j][i]), i)
        return self._best[j]

    def refresh(self, cost, actions):
        """Propagate the children's bounds of the materialised ``actions``; tighten those actions too.

        Only the features whose children's bounds rose are recomputed."""
        if cost != self._cost:
            self._cost = cost
            self._stale = set(range(len(self.n_left)))
        for a in actions:
            if a.left is not None and a.right is not None:
                j, i = a.feature, a.breakpoints[0]
                if a.left.lower > self.lower_left[j][i]:
                    self.lower_left[j][i] = a.left.lower
                    self._stale.add(j)
                if a.right.lower > self.lower_right[j][i]:
                    self.lower_right[j][i] = a.right.lower
                    self._stale.add(j)
        for j in self._stale:
            nL, lbL, lbR = self.n_left[j], self.lower_left[j], self.lower_right[j]
            L = np.maximum(np.maximum.accumulate(lbL), np.maximum.accumulate((lbL - nL)[::-1])[::-1] + nL)
            R = np.maximum(np.maximum.accumulate(lbR[::-1])[::-1], np.maximum.accumulate(lbR + nL) - nL)
            self.bounds[j] = cost + L + R
            self._best[j] = None
        self._stale.clear()
        least = INF
        for j in range(len(self.n_left)):
            q = self._pending_best(j)[0]
            if q < least:
                least = q
        self.min_bound = least
        for a in actions:  # a materialised action is bounded by what its neighbours propagate to it too
            if a.left is None and not a.solved:
                a.lower = min(max(a.lower, self.bounds[a.feature][a.breakpoints[0]] - cost), a.upper)
                if a.lower >= a.upper - EPS:
                    a.solved = True

    def pending(self) -> bool:
        return self.min_bound < INF

    def pop(self, upper: float, force_first: bool = False):
        """Next threshold ``(j, i)`` to materialise (``None`` when every pending one is pruned): the middle of
        the gap of done thresholds around the pending threshold of least bound (ties: least Gini impurity),
        which bisects the gaps as ConTree does while following the bound."""
        best, key = None, None
        for j in range(len(self.n_left)):
            q, g, i = self._pending_best(j)
            if i < 0:
                continue
            if q >= upper - EPS:
                self.done[j][:] = True  # every pending threshold of this feature is pruned
                self._best[j] = (INF, INF, -1)
                continue
            if key is None or (q, g) < key:
                best, key = (j, i), (q, g)
        if best is None:
            return None
        j, i = best
        done = self.done[j]
        lo = np.flatnonzero(done[:i])
        hi = np.flatnonzero(done[i + 1:])
        mid = ((lo[-1] if lo.size else -1) + (i + 1 + hi[0] if hi.size else done.size)) // 2
        if not done[mid]:
            i = mid
        self.mark_done(j, i)
        return j, i
