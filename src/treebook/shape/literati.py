"""Literati: anytime optimal shape generalized trees by AO* search over an AND/OR graph.

Objective (the paper's eq. (1)):

    min_T  Err(T, D) + sum_{v internal} [lam + alpha * K(f_v)]   s.t.  K(f_v) <= K,  depth(T) <= D.

States (Sec. 3.1):

* data state ``(D_s, d)`` (OR): stop as a leaf (value ``Err(D_s)``) or open a shape function on feature
  ``j`` with a first breakpoint ``u`` (cost ``lam + alpha``);
* shape state ``(D_s, d, j, k)`` (OR): *refine* with a breakpoint ``u > max(k)`` (cost ``alpha``) or
  *commit*, which yields the AND pair ``(D_L, d-1), (D_R, d-1)``.  Pieces alternate sides, the first
  piece going left: a shape function whose adjacent pieces share a side is dominated by the one with the
  common breakpoint removed, and swapping all sides mirrors the tree at equal cost, so this loses nothing
  (Proposition 1, Lemmas 1-2: the incremental recursion has the same Bellman optimum).

Bounds: the admissible estimates of Proposition 2,

    V(D_s, d)       = min(Err(D_s), lam + alpha),
    V(D_s, d, j, k) = min(alpha, min(Err(D_L), lam + alpha) + min(Err(D_R), lam + alpha)),

(with ``alpha`` dropped when no refinement is possible and ``Err`` used exactly at depth 0), the terminal
rule of Corollary 1 (``Err(D_s) <= lam + alpha`` closes a state as a leaf), and primal upper bounds from
the best tree found so far.  The OR choice follows the non-admissible lookahead ``V~`` (regularised loss
of a depth-``d`` CART on the state's data), the AND choice alternates round-robin between unsolved
children; actions with ``Q(s, a) >= Vbar(s)`` are pruned (dual pruning).  Depth-1 data states are, by
default, solved exactly on creation by a dynamic programme over pieces
(:func:`~treebook.shape.candidates.best_shape_1d`), which returns the same value the search would.

With ``K = 1`` over every midpoint (the space of optimal threshold trees), depth-2 data states are solved
exactly on creation too (:mod:`treebook.shape.depth2`), and the pending thresholds of a data state are
bounded by *similarity*: a child's optimum is monotone and 1-Lipschitz in its sample set, so the bounds of
the evaluated thresholds of a feature bound their neighbours' (:class:`_Sim`).
"""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..tree import ShapeSplit, TreeBuilder
from ..tree.cart import BaseTree, CARTClassifier
from ..tree.criteria import weighted_impurity
from ..validation import check_classification_targets, check_X_y
from .candidates import (
    best_depth1_all,
    best_depth1_presorted,
    best_shape_1d,
    cart_candidates,
    errors_of_counts,
    greedy_lookahead_loss,
)
from .depth2 import best_depth2_all, sub_orders

__all__ = ["DEFAULT_CART_LEAVES", "LiteratiClassifier", "LiteratiSearch", "cart_spec", "spec_objective", "spec_to_tree"]

EPS = 1e-9
INF = np.inf
#: default ``B_d`` (leaves of the local CART proposing candidates), from the root downwards
DEFAULT_CART_LEAVES = (32, 16, 8, 8, 4, 4, 4)


def _gini_weighted(counts: np.ndarray) -> np.ndarray:
    """n * gini(counts / n), over leading axes (0 for empty rows): the tree core's weighted impurity."""
    return weighted_impurity(counts, "gini")


class _Data:
    __slots__ = (
        "acts",
        "best",
        "srt",
        "cands",
        "cnts",
        "d",
        "err",
        "expanded",
        "ht",
        "idx",
        "key",
        "label",
        "lb",
        "level",
        "pend",
        "pend_min",
        "pend_pos",
        "pos",
        "solved",
        "ub",
    )

    def __init__(self, idx, d, level, err, label):
        self.idx = idx
        self.d = d
        self.level = level
        self.err = err
        self.label = label
        self.lb = 0.0
        self.ub = err
        self.ht = err
        self.solved = False
        self.expanded = False
        self.acts = []
        self.best = None
        self.pos = None
        self.cnts = None
        self.cands = None
        self.pend = None
        self.pend_pos = 0
        self.pend_min = None
        self.key = None
        self.srt = None


class _Shape:
    __slots__ = (
        "L",
        "R",
        "best",
        "bps",
        "cntL",
        "cntR",
        "commit_dead",
        "expanded",
        "hL",
        "hR",
        "ht",
        "j",
        "lb",
        "owner",
        "pend",
        "pend_min",
        "pend_pos",
        "refs",
        "rr",
        "solved",
        "thr",
        "ub",
    )

    def __init__(self, owner, j, bps, thr, cntL, cntR):
        self.owner = owner
        self.j = j
        self.bps = bps
        self.thr = thr
        self.cntL = cntL
        self.cntR = cntR
        self.solved = False
        self.expanded = False
        self.L = None
        self.R = None
        self.commit_dead = False
        self.refs = []
        self.pend = None
        self.pend_pos = 0
        self.pend_min = None
        self.best = "commit"
        self.rr = 0


def _pending(order_q: np.ndarray):
    """Suffix minima of the lower bounds of the not yet materialised actions (in materialisation order)."""
    if order_q.size == 0:
        return np.array([INF])
    return np.append(np.minimum.accumulate(order_q[::-1])[::-1], INF)


