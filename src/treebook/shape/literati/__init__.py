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

Two choices of the search are ours where the paper is silent.  Candidate breakpoints (``candidates="cart"``)
are the thresholds of a local CART fitted on the state's samples, with ``B_d`` leaves at distance ``d``
from the root (:data:`DEFAULT_CART_LEAVES` = 32, 16, 8, 8, 4, 4, 4; DPDT's default is 8, 3, 2, so the
``K = 1`` search equals DPDT's space only with equal ``B_d``).  A state materialises its actions lazily,
eight at a time, best single split first and then by the children's weighted Gini impurity, and drops those
whose bound meets its upper bound (:mod:`treebook.shape.literati.queue`).

The package: :mod:`~treebook.shape.literati.states` (the two kinds of state),
:mod:`~treebook.shape.literati.queue` (pending actions), :mod:`~treebook.shape.literati.search` (the AO*
search), :mod:`~treebook.shape.literati.specs` (tree specs) and :mod:`~treebook.shape.literati.estimator`
(:class:`LiteratiClassifier`).
"""

from .estimator import LiteratiClassifier
from .search import AND_RULES, DEFAULT_CART_LEAVES, HEURISTICS, LiteratiSearch
from .specs import cart_spec, spec_objective, spec_to_tree

__all__ = ["AND_RULES", "DEFAULT_CART_LEAVES", "HEURISTICS", "LiteratiClassifier", "LiteratiSearch", "cart_spec",
           "spec_objective", "spec_to_tree"]
