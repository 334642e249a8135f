"""Maximum margin interval trees (Drouin, Hocking & Laviolette, NeurIPS 2017).

- :func:`prefix_solve`: the O(n log n) dynamic programme of section 4 (minimum of a sum of hinge
  losses after every prefix of a sequence of intervals).
- :class:`MMITRegressor`, :class:`MMITForestRegressor`: trees and forests (:mod:`.tree`); :class:`MMITPrunedCV`,
  :class:`MMITGridSearchCV`: CV-pruned trees and the authors' unpruned grid search (:mod:`.selection`).
- baselines: :class:`L1LinearIntervalRegressor`, :class:`IntervalCARTRegressor`, :class:`ConstantIntervalRegressor`.
- metric: :func:`interval_mse` and the scorer :data:`interval_mse_scorer`.
- validation: :func:`check_intervals`, :func:`check_loss`, :func:`check_margin` (in :mod:`.losses`).
"""

from .baselines import ConstantIntervalRegressor, IntervalCARTRegressor, L1LinearIntervalRegressor
from .losses import LOSSES, check_intervals, check_loss, check_margin, hinge, interval_loss, total_loss
from .metrics import interval_accuracy, interval_mse, interval_mse_scorer, interval_squared_errors
from .selection import MMITGridSearchCV, MMITPrunedCV
from .solver import SolveResult, prefix_solve
from .tree import MMITForestRegressor, MMITRegressor, prune_tree, pruning_alphas

__all__ = [
    "SolveResult",
    "prefix_solve",
    "LOSSES",
    "check_intervals",
    "check_loss",
    "check_margin",
    "hinge",
    "interval_loss",
    "total_loss",
    "interval_mse",
    "interval_accuracy",
    "interval_mse_scorer",
    "interval_squared_errors",
    "MMITRegressor",
    "MMITPrunedCV",
    "MMITGridSearchCV",
    "MMITForestRegressor",
    "prune_tree",
    "pruning_alphas",
    "L1LinearIntervalRegressor",
    "IntervalCARTRegressor",
    "ConstantIntervalRegressor",
]