class _Sim:
    """Pending root thresholds of a ``K = 1`` data state over every midpoint, with similarity bounds.

    The optimum of a child is monotone and 1-Lipschitz in its sample set
    (:mod:`treebook.shape.depth2`), so the lower bound of any threshold's left (right) child also bounds
    every threshold further right (left), and, less the number of samples in between, every threshold
    further left (right).  ``lbL`` / ``lbR`` hold the best known lower bound of each threshold's children
    (the admissible ``V`` at first, the children's search bounds once materialised); the bound of a pending
    action is the best one these propagate to it.
    """

    __slots__ = ("done", "gini", "lbL", "lbR", "min", "nL", "q")

    def __init__(self, nL, lbL, lbR, gini):
        self.nL = nL  # per feature: samples left of each threshold
        self.lbL = lbL
        self.lbR = lbR
        self.gini = gini
        self.done = [np.zeros(a.size, dtype=bool) for a in nL]
        self.q = None
        self.min = -INF

    def refresh(self, cost, acts):
        for a in acts:
            if a.L is not None and a.R is not None:
                i = a.bps[0]
                self.lbL[a.j][i] = max(self.lbL[a.j][i], a.L.lb)
                self.lbR[a.j][i] = max(self.lbR[a.j][i], a.R.lb)
        self.q, self.min = [], INF
        for nL, lbL, lbR, done in zip(self.nL, self.lbL, self.lbR, self.done):
            L = np.maximum(np.maximum.accumulate(lbL), np.maximum.accumulate((lbL - nL)[::-1])[::-1] + nL)
            R = np.maximum(np.maximum.accumulate(lbR[::-1])[::-1], np.maximum.accumulate(lbR + nL) - nL)
            q = cost + L + R
            self.q.append(q)
            if q.size and not done.all():
                self.min = min(self.min, float(q[~done].min()))
        for a in acts:  # a materialised action is bounded by what its neighbours propagate to it too
            if a.L is None and not a.solved:
                a.lb = min(max(a.lb, self.q[a.j][a.bps[0]] - cost), a.ub)
                if a.lb >= a.ub - EPS:
                    a.solved = True

    def pending(self):
        return self.min < INF

    def pick(self, ub):
        """Next threshold ``(j, i)`` to materialise (``None`` when every pending one is pruned): the middle of
        the gap of done thresholds around the pending threshold of least bound (ties: least Gini impurity),
        which bisects the gaps as ConTree does while following the bound."""
        best, key = None, None
        for j, (q, done, g) in enumerate(zip(self.q, self.done, self.gini)):
            if done.all():
                continue
            qq = np.where(done, INF, q)
            i = int(np.lexsort((g, qq))[0])
            if qq[i] >= ub - EPS:
                done[:] = True  # every pending threshold of this feature is pruned
                continue
            if key is None or (qq[i], g[i]) < key:
                best, key = (j, i), (qq[i], g[i])
        if best is None:
            return None
        j, i = best
        done = self.done[j]
        lo = np.flatnonzero(done[:i])
        hi = np.flatnonzero(done[i + 1:])
        mid = ((lo[-1] if lo.size else -1) + (i + 1 + hi[0] if hi.size else done.size)) // 2
        if not done[mid]:
            i = mid
        done[i] = True
        return j, i


