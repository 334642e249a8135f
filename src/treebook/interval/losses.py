"""Hinge losses for interval regression (Drouin, Hocking & Laviolette 2017, equations (1)-(2)).

A target interval ``[lower, upper]`` (either limit may be infinite, not both) and a prediction ``mu``
give the loss ``phi(-mu + lower + margin) + phi(mu - upper + margin)`` with the linear hinge
``phi(x) = (x)_+`` or the squared hinge ``phi(x) = (x)_+^2``; an infinite limit contributes nothing.

This module also holds the validation shared by the solver, the trees and the baselines
(:data:`LOSSES`, :func:`check_loss`, :func:`check_margin`, :func:`check_intervals`,
:func:`check_X_intervals`); of the rest of the package it imports only :mod:`treebook.validation`, and
:mod:`treebook.interval.solver` imports from it.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ..validation import (
    check_array,
    check_y_given,
    real_interval,
)

__all__ = ["LOSSES", "check_intervals", "check_loss", "check_margin", "hinge", "interval_loss", "total_loss"]

#: the two hinges of equation (1): ``(x)_+`` and ``(x)_+^2``
LOSSES = ("linear", "squared")

#: scikit-learn ``_parameter_constraints`` of ``loss`` and ``margin``, shared by the interval estimators
LOSS_CONSTRAINTS = {"loss": [StrOptions(set(LOSSES))], "margin": [real_interval(0.0)]}


def check_loss(loss) -> str:
    """Return ``loss`` if it names a hinge of :data:`LOSSES`, else raise ``ValueError``."""
    if not isinstance(loss, str) or loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def check_margin(margin) -> float:
    """Validate a margin (a finite non-negative number); returns it as a float."""
    try:
        margin = float(margin)
    except (TypeError, ValueError):
        raise ValueError(f"margin must be a number, got {margin!r}") from None
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be finite and >= 0, got {margin}")
    return margin


def _rows(idx, limit=10):
    idx = np.asarray(idx)
    more = f" and {idx.size - limit} more" if idx.size > limit else ""
    return ", ".join(str(i) for i in idx[:limit]) + more


def check_intervals(y, *, name="y", min_samples=1):
    """Validate interval targets: an (n, 2) float array of ``[lower, upper]``.

    Raises ``ValueError`` (naming the rows) on a wrong shape, NaN, ``lower > upper``, a lower limit of
    ``+inf`` or an upper limit of ``-inf``, or both limits infinite.
    """
    if y is None:
        raise ValueError(f"{name} is None, but interval targets (an (n_samples, 2) array of [lower, upper] "
                         "limits) are required")
    if np.iscomplexobj(np.asarray(y)):
        raise ValueError(f"Complex data not supported: {name} has complex values")
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if y.ndim != 2 or y.shape[1] != 2:
        raise ValueError(f"{name} must be an (n_samples, 2) array of [lower, upper] limits; got shape {y.shape}")
    if y.shape[0] < min_samples:
        raise ValueError(f"{name} has {y.shape[0]} samples; at least {min_samples} required")
    nan = np.isnan(y).any(axis=1)
    if nan.any():
        raise ValueError(f"{name} contains NaN in rows {_rows(np.flatnonzero(nan))}")
    bad = (y[:, 0] == np.inf) | (y[:, 1] == -np.inf)
    if bad.any():
        raise ValueError(f"{name} has a lower limit of +inf or an upper limit of -inf in rows "
                         f"{_rows(np.flatnonzero(bad))}")
    both = np.isinf(y).all(axis=1)
    if both.any():
        raise ValueError(f"{name} has both limits infinite (no information) in rows {_rows(np.flatnonzero(both))}")
    rev = y[:, 0] > y[:, 1]
    if rev.any():
        raise ValueError(f"{name} has lower > upper in rows {_rows(np.flatnonzero(rev))}")
    return y


def check_X_intervals(X, y):
    """Validate a feature matrix and its interval targets together (the estimators' ``fit``): ``X`` as
    :func:`treebook.validation.check_array` checks it, ``y`` as :func:`check_intervals`, and one target per
    row."""
    check_y_given(y, "this interval estimator")
    X = check_array(X)
    y = check_intervals(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    return X, y


#: largest magnitude of ``n * max|limit|`` (linear hinge) or ``sqrt(n) * max|limit|`` (squared hinge) for
#: which the solver's sums of hinge coefficients cannot overflow
MAX_LIMIT_SIZE = 2.0 ** 500


def limit_size(y, margin, *, squared: bool, weights=None) -> tuple[float, float]:
    """``(max_abs, factor)``: the largest finite breakpoint magnitude of intervals ``y`` at ``margin``, and the
    factor by which the solver's sums may exceed it (the total weight; its square root for the squared
    hinge, whose coefficients grow as the square of the limits)."""
    finite = y[np.isfinite(y)]
    max_abs = float(np.abs(finite).max()) + float(margin) if finite.size else 0.0
    total = float(y.shape[0]) if weights is None else float(np.sum(weights))
    return max_abs, (np.sqrt(total) if squared else total)


def check_limit_size(y, margin, *, squared: bool, name: str = "y") -> None:
    """Refuse interval limits so large that the hinge-loss sums of a tree's nodes would overflow."""
    max_abs, factor = limit_size(y, margin, squared=squared)
    if max_abs > 0 and np.log2(max_abs) + np.log2(max(factor, 1.0)) > np.log2(MAX_LIMIT_SIZE):
        hinge_name = "squared" if squared else "linear"
        raise ValueError(f"{name} has limits up to {max_abs:.3g}: with {y.shape[0]} intervals the {hinge_name} "
                         "hinge losses of a node overflow; divide y (and the margin) by a constant")


def hinge(x, loss="linear"):
    """The hinge ``phi(x) = l((x)_+)`` with ``l(x) = x`` (linear) or ``x^2`` (squared)."""
    check_loss(loss)
    xp = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    return xp if loss == "linear" else xp * xp


def interval_loss(mu, y, *, loss="linear", margin=0.0):
    """Per-sample hinge loss of predictions ``mu`` (scalar or (n,)) on targets ``y`` (n, 2); equation (1).

    ``phi(-mu + lower + margin) + phi(mu - upper + margin)``; infinite limits contribute 0.
    """
    y = np.asarray(y, dtype=np.float64)
    margin = check_margin(margin)
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        lo = hinge(-mu + y[:, 0] + margin, loss)
        hi = hinge(mu - y[:, 1] + margin, loss)
    lo = np.where(np.isfinite(y[:, 0]), lo, 0.0)
    hi = np.where(np.isfinite(y[:, 1]), hi, 0.0)
    return lo + hi


def total_loss(mu, y, *, loss="linear", margin=0.0, weights=None):
    """Total (weighted) hinge loss of one constant prediction ``mu``: the leaf cost of equation (2)."""
    per = interval_loss(mu, y, loss=loss, margin=margin)
    return float(per.sum() if weights is None else np.dot(per, weights))
