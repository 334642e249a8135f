"""Vectorised split search shared by the oblique trees (MSE criterion).

Every search works on a matrix ``Z`` (n_samples x n_columns) of candidate projections of the node's
samples; a split sends a sample to the RIGHT child iff its projection is ``>= threshold``, the convention
of :class:`treebook.tree.HyperplaneSplit`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["best_column_split"]


def best_column_split(Z, y, min_samples_leaf=1, rule="best"):
    """Best MSE split over the columns of ``Z``.

    Parameters
    ----------
    Z : ndarray (n, q)
        Projections of the node's samples.
    y : ndarray (n,)
        Regression target.
    min_samples_leaf : int
        Minimum number of samples in each child.
    rule : {"best", "mean"}
        ``"best"`` scans every midpoint between consecutive distinct values (CART);
        ``"mean"`` offers a single threshold per column, the column's mean over the node.

    Returns
    -------
    (column, threshold, cost) or None
        ``cost`` is the children's total squared error ``n_L Var_L + n_R Var_R``; None if no
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
        ss = float(y @ y)
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = ss - np.where(n_l > 0, s_l**2 / np.maximum(n_l, 1), 0.0) - np.where(
                n_r > 0, s_r**2 / np.maximum(n_r, 1), 0.0)
        valid = (n_l >= min_samples_leaf) & (n_r >= min_samples_leaf)
        if not valid.any():
            return None
        cost = np.where(valid, cost, np.inf)
        j = int(np.argmin(cost))
        return j, float(thr[j]), float(max(cost[j], 0.0))
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