class LiteratiSearch:
    """The AO* search on one data set (``y`` = class codes ``0..C-1``); see the module docstring.

    Call :meth:`run`; afterwards :attr:`root` holds the bounds and :meth:`tree_spec` the best tree.
    """

    def __init__(self, X, y, n_classes, *, max_depth=3, max_breakpoints=3, lam=0.0, alpha=0.0,
                 candidates="cart", cart_leaves=DEFAULT_CART_LEAVES, heuristic="cart", and_rule="round_robin",
                 exact_depth1=True, similarity=True, cache_size=10_000, batch=8, random_state=0):
        self.X = np.ascontiguousarray(X, dtype=float)
        self.y = np.asarray(y, dtype=np.int64)
        self.C = int(n_classes)
        self.D = int(max_depth)
        self.K = int(max_breakpoints)
        self.lam = float(lam)
        self.alpha = float(alpha)
        self.split_cost = self.lam + self.alpha
        self.candidates = candidates
        self.cart_leaves = tuple(int(b) for b in cart_leaves)
        self.heuristic = heuristic
        self.and_rule = and_rule
        self.exact_depth1 = bool(exact_depth1)
        # K = 1 over every midpoint: depth-2 states solved exactly, similarity bounds between thresholds
        self.sim = bool(similarity) and self.K == 1 and candidates == "all"
        self.cache_size = int(cache_size)
        self.batch = int(batch)
        self.random_state = 0 if random_state is None else int(random_state)
        self.cache: OrderedDict = OrderedDict()
        self.n_expanded = 0
        self.n_created = 0
        self.cache_hits = 0
        self.trace: list[tuple[float, float, float, int]] = []
        self.root = None

    # ----------------------------------------------------------------- helpers
    def _cands(self, idx, level):
        """Per feature: (sorted candidate breakpoints, piece index of every sample of the state)."""
        Xs = self.X[idx]
        out = []
        if self.candidates == "all":
            for j in range(Xs.shape[1]):
                u, inv = np.unique(Xs[:, j], return_inverse=True)
                out.append(((u[:-1] + u[1:]) * 0.5, inv.astype(np.int32)))
            return out
        b = self.cart_leaves[min(level, len(self.cart_leaves) - 1)]
        for j, t in enumerate(cart_candidates(Xs, self.y[idx], b, random_state=self.random_state)):
            out.append((t, np.searchsorted(t, Xs[:, j], side="left").astype(np.int32)))
        return out

    def _vchild(self, err, dchild):
        """Admissible value of a child data state with errors ``err`` and remaining depth ``dchild``."""
        if dchild == 0:
            return err
        return np.minimum(err, self.split_cost)

    def _look(self, idx, d, counts=None):
        """Secondary heuristic V~ of a data state (lookahead CART, impurity, primal or admissible)."""
        if counts is None:
            counts = np.bincount(self.y[idx], minlength=self.C)
        err = float(idx.size - counts.max())
        h = self.heuristic
        if d == 0 or err <= self.split_cost + EPS:
            return err
        if h == "impurity":
            return float(_gini_weighted(counts))
        if h == "primal":
            return err
        if h == "admissible":
            return min(err, self.split_cost)
        return min(err, greedy_lookahead_loss(self.X[idx], self.y[idx], self.C, d, self.split_cost))

    def _key(self, idx, d):
        return (d, idx.size, hash(idx.tobytes()))

    # ----------------------------------------------------------------- state creation
    def _make_data(self, idx, d, level, hint=None, presorted=None):
        self.n_created += 1
        counts = np.bincount(self.y[idx], minlength=self.C)
        err = float(idx.size - counts.max())
        node = _Data(idx, d, level, err, int(np.argmax(counts)))
        if d == 0 or idx.size < 2 or err <= self.split_cost + EPS:
            # depth exhausted, or Corollary 1: Err(D_s) <= lam + alpha closes the state as a leaf
            node.lb = node.ub = node.ht = err
            node.solved = True
            return node
        key = self._key(idx, d)
        hit = self.cache.get(key)
        if hit is not None:
            self.cache.move_to_end(key)
            self.cache_hits += 1
            return hit
        node.key = key
        if d == 1 and self.exact_depth1:
            self._solve_depth1(node, presorted)
            self._remember(node)
            return node
        if d == 2 and self.sim:
            self._solve_depth2(node, presorted)
            self._remember(node)
            return node
        node.lb = min(err, self.split_cost)
        node.ub = err
        node.ht = self._look(idx, d, counts) if hint is None else hint
        node.ht = min(max(node.ht, node.lb), node.ub)
        return node

    def _solve_depth1(self, node, presorted=None):
        idx = node.idx
        if self.candidates == "all":
            if presorted is None:
                v, j, thr = best_depth1_all(self.X[idx], self.y[idx], self.C, self.K, self.alpha)
            else:
                Xo, yo, orders, keep = presorted
                v, j, thr = best_depth1_presorted(Xo, yo, orders, keep, self.C, self.K, self.alpha)
            v += self.lam
            node.solved = node.expanded = True
            if v < node.err - EPS:
                node.lb = node.ub = node.ht = v
                node.best = _Shape(node, j, tuple(range(thr.size)), thr, None, None)
                node.best.solved = True
            else:
                node.lb = node.ub = node.ht = node.err
            return
        best, bj, bmask, bt = node.err, -1, None, None
        for j, (t, pos) in enumerate(self._cands(idx, node.level)):
            if t.size == 0:
                continue
            cnt = np.bincount(pos * self.C + self.y[idx], minlength=(t.size + 1) * self.C).reshape(-1, self.C)
            v, mask = best_shape_1d(cnt, self.K, self.alpha)
            v += self.lam
            if v < best - EPS:
                best, bj, bmask, bt = v, j, mask, t
        node.lb = node.ub = node.ht = best
        node.solved = True
        node.expanded = True
        if bj >= 0:
            bps = tuple(int(i) for i in np.flatnonzero(bmask))
            node.best = _Shape(node, bj, bps, bt[bmask].copy(), None, None)
            node.best.solved = True

    def _solve_depth2(self, node, presorted=None):
        """Exact depth-2 threshold tree (:func:`~treebook.shape.depth2.best_depth2_all`)."""
        idx = node.idx
        if presorted is None:
            Xs, ys, orders = self.X[idx], self.y[idx], None
        else:
            Xo, yo, order_o, keep = presorted
            Xs, ys, orders = Xo[keep], yo[keep], sub_orders(order_o, keep)
        v, tree, _ = best_depth2_all(Xs, ys, self.C, self.split_cost, orders)
        node.lb = node.ub = node.ht = min(v, node.err)
        node.solved = node.expanded = True
        if tree is None or v >= node.err - EPS:
            return
        j, thr, left, right = tree
        s = _Shape(node, j, (0,), np.array([thr]), None, None)
        s.solved = True
        goes_right = self.X[idx, j] > thr
        s.L, s.R = (self._depth1_leafpair(sub, node.level + 1, split)
                    for sub, split in ((idx[~goes_right], left), (idx[goes_right], right)))
        node.best = s

    def _depth1_leafpair(self, idx, level, split):
        """A solved depth-1 state: a leaf (``split is None``) or the threshold split ``(feature, threshold)``."""
        c = np.bincount(self.y[idx], minlength=self.C)
        child = _Data(idx, 1, level, float(idx.size - c.max()), int(np.argmax(c)))
        child.solved = child.expanded = True
        value = child.err
        if split is not None:
            j, thr = split
            cs = _Shape(child, j, (0,), np.array([thr]), None, None)
            cs.solved = True
            child.best = cs
            goes_right = self.X[idx, j] > thr
            value = self.split_cost + sum(
                float(part.size - np.bincount(self.y[part], minlength=self.C).max())
                for part in (idx[~goes_right], idx[goes_right]))
        child.lb = child.ub = child.ht = value
        return child

    def _remember(self, node):
        if node.key is None or self.cache_size <= 0:
            return
        self.cache[node.key] = node
        self.cache.move_to_end(node.key)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

    def _make_shape(self, owner, j, bps, cntL, cntR):
        self.n_created += 1
        t = owner.cands[j]
        s = _Shape(owner, j, bps, t[list(bps)], cntL, cntR)
        dch = owner.d - 1
        eL, eR = float(errors_of_counts(cntL)), float(errors_of_counts(cntR))
        refinable = len(bps) < self.K and bps[-1] < t.size - 1
        s.lb = min(self.alpha if refinable else INF, self._vchild(eL, dch) + self._vchild(eR, dch))
        s.ub = eL + eR
        if dch == 0 or (dch == 1 and self.exact_depth1) or (dch == 2 and self.sim):
            # the children are solved on creation (leaves, or the exact depth-1 programme): evaluate the
            # commit now, which makes the bounds of this shape state exact up to its refinements
            right = self._right_mask(owner, j, bps)
            idx = owner.idx
            pL = pR = None
            if (dch == 1 and self.candidates == "all") or (dch == 2 and self.sim):
                if owner.srt is None:
                    Xo = np.ascontiguousarray(self.X[idx])
                    owner.srt = (Xo, np.ascontiguousarray(self.y[idx]),
                                 np.ascontiguousarray(np.argsort(Xo, axis=0, kind="stable").T))
                pL, pR = owner.srt + (~right,), owner.srt + (right,)
            s.L = self._make_data(idx[~right], dch, owner.level + 1, presorted=pL)
            s.R = self._make_data(idx[right], dch, owner.level + 1, presorted=pR)
            s.hL, s.hR = s.L.ub, s.R.ub
            s.ub = s.L.ub + s.R.ub
            s.lb = min(self.alpha if refinable else INF, s.ub)
            s.ht = s.ub
            if s.lb >= s.ub - EPS:
                s.solved = True
            return s
        if self.heuristic == "cart" and dch > 0:
            right = self._right_mask(owner, j, bps)
            idx = owner.idx
            s.hL = self._look(idx[~right], dch, cntL)
            s.hR = self._look(idx[right], dch, cntR)
        elif self.heuristic == "impurity" and dch > 0:
            s.hL, s.hR = float(_gini_weighted(cntL)), float(_gini_weighted(cntR))
        elif self.heuristic == "admissible":
            s.hL, s.hR = self._vchild(eL, dch), self._vchild(eR, dch)
        else:
            s.hL, s.hR = eL, eR
        s.ht = min(max(s.hL + s.hR, s.lb), s.ub)
        return s

    def _right_mask(self, owner, j, bps):
        return (np.searchsorted(np.asarray(bps), owner.pos[j], side="left") % 2) == 1

    # ----------------------------------------------------------------- expansion
    def _expand_data(self, node):
        self.n_expanded += 1
        idx = node.idx
        tp = self._cands(idx, node.level)
        node.cands = [t for t, _ in tp]
        node.pos, node.cnts = [], []
        J, Ic, Q, U, S = [], [], [], [], []
        simL, simR, simN, simG = [], [], [], []
        dch = node.d - 1
        yi = self.y[idx]
        for j, (t, pos) in enumerate(tp):
            cnt = np.bincount(pos * self.C + yi, minlength=(t.size + 1) * self.C).reshape(-1, self.C)
            node.pos.append(pos)
            node.cnts.append(cnt)
            left = np.cumsum(cnt, axis=0)[:-1]
            right = cnt.sum(axis=0) - left
            eL, eR = errors_of_counts(left).astype(float), errors_of_counts(right).astype(float)
            if self.sim:
                simN.append(left.sum(axis=1).astype(float))
                simL.append(self._vchild(eL, dch))
                simR.append(self._vchild(eR, dch))
                simG.append(_gini_weighted(left) + _gini_weighted(right))
            if t.size == 0:
                continue
            refinable = (self.K > 1) & (np.arange(t.size) < t.size - 1)
            v = np.minimum(np.where(refinable, self.alpha, INF), self._vchild(eL, dch) + self._vchild(eR, dch))
            J.append(np.full(t.size, j))
            Ic.append(np.arange(t.size))
            Q.append(self.split_cost + v)
            U.append(self.split_cost + eL + eR)
            S.append(_gini_weighted(left) + _gini_weighted(right))
        node.expanded = True
        if self.sim:
            node.pend = _Sim(simN, simL, simR, simG)
            if J:
                U = np.concatenate(U)
                k = int(np.argmin(U))
                j, i = int(np.concatenate(J)[k]), int(np.concatenate(Ic)[k])
                node.pend.done[j][i] = True
                self._add_action(node, j, i)
            node.pend.refresh(self.split_cost, node.acts)
            return
        if not J:
            node.pend = (np.empty(0, int), np.empty(0, int), np.empty(0))
            node.pend_min = _pending(np.empty(0))
            return
        J, Ic, Q, U, S = (np.concatenate(a) for a in (J, Ic, Q, U, S))
        order = np.argsort(S, kind="stable")
        first = int(np.argmin(U))
        order = np.concatenate(([first], order[order != first]))
        node.pend = (J[order], Ic[order], Q[order])
        node.pend_min = _pending(Q[order])
        node.pend_pos = 0
        self._materialise_data(node, force_first=True)

    def _add_action(self, node, j, i):
        cnt = node.cnts[j]
        left = cnt[: i + 1].sum(axis=0)
        a = self._make_shape(node, j, (i,), left, cnt.sum(axis=0) - left)
        node.acts.append(a)
        return a

    def _materialise_data(self, node, force_first=False):
        if self.sim:
            made = 0
            while made < self.batch:
                ji = node.pend.pick(node.ub)
                if ji is None:
                    break
                a = self._add_action(node, *ji)
                made += 1
                if self.split_cost + a.ub < node.ub - EPS:
                    node.ub, node.best = self.split_cost + a.ub, a
                node.pend.refresh(self.split_cost, [a])
            return made
        J, Ic, Q = node.pend
        made = 0
        while node.pend_pos < J.size and made < self.batch:
            k = node.pend_pos
            node.pend_pos += 1
            if Q[k] >= node.ub - EPS and not (force_first and k == 0):
                continue  # dual pruning before materialisation
            self._add_action(node, int(J[k]), int(Ic[k]))
            made += 1
        return made

    def _expand_shape(self, s):
        self.n_expanded += 1
        owner = s.owner
        dch = owner.d - 1
        right = self._right_mask(owner, s.j, s.bps)
        idx = owner.idx
        if s.L is None:
            s.L = self._make_data(idx[~right], dch, owner.level + 1, s.hL)
            s.R = self._make_data(idx[right], dch, owner.level + 1, s.hR)
        s.expanded = True
        t = owner.cands[s.j]
        last = s.bps[-1]
        if len(s.bps) >= self.K or last >= t.size - 1:
            s.pend = (np.empty(0, int), np.empty(0))
            s.pend_min = _pending(np.empty(0))
            return
        cnt = owner.cnts[s.j]
        cum = np.cumsum(cnt, axis=0)
        ii = np.arange(last + 1, t.size)
        tail = cum[-1] - cum[ii]  # counts of the pieces beyond candidate i
        if len(s.bps) % 2 == 0:  # the last pieces are on the left: the new breakpoint moves the tail right
            L2, R2 = s.cntL - tail, s.cntR + tail
        else:
            L2, R2 = s.cntL + tail, s.cntR - tail
        eL, eR = errors_of_counts(L2).astype(float), errors_of_counts(R2).astype(float)
        refinable = (len(s.bps) + 1 < self.K) & (ii < t.size - 1)
        v = np.minimum(np.where(refinable, self.alpha, INF), self._vchild(eL, dch) + self._vchild(eR, dch))
        Q = self.alpha + v
        order = np.argsort(_gini_weighted(L2) + _gini_weighted(R2), kind="stable")
        s.pend = (ii[order], Q[order], L2[order], R2[order])
        s.pend_min = _pending(Q[order])
        s.pend_pos = 0
        self._materialise_shape(s)

    def _materialise_shape(self, s):
        if len(s.pend) < 4:
            return 0
        ii, Q, L2, R2 = s.pend
        made = 0
        while s.pend_pos < ii.size and made < self.batch:
            k = s.pend_pos
            s.pend_pos += 1
            if Q[k] >= s.ub - EPS:
                continue
            s.refs.append(self._make_shape(s.owner, s.j, s.bps + (int(ii[k]),), L2[k], R2[k]))
            made += 1
        return made

    # ----------------------------------------------------------------- selection
    def _select_data(self, node):
        tried = False
        while True:
            best, bkey = None, None
            for a in node.acts:
                if a.solved:
                    continue
                key = (a.ht, a.lb)
                if bkey is None or key < bkey:
                    best, bkey = a, key
            if best is not None or not self._has_pending(node) or tried:
                return best
            self._materialise_data(node)
            tried = True

    def _has_pending(self, node):
        return node.pend.pending() if self.sim else node.pend_pos < node.pend[0].size

    def _commit_open(self, s):
        return (not s.commit_dead) and not (s.L.solved and s.R.solved)

    def _select_shape(self, s):
        tried = False
        while True:
            best, bkey = None, None
            if self._commit_open(s):
                best, bkey = "commit", (s.L.ht + s.R.ht, s.L.lb + s.R.lb)
            for r in s.refs:
                if r.solved:
                    continue
                key = (self.alpha + r.ht, self.alpha + r.lb)
                if bkey is None or key < bkey:
                    best, bkey = r, key
            if best == "commit":
                return self._and_child(s)
            if best is not None or len(s.pend) < 4 or s.pend_pos >= s.pend[0].size or tried:
                return best
            self._materialise_shape(s)
            tried = True

    def _and_child(self, s):
        L, R = s.L, s.R
        if L.solved:
            return R
        if R.solved:
            return L
        if self.and_rule == "worst_primal":
            return L if L.ub >= R.ub else R
        s.rr ^= 1
        return L if s.rr else R

    # ----------------------------------------------------------------- backpropagation
    def _update_data(self, node):
        if node.solved or not node.expanded:
            return
        c = self.split_cost
        if self.sim:
            node.pend.refresh(c, node.acts)
        ub, best = node.err, None
        for a in node.acts:
            if c + a.ub < ub - EPS:
                ub, best = c + a.ub, a
        node.ub, node.best = ub, best
        keep = [a for a in node.acts if a is best or c + a.lb < ub - EPS]
        node.acts = keep
        lb = min(ub, node.pend.min if self.sim else node.pend_min[node.pend_pos])
        ht = INF
        for a in keep:
            if not a.solved or a is best:
                lb = min(lb, c + a.lb)
                ht = min(ht, c + a.ht)
        node.lb = min(max(node.lb, lb), ub)
        node.ht = min(max(ht, node.lb), ub)
        if node.lb >= node.ub - EPS:
            node.solved = True
            node.acts = [best] if best is not None else []
            node.pos = node.cnts = node.pend = node.pend_min = node.srt = None
            self._remember(node)

    def _update_shape(self, s):
        if s.solved or not s.expanded:
            return
        a = self.alpha
        ub, best = INF, None
        if not s.commit_dead:
            ub, best = s.L.ub + s.R.ub, "commit"
        for r in s.refs:
            if a + r.ub < ub - EPS:
                ub, best = a + r.ub, r
        s.ub, s.best = ub, best
        s.refs = [r for r in s.refs if r is best or a + r.lb < ub - EPS]
        if best != "commit" and not s.commit_dead and s.L.lb + s.R.lb >= ub - EPS:
            s.commit_dead = True
            s.L = s.R = None
        lb = min(ub, s.pend_min[s.pend_pos])
        ht = INF
        if not s.commit_dead:
            lb = min(lb, s.L.lb + s.R.lb)
            ht = min(ht, s.L.ht + s.R.ht)
        for r in s.refs:
            lb = min(lb, a + r.lb)
            ht = min(ht, a + r.ht)
        s.lb = min(max(s.lb, lb), ub)
        s.ht = min(max(ht, s.lb), ub)
        if s.lb >= s.ub - EPS:
            s.solved = True
            if best == "commit":
                s.refs = []
            else:
                s.refs = [best]
                s.L = s.R = None
                s.commit_dead = True
            s.pend = s.pend_min = None
            s.pend_min = _pending(np.empty(0))

    # ----------------------------------------------------------------- main loop
    def run(self, time_limit=60.0, progress=False, max_expansions=None, seed_tree=None, time_offset=0.0):
        """Run AO* until the root is solved (proved optimal), the time limit or an interrupt.

        ``seed_tree`` (a :meth:`tree_spec` of a search over the same candidates, e.g. with ``K = 1``) is
        inserted into the graph first, so the incumbent starts at least as good as that tree.
        ``time_offset`` is added to the recorded times (time already spent by a warm start).
        """
        t0 = time.perf_counter() - time_offset
        n = self.X.shape[0]
        self.root = root = self._make_data(np.arange(n), self.D, 0)
        self.interrupted = False
        if seed_tree is not None and not root.solved:
            try:
                self._seed(root, seed_tree)
            except KeyboardInterrupt:
                self.interrupted = True
        self.trace = [(time.perf_counter() - t0, root.ub, root.lb, 0)]
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(desc="Literati", unit="exp")
        last = (root.ub, root.lb)
        try:
            while not root.solved and not self.interrupted:
                if time.perf_counter() - t0 > time_limit:
                    break
                if max_expansions is not None and self.n_expanded >= max_expansions:
                    break
                path = []
                node = root
                while True:
                    path.append(node)
                    if isinstance(node, _Data):
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
                    if isinstance(nd, _Data):
                        self._update_data(nd)
                    else:
                        self._update_shape(nd)
                if (root.ub, root.lb) != last:
                    last = (root.ub, root.lb)
                    self.trace.append((time.perf_counter() - t0, root.ub, root.lb, self.n_expanded))
                if bar is not None and self.n_expanded % 50 == 0:
                    bar.n = self.n_expanded
                    gap = root.ub - root.lb
                    bar.set_postfix_str(f"UB={root.ub:.2f} LB={root.lb:.2f} gap={gap:.2f}", refresh=True)
        except KeyboardInterrupt:
            self.interrupted = True
        finally:
            if bar is not None:
                bar.close()
        self.elapsed = time.perf_counter() - t0
        self.trace.append((self.elapsed, root.ub, root.lb, self.n_expanded))
        return self

    def _seed(self, node, spec):
        """Insert the path of a known tree (threshold or shape) into the graph and back up its bounds."""
        if spec[0] == "leaf" or node.solved:
            return
        _, j, thr, _, left, right = spec
        if not node.expanded:
            self._expand_data(node)
        t = node.cands[j]
        ii = np.searchsorted(t, thr)
        if np.any(ii >= t.size) or not np.array_equal(t[np.minimum(ii, t.size - 1)], thr) or len(thr) > self.K:
            return  # not in this search space (different candidates)
        bps = tuple(int(i) for i in ii)
        a = next((a for a in node.acts if a.j == j and a.bps[: len(bps)] == bps[: len(a.bps)]
                  and len(a.bps) <= len(bps)), None)
        if a is None or a.bps[0] != bps[0]:
            cnt = node.cnts[j]
            left_c = cnt[: bps[0] + 1].sum(axis=0)
            a = self._make_shape(node, j, bps[:1], left_c, cnt.sum(axis=0) - left_c)
            node.acts.append(a)
            if self.sim:
                node.pend.done[j][bps[0]] = True
        chain = [a]
        while len(a.bps) < len(bps) and not a.solved:
            if not a.expanded:
                self._expand_shape(a)
            nxt = next((r for r in a.refs if r.bps == bps[: len(a.bps) + 1]), None)
            if nxt is None:
                k = len(a.bps)
                sub = node.cnts[j][bps[k] + 1:].sum(axis=0)
                if k % 2 == 0:
                    L2, R2 = a.cntL - sub, a.cntR + sub
                else:
                    L2, R2 = a.cntL + sub, a.cntR - sub
                nxt = self._make_shape(node, j, bps[: k + 1], L2, R2)
                a.refs.append(nxt)
            a = nxt
            chain.append(a)
        if not a.solved:
            if not a.expanded:
                self._expand_shape(a)
            self._seed(a.L, left)
            self._seed(a.R, right)
        for s in reversed(chain):
            self._update_shape(s)
        self._update_data(node)

    # ----------------------------------------------------------------- the incumbent tree
    def tree_spec(self):
        """Best tree found: nested tuples ``("leaf", idx)`` / ``("split", j, breakpoints, idx, left, right)``."""
        return self._spec(self.root, self.root.idx)

    def _spec(self, node, idx):
        if node.best is None:
            return ("leaf", idx)
        s = node.best
        while isinstance(s.best, _Shape):
            s = s.best
        pos = np.searchsorted(s.thr, self.X[idx, s.j], side="left")
        right = (pos % 2) == 1
        if s.L is None or s.R is None:
            return ("split", s.j, s.thr, idx, ("leaf", idx[~right]), ("leaf", idx[right]))
        return ("split", s.j, s.thr, idx, self._spec(s.L, idx[~right]), self._spec(s.R, idx[right]))


