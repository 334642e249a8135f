"""Brute-force oracle: optimal shape trees by exhaustive enumeration (tiny data only).

Enumerates, for every node, every feature, every set of at most ``K`` breakpoints among the node's
candidates and every left/right assignment of the pieces (not only alternating ones), and solves

    min_T  Err(T, D) + sum_{internal v} [lam + alpha * K(f_v)]   s.t.  K(f_v) <= K,  depth(T) <= D

by the plain recursion over (sample subset, depth) with memoisation.  It is exponential in ``K`` and in the
number of candidates and serves as the test oracle for :mod:`treebook.shape.literati`.
"""

from __future__ import annotations

import itertools

import numpy as np

from .candidates import all_candidates, cart_candidates

__all__ = ["exhaustive_optimum"]


def exhaustive_optimum(X, y, *, max_depth, max_breakpoints, lam=0.0, alpha=0.0, candidates="all",
                       cart_leaves=(8,), random_state=0) -> float:
    """Optimal regularised objective over all shape trees (``y`` = integer class codes 0..C-1).

    ``candidates`` and ``cart_leaves`` have the meaning of :class:`~treebook.shape.LiteratiClassifier`
    (``cart_leaves[level]`` leaves for the local CART of a node at distance ``level`` from the root).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=np.int64)
    n_classes = int(y.max()) + 1
    memo: dict = {}
    K = int(max_breakpoints)

    def cands(idx, level):
        if candidates == "all":
            return all_candidates(X[idx])
        b = cart_leaves[min(level, len(cart_leaves) - 1)]
        return cart_candidates(X[idx], y[idx], b, random_state=random_state)

    def solve(idx, d, level):
        key = (idx.tobytes(), d)
        if key in memo:
            return memo[key]
        counts = np.bincount(y[idx], minlength=n_classes)
        best = float(idx.size - counts.max())
        if d > 0 and idx.size > 1:
            U = cands(idx, level)
            for j, t in enumerate(U):
                x = X[idx, j]
                for k in range(1, min(K, t.size) + 1):
                    for bps in itertools.combinations(range(t.size), k):
                        piece = np.searchsorted(t[list(bps)], x, side="left")
                        for sides in itertools.product((False, True), repeat=k + 1):
                            right = np.asarray(sides)[piece]
                            if right.all() or not right.any():
                                continue
                            cost = lam + alpha * k
                            if cost >= best:
                                continue
                            v = cost + solve(idx[~right], d - 1, level + 1)
                            if v < best:
                                v += solve(idx[right], d - 1, level + 1)
                                best = min(best, v)
        memo[key] = best
        return best

    return solve(np.arange(X.shape[0]), int(max_depth), 0)
