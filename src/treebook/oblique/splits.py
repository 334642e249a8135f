"""Vectorised split search shared by the oblique trees (MSE criterion).

Every search works on a matrix ``Z`` (n_samples x n_columns) of candidate projections of the node's
samples; a split sends a sample to the RIGHT child iff its projection is ``>= threshold``, the convention
of :class:`treebook.tree.HyperplaneSplit`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["best_column_split"]


def best_column_split(Z, y, min_samples_leaf=1, rule="best"):
    """Best split over the columns of ``Z`` (regression: the rule decides candidates and criterion).

    Parameters
    ----------
    Z : ndarray (n, q)
        Projections of the node's samples.
    y : ndarray (n,)
        Regression target.
    min_samples_leaf : int
        Minimum number of samples in each child.
    rule : {"best", "mean"}
        ``"best"`` scans every midpoint between consecutive distinct values (CART) and scores a split by
        the children's total squared error; ``"mean"`` is the OF-AE authors' split search (their
        ``MeanSegmentor`` and ``MSE`` classes in ``modules/segmentor.py``): a single threshold per column,
        the column's mean over the node (``x < mean`` goes left), scored by the size-weighted standard
        deviation of the children's targets ``(n_L sd_L + n_R sd_R) / n`` — their impurity class is called
        ``MSE`` but computes standard deviations, not variances. Ties go to the first column. A column whose
        spread is below ``1e-12`` times the largest ``|Z|`` counts as constant and offers no split (their
        code would split it by its rounding noise, e.g. a reflected copy of a pixel constant in the node,
        and the decoder could then only return points on that split's boundary).

    Returns
    -------
    (column, threshold, cost) or None
        ``cost`` is the children's impurity under the rule's criterion (``"best"``: the total squared
        error ``n_L Var_L + n_R Var_R``; ``"mean"``: the weighted standard deviation above); None if no
        column admits a valid split.
    """
    Z = np.asarray(Z, dtype=float)
    y = np.asarray(y, dtype=float)
    n, q = Z.shape
    if n < 2 * min_samples_leaf or q == 0:
        return None
    if rule == "mean":
        thr = Z.mean(axis=0)
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
        # offers no split: the mean would separate the samples by their rounding errors alone
        scale = float(np.abs(Z).max()) if Z.size else 0.0
        valid &= (Z.max(axis=0) - Z.min(axis=0)) > 1e-12 * scale
        if not valid.any():
            return None
        cost = np.where(valid, cost, np.inf)
        j = int(np.argmin(cost))
        return j, float(thr[j]), float(cost[j])
    if rule != "best":
        raise ValueError(f"rule must be 'best' or 'mean', got {rule!r}")
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
