"""Evaluation metrics for interval regression."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import make_scorer

from .losses import check_intervals


def interval_squared_errors(y_true, y_pred):
    """Per-sample squared error to the target interval: 0 inside, squared distance to the violated limit."""
    y = check_intervals(y_true, name="y_true")
    p = np.asarray(y_pred, dtype=np.float64).ravel()
    if p.shape[0] != y.shape[0]:
        raise ValueError(f"y_pred has {p.shape[0]} values for {y.shape[0]} intervals")
    if not np.isfinite(p).all():
        raise ValueError("y_pred contains NaN or infinite values")
    below = np.where(p < y[:, 0], y[:, 0] - p, 0.0)
    above = np.where(p > y[:, 1], p - y[:, 1], 0.0)
    return below * below + above * above


def interval_mse(y_true, y_pred):
    """Interval mean squared error (the paper's evaluation metric, section 5)."""
    return float(np.mean(interval_squared_errors(y_true, y_pred)))


def interval_accuracy(y_true, y_pred):
    """Fraction of predictions inside their target interval (limits included)."""
    return float(np.mean(interval_squared_errors(y_true, y_pred) == 0.0))


#: scorer for ``GridSearchCV`` / ``cross_val_score``: minus the interval MSE (greater is better)
interval_mse_scorer = make_scorer(interval_mse, greater_is_better=False)