def cart_spec(X, y, max_depth):
    """The greedy CART tree (Gini, depth <= ``max_depth``) as a tree spec for :meth:`LiteratiSearch.run`.

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


class LiteratiClassifier(ClassifierMixin, BaseTree):
    """Anytime optimal shape generalized tree (Literati, AO* over the incremental AND/OR graph).

    Minimises ``Err(T, D) + sum_v [lam + alpha K(f_v)]`` (eq. (1)) over trees of depth <= ``max_depth``
    whose nodes are shape functions with at most ``max_breakpoints`` breakpoints drawn from the candidate
    sets; with ``max_breakpoints=1`` this is the DPDT / optimal-threshold-tree space (Proposition 3).

    Parameters
    ----------
    max_depth : int
    max_breakpoints : int
        ``K``, the maximum number of breakpoints of a node's shape function.
    lam, alpha : float
        Per-node and per-breakpoint penalties, in misclassified training samples (``0, 0`` = errors only).
    time_limit : float
        Seconds; the best tree found so far is returned when it expires (and on ``KeyboardInterrupt``).
    candidates : {"cart", "all"}
        Adaptive local-CART thresholds (``cart_leaves[level]`` = ``B_d``) or every midpoint; over every
        midpoint the greedy CART tree is the first incumbent (:func:`cart_spec`).
    cart_leaves : tuple of int
        Leaves of the local CART per level from the root (last entry repeated).
    heuristic : {"cart", "admissible", "impurity", "primal"}
        Secondary estimate ``V~`` for the OR choice (the paper's ablation); ``"cart"`` is Literati.
    and_rule : {"round_robin", "worst_primal"}
        AND choice between the two children of a commit.
    exact_depth1 : bool
        Solve depth-1 data states exactly by the piecewise dynamic programme (same optimum, faster).
    similarity : bool
        With ``max_breakpoints=1`` and ``candidates="all"`` (and in the ``K = 1`` warm start of such a
        search): solve depth-2 data states exactly (:func:`~treebook.shape.depth2.best_depth2_all`) and bound
        the pending thresholds of a data state by those of its evaluated neighbours (similarity bounds), which
        order their materialisation by bisection.  Same optimum, far fewer states.
    cache_size : int
        Number of most recent solved states kept in the value cache.
    warm_start : float
        For ``max_breakpoints > 1``: share of ``time_limit`` first spent on the ``K = 1`` search, whose tree
        is inserted into the graph as the first incumbent (0 disables it).
    random_state : int or None
        Seeds the local CART fits (tie breaking).
    progress : bool
        Show a progress line (upper bound, lower bound, gap, states expanded).

    Attributes
    ----------
    tree_, objective_, lower_bound_, proved_optimal_, trace_ (array of rows ``time, upper, lower,
    expansions``), n_expanded_, classes_, n_features_in_.
    """

    def __init__(self, max_depth=3, max_breakpoints=3, lam=0.0, alpha=0.0, time_limit=60.0,
                 candidates="cart", cart_leaves=DEFAULT_CART_LEAVES, heuristic="cart", and_rule="round_robin",
                 exact_depth1=True, similarity=True, cache_size=10_000, warm_start=0.25, random_state=None,
                 progress=False):
        self.max_depth = max_depth
        self.max_breakpoints = max_breakpoints
        self.lam = lam
        self.alpha = alpha
        self.time_limit = time_limit
        self.candidates = candidates
        self.cart_leaves = cart_leaves
        self.heuristic = heuristic
        self.and_rule = and_rule
        self.exact_depth1 = exact_depth1
        self.similarity = similarity
        self.cache_size = cache_size
        self.warm_start = warm_start
        self.random_state = random_state
        self.progress = progress

    def _check_params(self):
        if not isinstance(self.max_depth, (int, np.integer)) or self.max_depth < 0:
            raise ValueError(f"max_depth must be a non-negative int; got {self.max_depth!r}")
        if not isinstance(self.max_breakpoints, (int, np.integer)) or self.max_breakpoints < 1:
            raise ValueError(f"max_breakpoints must be an int >= 1; got {self.max_breakpoints!r}")
        for name in ("lam", "alpha"):
            v = getattr(self, name)
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0; got {v!r}")
        if not (self.time_limit > 0):
            raise ValueError(f"time_limit must be > 0; got {self.time_limit!r}")
        if self.candidates not in ("cart", "all"):
            raise ValueError(f"candidates must be 'cart' or 'all'; got {self.candidates!r}")
        if self.heuristic not in ("cart", "admissible", "impurity", "primal"):
            raise ValueError(f"heuristic must be 'cart', 'admissible', 'impurity' or 'primal'; got {self.heuristic!r}")
        if self.and_rule not in ("round_robin", "worst_primal"):
            raise ValueError(f"and_rule must be 'round_robin' or 'worst_primal'; got {self.and_rule!r}")
        for name in ("exact_depth1", "similarity"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False; got {getattr(self, name)!r}")
        if not (0 <= self.warm_start < 1):
            raise ValueError(f"warm_start must be in [0, 1); got {self.warm_start!r}")
        cl = np.atleast_1d(np.asarray(self.cart_leaves))
        if cl.size == 0 or np.any(cl < 2):
            raise ValueError(f"cart_leaves must be a non-empty sequence of ints >= 2; got {self.cart_leaves!r}")

    def fit(self, X, y, max_expansions=None):
        """Search (Algorithm 1) until proof, ``time_limit`` or interrupt; keep the best tree found."""
        self._check_params()
        self._record_features(X)
        X, y = check_X_y(X, y)
        self.classes_, y_enc = check_classification_targets(y)
        self.n_features_in_ = X.shape[1]
        self.n_classes_ = self.classes_.size
        rs = self.random_state
        search = LiteratiSearch(
            X, y_enc, self.n_classes_, max_depth=self.max_depth, max_breakpoints=self.max_breakpoints,
            lam=self.lam, alpha=self.alpha, candidates=self.candidates,
            cart_leaves=tuple(np.atleast_1d(self.cart_leaves)), heuristic=self.heuristic,
            and_rule=self.and_rule, exact_depth1=self.exact_depth1, similarity=self.similarity,
            cache_size=self.cache_size, random_state=0 if rs is None else int(rs) if isinstance(rs, (int, np.integer)) else 0,
        )
        spent, warm = 0.0, None
        # over every midpoint the greedy CART tree is a K = 1 tree of the search space: the first incumbent
        seed_tree = cart_spec(X, y_enc, self.max_depth) if self.candidates == "all" and self.max_depth else None
        if self.warm_start and self.max_breakpoints > 1:
            # warm start: a K = 1 search on a share of the time; its tree is feasible here (Proposition 3)
            warm = LiteratiSearch(
                X, y_enc, self.n_classes_, max_depth=self.max_depth, max_breakpoints=1, lam=self.lam + self.alpha,
                alpha=0.0, candidates=self.candidates, cart_leaves=tuple(np.atleast_1d(self.cart_leaves)),
                heuristic=self.heuristic, and_rule=self.and_rule, exact_depth1=self.exact_depth1,
                similarity=self.similarity, cache_size=self.cache_size, random_state=search.random_state,
            ).run(time_limit=float(self.time_limit) * float(self.warm_start), max_expansions=max_expansions,
                  seed_tree=seed_tree)
            seed_tree, spent = warm.tree_spec(), warm.elapsed
        if warm is not None and warm.interrupted:
            search.run(time_limit=spent, seed_tree=seed_tree, time_offset=spent)
            search.interrupted = True
        else:
            search.run(time_limit=float(self.time_limit), progress=self.progress, max_expansions=max_expansions,
                       seed_tree=seed_tree, time_offset=spent)
        if warm is not None:
            lb0 = min(search.root.err, search.split_cost)  # the root's admissible V, known from the start
            head = [(t, u, min(lb0, u), e) for t, u, _, e in warm.trace]
            search.trace = [r for r in head if r[1] >= search.trace[0][1]] + search.trace
        spec = search.tree_spec()
        self.tree_ = spec_to_tree(spec, y_enc, self.n_classes_)
        self.objective_ = float(search.root.ub)
        self.lower_bound_ = float(search.root.lb)
        self.proved_optimal_ = bool(search.root.solved)
        self.trace_ = np.asarray(search.trace, dtype=float)
        self.n_expanded_ = int(search.n_expanded)
        self.fit_time_ = float(search.elapsed)
        self.interrupted_ = bool(search.interrupted)
        self.train_errors_ = int(np.sum(self.predict(X) != y))
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class fractions of the training samples in the reached leaf."""
        return self.tree_.predict(self._validate_X_predict(X))

    def predict(self, X) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    @property
    def n_breakpoints_(self) -> int:
        """Total breakpoints of the fitted tree (the ``alpha`` part of the penalty)."""
        check_is_fitted(self, "tree_")
        return int(sum(s.n_breakpoints for s in self.tree_.splits if s is not None))

