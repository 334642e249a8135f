"""The eForest baseline (Feng & Zhou 2018): an axis-parallel unsupervised forest decoded by the
Maximum Compatibility Rule (MCR).

A path of axis-parallel splits confines every feature to an interval; MCR intersects the intervals of all
trees' paths (the maximal-compatible rule). eForest's own decoder (``decode(..., sample_method='minimal')``
in ``eforest/forest.py`` of its authors' code, with ``null_value=0``) then sets every feature to the
*largest lower bound* any path puts on it — the threshold of a right branch, ``x_f > t`` in scikit-learn's
trees — and to 0 where no path bounds it from below; upper bounds are not used, so the point may leave the
MCR box (and then re-encodes to other leaves). That rule is :class:`EForestEmbedding`'s default
(``point="minimal"``); the OF-AE paper describes the same rule ("taking the maximum bound of the feature
values" of the right branches).

For axis-parallel trees the l1 decoder of OF-AE returns the point of MCR's box nearest to 0 (the objective
is separable, so each coordinate is the point of its interval nearest to 0; ``point="l1"``), so MCR with that
point *is* the l1 decoder there; for oblique splits the constraints couple features and no per-feature rule
applies. ``point="mid"`` (the centre of the box within the training range) is another variant of ours.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from treebook.oblique.decode import report_infeasible
from treebook.oblique.forest import ObliqueForestEmbedding
from treebook.validation import real_interval

__all__ = ["EForestEmbedding", "mcr_bounds"]


def _split_bounds(forest, g, margin):
    """Per-sample interval ``[lower, upper]`` that the splits of the paths ``g`` (global node ids, one per
    tree) put on every feature, from ``(-inf, inf)``; bounds moved inward by ``margin (1 + |t|)``."""
    W = forest.weights_
    feat = np.argmax(np.abs(W), axis=1)
    if not np.allclose(np.abs(W[np.arange(len(W)), feat]), 1.0) or np.count_nonzero(W) != len(W):
        raise ValueError("MCR needs an axis-parallel forest (one unit weight per split)")
    n, p = len(g), W.shape[1]
    lower = np.full((n, p), -np.inf)
    upper = np.full((n, p), np.inf)
    rows = forest.path_rows_[g].reshape(n, -1)
    signs = forest.path_signs_[g].reshape(n, -1)
    samp = np.repeat(np.arange(n), rows.shape[1])
    rows, signs = rows.ravel(), signs.ravel()
    keep = rows >= 0
    samp, rows, signs = samp[keep], rows[keep], signs[keep]
    f = feat[rows]
    t = forest.bias_[rows] * np.sign(W[rows, f])
    # a negative unit weight flips the inequality's side
    eff = signs * np.sign(W[rows, f])
    r = eff > 0
    t = t + np.where(r, 1.0, -1.0) * margin * (1.0 + np.abs(t))
    np.maximum.at(lower, (samp[r], f[r]), t[r])
    np.minimum.at(upper, (samp[~r], f[~r]), t[~r])
    return lower, upper


@validate_params(
    {"forest": [HasMethods(["check_codes"])], "codes": ["array-like"],
     "margin": [real_interval(0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def mcr_bounds(forest, codes, margin=0.0):
    """Per-sample feature intervals ``[lower, upper]`` of the intersected path boxes (axis-parallel forest).

    Right branches (``x_f >= t``) raise ``lower``; left branches (``x_f < t``) lower ``upper``; both start
    from the forest's box. ``margin`` moves every split bound inward by ``margin (1 + |t|)``, as the LP
    decoder does, so that a point of the box re-encodes to the same leaves. Vectorised over samples with
    ``np.maximum.at`` / ``np.minimum.at``.
    """
    g = forest.check_codes(codes)
    lo, hi = forest._box
    lower, upper = _split_bounds(forest, g, margin)
    return np.maximum(lower, lo), np.minimum(upper, hi)


def _infeasible_rows(forest, g):
    """Rows whose MCR cell is empty: ``max(lower, lo) <= x < upper`` and ``x <= hi`` has no solution for
    some feature (left branches are strict)."""
    lo, hi = forest._box
    lower, upper = _split_bounds(forest, g, 0.0)
    lb = np.maximum(lower, lo)
    return np.any((lb >= upper) | (lb > hi), axis=1)


class EForestEmbedding(ObliqueForestEmbedding):
    """eForest: RandomTreesEmbedding-style forest (``tree="random"``) or CART on a random target
    (``tree="axis"``), decoded by MCR.

    ``point`` chooses the decoded point: ``"minimal"`` (eForest's own decoder, the default: every feature
    is the largest lower bound over all trees' paths, 0 where there is none, upper bounds ignored; clipped
    into ``box`` when one is given, which eForest has not), ``"l1"`` (the point of the MCR box nearest to 0,
    ``clip(0, lower, upper)``: the l1 decode of an axis-parallel code), ``"mid"`` (centre of the MCR box
    intersected with each feature's training range).

    The other parameters are those of :class:`ObliqueForestEmbedding`: ``split_rule`` applies to
    ``tree="axis"``, ``margin`` moves every bound of the MCR box inward for ``"l1"`` and ``"mid"`` (see
    :func:`mcr_bounds`; ``"minimal"`` uses the thresholds themselves, as eForest does). There is no
    ``direction``, ``rotation`` or ``householder`` (axis-parallel trees have none), ``solver`` or ``n_jobs``
    (MCR solves no linear program), nor ``random_threshold`` (eForest's random splits draw their threshold
    uniformly in the node range). ``target="shared"`` as in scikit-learn's RandomTreesEmbedding, eForest's
    unsupervised forest (random splits ignore the target; CART on it, ``tree="axis"``, does not).
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in ObliqueForestEmbedding._parameter_constraints.items()
           if k not in ("direction", "solver", "n_jobs", "rotation", "householder", "random_threshold")},
        "tree": [StrOptions({"random", "axis"})],
        "point": [StrOptions({"minimal", "l1", "mid"})],
    }

    def __init__(self, tree="random", n_estimators=100, max_depth=None, max_samples=1.0, max_features=1.0,
                 bootstrap=False, min_samples_leaf=1, box=None, point="minimal", random_state=None,
                 progress=False, split_rule="best", target="shared", margin=1e-6, on_infeasible="warn"):
        # no ``direction`` (axis-parallel trees have none), ``solver`` or ``n_jobs`` (MCR solves no LP)
        self.tree = tree
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.min_samples_leaf = min_samples_leaf
        self.split_rule = split_rule
        self.target = target
        self.box = box
        self.margin = margin
        self.point = point
        self.on_infeasible = on_infeasible
        self.random_state = random_state
        self.progress = progress

    def _fit(self, X):
        super()._fit(X)
        self.feature_range_ = (X.min(axis=0), X.max(axis=0))

    def inverse_transform(self, codes, return_info=False):
        """MCR decoding of a code matrix (see ``point``). ``info`` holds the MCR box (``lower``,
        ``upper``, with the margin), the boolean mask ``infeasible`` of the rows whose MCR cell is empty
        (no point reaches their leaves together: :class:`~treebook.oblique.decode.InfeasibleCodeWarning`,
        or ``ValueError`` with ``on_infeasible="raise"``) and ``n_failed``, the number of those rows."""

        check_is_fitted(self, "estimators_")
        g = self.check_codes(codes)
        lower, upper = mcr_bounds(self, codes, margin=self.margin)
        if self.point == "minimal":
            lb, _ = _split_bounds(self, g, 0.0)
            lo, hi = self._box
            X = np.clip(np.where(np.isfinite(lb), lb, 0.0), lo, hi)
        elif self.point == "l1":
            X = np.minimum(np.maximum(0.0, lower), upper)
        else:
            # MCR box intersected with the training range; if that is empty (a sample beyond the training
            # range), an unbounded end is replaced by the training range, widened past the other end
            lo_r, hi_r = self.feature_range_
            L = np.maximum(lower, lo_r)
            U = np.minimum(upper, hi_r)
            span = np.maximum(hi_r - lo_r, 1e-12)
            lo_eff = np.where(np.isfinite(lower), lower, np.minimum(lo_r, upper - span))
            hi_eff = np.where(np.isfinite(upper), upper, np.maximum(hi_r, lower + span))
            X = np.where(L < U, 0.5 * (L + U),
                         np.where((L == U) & (L < upper), L, 0.5 * (lo_eff + hi_eff)))
        bad = _infeasible_rows(self, g)
        info = {"lower": lower, "upper": upper, "infeasible": bad, "n_failed": int(bad.sum()),
                "status": np.where(bad, "infeasible", "optimal")}
        self.decode_info_ = info
        self.infeasible_rows_ = np.flatnonzero(bad)
        report_infeasible(info, self.on_infeasible)
        return (X, info) if return_info else X
