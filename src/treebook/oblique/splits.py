"""The split search of the oblique trees (squared-error regression), in the core's terms.

A node is searched in a matrix ``Z`` (n_samples x n_columns) of candidate projections of its samples ``X``:
the samples themselves (CART), next to their Householder reflection (HHCART), or rotated (RandCART); column
``j`` of ``Z`` is the projection on a normal ``w_j``. A split rule picks a column and a threshold, and
:func:`projected_split` returns the pick as the core's :class:`~treebook.tree.grow.Candidate`: an
:class:`ObliqueSplit` (a :class:`~treebook.tree.HyperplaneSplit`, ``x . w_j >= threshold`` goes right), the
children's total squared error as its cost, and the node's samples routed by that hyperplane itself, so
that the training samples and ``Tree.apply`` agree exactly. Each rule is one column scan:

* ``"best"`` (:func:`_best_scan`) — CART's: every midpoint between consecutive distinct values of every
  column, scored by the children's total squared error.
* ``"mean"`` (:func:`_mean_scan`) — the OF-AE authors' (their ``MeanSegmentor`` and ``MSE`` classes in
  ``modules/segmentor.py``): one threshold per column, the column's mean over the node.
* ``"uniform"`` (:func:`_uniform_scan`) — a variant of ours for the chapter's threshold experiment: one
  threshold per column drawn uniformly in the column's range over the node (the threshold of
  RandomTreesEmbedding's random splits), the columns scored as by ``"mean"``. It needs a random generator.

The ``"best"`` scan is not the core's :func:`~treebook.tree.grow.best_threshold_split`, although both find
the exhaustive squared-error split. With ``S`` the sums and ``Q`` the sums of squares of the targets, the
core computes a cost as ``(Q_L - S_L^2 / n_L) + (Q_R - S_R^2 / n_R)`` and breaks ties by the first column,
then the first cut, with cuts between values more than :data:`~treebook.tree.grow.FEATURE_THRESHOLD`
apart; this scan computes ``Q - S_L^2 / n_L - S_R^2 / n_R``, breaks ties by the first cut, then the first
column, and cuts between values more than ``1e-12`` apart relative to their size. In small nodes several columns often give the same partition, whose costs then
differ by rounding alone, and the two searches pick different columns: the chapter's trees are this scan's.
"""

from __future__ import annotations

import numpy as np

from treebook.tree.grow import Candidate
from treebook.tree.splits import HyperplaneSplit

__all__ = ["SPLIT_RULES", "ObliqueSplit", "hyperplane_candidate", "projected_split"]


class ObliqueSplit(HyperplaneSplit):
    """A :class:`~treebook.tree.HyperplaneSplit` (``x . weights >= bias`` goes right) that remembers how it
    was found: HHCART's direction ``d`` at the node and the coefficient ``beta`` of ``d`` in the normal
    (``weights = sparse part + beta d``; ``direction`` None and ``dir_coef`` 0 for axis-parallel and RandCART
    splits). The low-rank decoder uses them (:func:`treebook.oblique.decode.lowrank_structure`)."""

    def __init__(self, weights, bias: float, direction=None, dir_coef: float = 0.0):
        super().__init__(weights, bias)
        self.direction = None if direction is None else np.asarray(direction, dtype=float).ravel()
        self.dir_coef = float(dir_coef)

    def in_features(self, features, n_features: int) -> ObliqueSplit:
        """The same split for samples of ``n_features`` features, of which it reads the columns ``features``
        (its weights and direction are zero on the others)."""
        w = np.zeros(n_features)
        w[features] = self.weights
        d = None
        if self.direction is not None:
            d = np.zeros(n_features)
            d[features] = self.direction
        return ObliqueSplit(w, self.bias, d, self.dir_coef)


def _best_scan(Z, y, min_samples_leaf=1):
    """CART's scan: every midpoint between consecutive distinct values of every column of ``Z``, scored by
    the children's total squared error ``n_L Var_L + n_R Var_R``; ties go to the first cut (fewest samples
    on the left), then the first column. Two values count as distinct when they differ by more than
    ``1e-12`` times the larger of 1 and their magnitude. Returns ``(column, threshold, cost)`` (``Z[:, column]
    >= threshold`` goes right) or None when no column admits a cut leaving ``min_samples_leaf`` samples on
    each side."""
    n, q = Z.shape
    order = np.argsort(Z, axis=0, kind="stable")
    Zs = np.take_along_axis(Z, order, axis=0)
    ys = y[order]
    cs = np.cumsum(ys, axis=0)[:-1]  # sums of the left part for split after position i
    n_l = np.arange(1, n, dtype=float)[:, None]
    n_r = n - n_l
    total = y.sum()
    ss = float(y @ y)
    cost = ss - cs**2 / n_l - (total - cs) ** 2 / n_r
    gap = Zs[1:] - Zs[:-1]
    valid = gap > 1e-12 * np.maximum(1.0, np.abs(Zs[1:]))
    k = np.arange(1, n)[:, None]
    valid &= (k >= min_samples_leaf) & (n - k >= min_samples_leaf)
    if not valid.any():
        return None
    cost = np.where(valid, cost, np.inf)
    flat = int(np.argmin(cost))
    i, j = divmod(flat, q)
    thr = 0.5 * (Zs[i, j] + Zs[i + 1, j])
    if not (thr > Zs[i, j]):  # midpoint rounded onto the left value
        thr = Zs[i + 1, j]
    return int(j), float(thr), float(max(cost[i, j], 0.0))


