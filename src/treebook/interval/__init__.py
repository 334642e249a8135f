"""Maximum margin interval trees (Drouin, Hocking & Laviolette, NeurIPS 2017)."""

from .losses import check_intervals, hinge, interval_loss, total_loss
from .metrics import interval_accuracy, interval_mse, interval_mse_scorer, interval_squared_errors
from .solver import SolveResult, prefix_solve

__all__ = [
    "SolveResult",
    "prefix_solve",
    "check_intervals",
    "hinge",
    "interval_loss",
    "total_loss",
    "interval_mse",
    "interval_accuracy",
    "interval_mse_scorer",
    "interval_squared_errors",
]