def _mean_scan(Z, y, min_samples_leaf=1):
    """The OF-AE authors' scan: a single threshold per column of ``Z``, the column's mean over the node
    (``x < mean`` goes left), scored by the size-weighted standard deviation of the children's targets
    ``(n_L sd_L + n_R sd_R) / n`` — their impurity class is called ``MSE`` but computes standard deviations,
    not variances. Ties go to the first column. A column whose spread is below ``1e-12`` times the largest
    ``|Z|`` counts as constant and offers no split (their code would split it by its rounding noise, e.g. a
    reflected copy of a pixel constant in the node, and the decoder could then only return points on that
    split's boundary). Returns ``(column, threshold, cost)`` with the weighted standard deviation as
    ``cost``, or None when no column admits a split leaving ``min_samples_leaf`` samples on each side."""
    return _threshold_scan(Z, y, Z.mean(axis=0), min_samples_leaf)


def _threshold_scan(Z, y, thr, min_samples_leaf=1):
    """The scan of :func:`_mean_scan` with the thresholds ``thr`` (one per column of ``Z``) given."""
    n = Z.shape[0]
    right = Z >= thr
    n_r = right.sum(axis=0)
    n_l = n - n_r
    s_r = y @ right
    s_l = y.sum() - s_r
    with np.errstate(divide="ignore", invalid="ignore"):
        m_r, m_l = s_r / n_r, s_l / n_l
        # two passes (deviations from each child's mean), so a constant child has exactly sd 0
        dev = np.where(right, y[:, None] - m_r[None, :], y[:, None] - m_l[None, :]) ** 2
        q_r = (dev * right).sum(axis=0)
        q_l = (dev * ~right).sum(axis=0)
        sd_r = np.sqrt(np.maximum(q_r, 0.0) / n_r)
        sd_l = np.sqrt(np.maximum(q_l, 0.0) / n_l)
        cost = (n_l * sd_l + n_r * sd_r) / n
    valid = (n_l >= min_samples_leaf) & (n_r >= min_samples_leaf)
    # a column constant up to rounding (a reflected copy of a constant pixel carries ~1e-38 of noise)
    # offers no split: its threshold would separate the samples by their rounding errors alone
    scale = float(np.abs(Z).max()) if Z.size else 0.0
    valid &= (Z.max(axis=0) - Z.min(axis=0)) > 1e-12 * scale
    if not valid.any():
        return None
    cost = np.where(valid, cost, np.inf)
    j = int(np.argmin(cost))
    return j, float(thr[j]), float(cost[j])


def _uniform_scan(Z, y, min_samples_leaf=1, rng=None):
    """One threshold per column of ``Z`` drawn uniformly in ``[min, max)`` of the column over the node (moved
    to ``max`` if the draw rounds onto ``min``, so both sides of a non-constant column are non-empty), the
    columns scored as :func:`_mean_scan` scores them (weighted standard deviation of the targets; constant
    columns offer no split). ``rng`` is a numpy ``Generator``; one uniform number is drawn per column."""
    if rng is None:
        raise ValueError("the 'uniform' split rule needs a random generator")
    mn, mx = Z.min(axis=0), Z.max(axis=0)
    thr = rng.uniform(mn, mx)
    thr = np.where(thr > mn, thr, mx)
    return _threshold_scan(Z, y, thr, min_samples_leaf)


_SCANS = {"best": _best_scan, "mean": _mean_scan, "uniform": _uniform_scan}
#: the split rules, by name
SPLIT_RULES = tuple(_SCANS)


def hyperplane_candidate(X, y, split: HyperplaneSplit) -> Candidate | None:
    """``split`` as a :class:`~treebook.tree.grow.Candidate` for the node ``(X, y)``: the samples routed by the
    split itself, the children's total squared error as the cost; None when a child would be empty."""
    right = X @ split.weights >= split.bias
    n_r = int(right.sum())
    if n_r == 0 or n_r == len(right):
        return None
    y_r, y_l = y[right], y[~right]
    cost = float(len(y_r) * y_r.var() + len(y_l) * y_l.var())
    return Candidate(split, cost, right)


def projected_split(X, y, Z, split_of, min_samples_leaf, rule, rng=None) -> Candidate | None:
    """The split of the node ``(X, y)`` that ``rule`` picks among the columns of its projections ``Z``:
    ``split_of(column, threshold)`` is the :class:`ObliqueSplit` of a column of ``Z`` in the coordinates of
    ``X``. None when the rule finds no column to split (see the scans) or the split leaves a child empty.
    ``rng`` (a numpy ``Generator``) is used by the ``"uniform"`` rule only."""
    if rule == "uniform":
        found = _uniform_scan(Z, y, min_samples_leaf, rng)
    else:
        found = _SCANS[rule](Z, y, min_samples_leaf)
    if found is None:
        return None
    return hyperplane_candidate(X, y, split_of(found[0], found[1]))

