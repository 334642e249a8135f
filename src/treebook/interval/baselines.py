"""Baselines of the paper's section 5: L1-Linear, Interval-CART and the constant model."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import StrOptions

from ..tree import CARTRegressor
from ..tree.cart import GROWTH_CONSTRAINTS, MAX_TARGET_SPAN
from ..validation import (
    RANDOM_STATE,
    check_random_state,
    check_X_fitted,
    int_interval,
    power_of_two_scale,
    real_interval,
    validate_fit,
)
from .l1_solvers import l1_linear_lp_highs, l1_linear_lp_pulp, squared_hinge_l1_fista
from .losses import (
    LOSS_CONSTRAINTS,
    MAX_LIMIT_SIZE,
    check_margin,
    check_X_intervals,
)
from .metrics import interval_mse
from .solver import prefix_solve

__all__ = ["L1LinearIntervalRegressor", "IntervalCARTRegressor", "ConstantIntervalRegressor",
           "MinErrorConstantRegressor", "L1_LINEAR_CONFIGS"]


class _IntervalScore:
    def score(self, X, y, sample_weight=None):
        """Minus the interval mean squared error (greater is better)."""
        return -interval_mse(y, self.predict(X))


# ----------------------------------------------------------------------------------------------
# L1-Linear (Rigaill, Hocking, Vert & Bach 2013), the paper's baseline as the MMIT authors ran it:
# penaltyLearning's ``IntervalRegressionCV`` (tdhock/penaltyLearning, R/IntervalRegression.R), called
# with its defaults by tdhock/mmit-paper, penaltyLearning.predictions.R. In the standardised feature space,
#
#   min_{w, b}  (1/n) sum_i [ (y_lo_i + m - w.x_i - b)_+^2 + (w.x_i + b - y_hi_i + m)_+^2 ]  +  lam * ||w||_1
#
# solved by FISTA along the path lam = 0.001 * 1.2^k until every weight is zero, lam chosen by 5-fold
# validation squared hinge, refit on all the data. The linear-hinge variant is the LP below.


def _geometric_penalties(initial, factor):
    """``initial * factor^k`` computed as penaltyLearning does (repeated multiplication)."""
    lam = float(initial)
    while True:
        yield lam
        lam = lam * factor


_MAX_PATH = 2000
_LP_ZERO = 1e-10          # |w_j| below this counts as zero for the LP's path end (FISTA gives exact zeros)

_VALIDATIONS = ("squared_hinge", "linear_hinge", "mse", "incorrect_intervals")


def _validation_loss(pred, y, criterion, margin):
    """One validation fold's criterion for each column of ``pred`` (n_val, n_penalties)."""
    with np.errstate(invalid="ignore"):
        if criterion == "incorrect_intervals":      # penaltyLearning's colSums(is.error): a count
            return np.sum((pred < y[:, [0]]) | (pred > y[:, [1]]), axis=0).astype(np.float64)
        m = 0.0 if criterion == "mse" else margin
        a = np.maximum(y[:, [0]] + m - pred, 0.0)
        c = np.maximum(pred - y[:, [1]] + m, 0.0)
    if criterion == "linear_hinge":
        return np.mean(a + c, axis=0)
    return np.mean(a * a + c * c, axis=0)


def _column_scale(X):
    """Per-column power of two dividing features whose sums of squares would overflow (1.0 elsewhere): the
    standardised features are then those of ordinary data, exactly."""
    n = max(X.shape[0], 1)
    top = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    return np.array([power_of_two_scale(m, MAX_LIMIT_SIZE, factor=np.sqrt(n)) for m in top])


def _standardise(X, scale, ddof):
    if not scale:
        return np.zeros(X.shape[1]), np.ones(X.shape[1])
    mean = X.mean(axis=0)
    sd = X.std(axis=0, ddof=ddof) if X.shape[0] > ddof else np.zeros(X.shape[1])
    return mean, np.where(sd > 0, sd, 1.0)


#: Named configurations of :class:`L1LinearIntervalRegressor`.
L1_LINEAR_CONFIGS = {
    # the MMIT authors' L1-Linear: penaltyLearning::IntervalRegressionCV with its defaults
    # (tdhock/mmit-paper, penaltyLearning.predictions.R; tdhock/penaltyLearning, R/IntervalRegression.R)
    "L1-Linear (penaltyLearning)": dict(loss="squared_hinge", margin=1.0, penalty=None, penalty_path=None,
                                        initial_penalty=1e-3, penalty_factor=1.2, n_folds=5,
                                        validation="squared_hinge", selection="min", scale=True,
                                        tol=1e-3, max_iter=1000),
    # this book's earlier L1-Linear: the exact LP, linear hinge, margin 0, at a given penalty
    "L1-LP, linear hinge, margin 0": dict(loss="linear_hinge", margin=0.0, penalty=0.01, solver="highs"),
}


class L1LinearIntervalRegressor(_IntervalScore, RegressorMixin, BaseEstimator):
    """L1-regularised linear interval regression (Rigaill et al. 2013), the paper's "L1-Linear".

    The defaults are the MMIT authors' baseline: penaltyLearning's ``IntervalRegressionCV``
    (tdhock/penaltyLearning, R/IntervalRegression.R), which tdhock/mmit-paper's
    penaltyLearning.predictions.R calls with its defaults (feature matrix and targets only, after
    ``set.seed(1)``). The cost, in the standardised feature space, is

        ``mean_i [(y_lo_i + margin - f_i)_+^2 + (f_i - y_hi_i + margin)_+^2] + penalty * ||w||_1``

    (``loss="squared_hinge"``, penaltyLearning's), ``f_i = w.x_i + b`` with ``b`` unpenalised, minimised by
    :func:`squared_hinge_l1_fista`. With ``loss="linear_hinge"`` the cost is the sum of the linear hinges plus
    ``n * penalty * ||w||_1`` (the same per-sample scale), solved exactly as an LP
    (:func:`l1_linear_lp_highs` / :func:`l1_linear_lp_pulp`): the variant "L1-LP, linear hinge, margin 0",
    this book's former L1-Linear, is ``L1LinearIntervalRegressor(loss="linear_hinge", margin=0, penalty=...)``
    (or :meth:`from_config`; :data:`L1_LINEAR_CONFIGS` lists both named configurations).

    ``penalty=None`` selects the penalty as ``IntervalRegressionCV`` does: fold ids are a random permutation
    of ``0..n_folds-1`` repeated to ``n`` (their ``sample(rep(1:n.folds, l=n))``); on every training fold
    the features are standardised and the whole path is fitted, warm-started from the previous penalty's
    solution; the validation criterion is averaged over folds for the penalties that every fold's path
    reached; the penalty of least mean (the first, i.e. the smallest, on ties: their ``reg.type="min"``,
    ``"min(mean)"`` in older versions) is kept and the model refit on all the data from zero at that penalty
    (their ``factor.regularization=NULL``). The authors pinned penaltyLearning at commit 1c36935 (tdhock/mmit-paper,
    packages.R); that version is not in our reference store, but the two stored versions of
    R/IntervalRegression.R we read (027d4f4 and an older one with the margin fixed at 1) agree on all of the above.

    Parameters
    ----------
    loss : {"squared_hinge", "linear_hinge"}
        ``"squared_hinge"`` is penaltyLearning's; ``"linear_hinge"`` is the LP variant.
    margin : float >= 0
        Margin of the hinges; penaltyLearning's default (and the authors' choice) is 1.
    penalty : None or float >= 0
        ``None``: select on the path by ``n_folds``-fold validation (``IntervalRegressionCV``); a number:
        fit at that penalty (``IntervalRegressionRegularized(..., factor.regularization=NULL)``).
    penalty_path : None or sequence of floats >= 0
        Penalties for the selection. ``None``: penaltyLearning's path ``initial_penalty * penalty_factor^k``,
        ``k = 0, 1, ...`` until every weight is zero (``IntervalRegressionRegularized``); a sequence: those
        penalties (fitted in increasing order, warm-started).
    initial_penalty : float > 0
        First penalty of the default path; penaltyLearning's ``initial.regularization=0.001``.
    penalty_factor : float > 1
        Ratio of consecutive penalties on the default path; penaltyLearning's ``factor.regularization=1.2``.
    n_folds : int >= 2
        Validation folds; penaltyLearning's default is 5 (3 below 10 observations, which their
        ``min.observations=10`` rejects anyway). Each fold must hold a finite lower and a finite upper
        limit (penaltyLearning's check).
    validation : {"squared_hinge", "linear_hinge", "mse", "incorrect_intervals"}
        Criterion on the validation folds: the mean squared (or linear) hinge at ``margin``, the interval MSE
        (their ``mean.squared.error``, the squared hinge at margin 0), or the number of predictions outside
        their interval (their ``incorrect.intervals``). penaltyLearning selects by ``"squared_hinge"`` when,
        as here, one margin is given and no label-error table.
    selection : {"min", "1sd"}
        penaltyLearning's ``reg.type``: ``"min"`` (their default) the least mean validation criterion;
        ``"1sd"`` the largest penalty whose mean is below that minimum plus its standard deviation over folds.
    scale : bool
        Centre and scale every feature on the training set (penaltyLearning always does: R's ``sd``, ddof=1,
        for the squared hinge; the LP keeps its former ddof=0). Features constant on the training set get
        weight 0 (penaltyLearning drops them).
    tol, max_iter : float, int
        FISTA's stopping threshold and iteration budget (penaltyLearning's ``threshold=1e-3``,
        ``max.iterations=1e3``); unused by the LP.
    random_state : None, int or numpy Generator
        Draws the validation folds (penaltyLearning: R's ``sample`` after the authors' ``set.seed(1)``).
    solver : None, "fista", "highs" or "pulp"
        ``None``: ``"fista"`` for the squared hinge, ``"highs"`` for the linear hinge. ``"highs"`` builds the
        LP matrices directly (fast); ``"pulp"`` writes the LP with pulp.

    Attributes
    ----------
    coef_, intercept_ : weights and intercept in the standardised feature space
        (``predict(X) = ((X - mean_) / scale_) @ coef_ + intercept_``).
    penalty_ : the penalty of the fitted model.
    n_iter_ : FISTA iterations of the final fit (squared hinge); 1 for the LP (linear hinge), solved once.
    path_ : pandas.DataFrame (selection only) with columns ``penalty``, ``mean`` and ``sd`` (over folds, ddof=1)
        of the validation criterion, and ``n_nonzero``, the mean over folds of the number of non-zero weights.
    cv_results_ : pandas.DataFrame (selection only), one row per (fold, penalty): ``fold``, ``penalty``,
        ``loss`` (the validation criterion) and ``n_nonzero``.
    fold_ids_ : ndarray (selection only), the validation fold of every training row.
    n_features_in_, feature_names_in_ : the number of features and (DataFrame input) their names, checked
        at predict time.
    """

    _parameter_constraints = {
        "loss": [StrOptions({"squared_hinge", "linear_hinge"})],
        "margin": LOSS_CONSTRAINTS["margin"],
        "penalty": [None, real_interval(0.0)],
        "penalty_path": [None, "array-like"],
        "initial_penalty": [real_interval(0.0, closed="neither")],
        "penalty_factor": [real_interval(1.0, closed="neither")],
        "n_folds": [int_interval(2)],
        "validation": [StrOptions(set(_VALIDATIONS))],
        "selection": [StrOptions({"min", "1sd"})],
        "scale": ["boolean"],
        "tol": [real_interval(0.0, closed="neither")],
        "max_iter": [int_interval(1)],
        "random_state": RANDOM_STATE,
        "solver": [None, StrOptions({"fista", "highs", "pulp"})],
    }

    def __init__(self, loss="squared_hinge", margin=1.0, penalty=None, penalty_path=None, initial_penalty=1e-3,
                 penalty_factor=1.2, n_folds=5, validation="squared_hinge", selection="min", scale=True,
                 tol=1e-3, max_iter=1000, random_state=None, solver=None):
        self.loss = loss
        self.margin = margin
        self.penalty = penalty
        self.penalty_path = penalty_path
        self.initial_penalty = initial_penalty
        self.penalty_factor = penalty_factor
        self.n_folds = n_folds
        self.validation = validation
        self.selection = selection
        self.scale = scale
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.solver = solver

    @classmethod
    def from_config(cls, name, **overrides):
        """The estimator of a named configuration of :data:`L1_LINEAR_CONFIGS`, with ``overrides``."""
        if name not in L1_LINEAR_CONFIGS:
            raise ValueError(f"unknown configuration {name!r}; choose one of {list(L1_LINEAR_CONFIGS)}")
        return cls(**{**L1_LINEAR_CONFIGS[name], **overrides})

    # -- validation of the hyper-parameters ------------------------------------------------------

    def _check_params(self):
        """What the declared constraints cannot say: the solver must suit the loss, the penalty path must
        hold finite penalties >= 0. Returns ``(margin, solver)``."""
        self._validate_params()
        margin = check_margin(self.margin)
        solvers = ("fista",) if self.loss == "squared_hinge" else ("highs", "pulp")
        solver = solvers[0] if self.solver is None else self.solver
        if solver not in solvers:
            raise ValueError(f"solver must be None or one of {solvers} for loss={self.loss!r}; got {self.solver!r}")
        if self.penalty_path is not None:
            try:
                path = np.asarray(self.penalty_path, dtype=np.float64)
            except (TypeError, ValueError):
                path = np.full(0, np.nan)
            if path.ndim != 1 or path.size == 0 or not np.all(np.isfinite(path)) or np.any(path < 0):
                raise ValueError(f"penalty_path must be a non-empty sequence of finite penalties >= 0; "
                                 f"got {self.penalty_path!r}")
        return margin, solver

    # -- one fit, one path -----------------------------------------------------------------------

    def _prepare(self, X):
        """``(mean, scale, Z, keep, x_scale)``: ``Z = (X / x_scale - mean) / scale``, ``x_scale`` the exact
        power of two (1 for ordinary data) that keeps the column sums of squares finite."""
        x_scale = _column_scale(X)
        if not self.scale and np.any(x_scale != 1.0):
            raise ValueError(f"X has values up to {np.abs(X).max():.3g}, whose squares overflow without "
                             "standardisation: use scale=True or divide X by a constant")
        Xs = X / x_scale
        mean, scale = _standardise(Xs, self.scale, 1 if self.loss == "squared_hinge" else 0)
        Z = (Xs - mean) / scale
        keep = (np.ptp(Xs, axis=0) > 0) if self.scale else np.ones(X.shape[1], dtype=bool)
        return mean, scale, Z, keep, x_scale

    def _fit_one(self, Z, keep, y, penalty, margin, solver, init=None):
        w = np.zeros(Z.shape[1])
        if self.loss == "squared_hinge":
            init_k = None if init is None else (init[0][keep], init[1])
            wk, b, n_iter = squared_hinge_l1_fista(Z[:, keep], y, penalty, margin, init=init_k, tol=float(self.tol),
                                              max_iter=int(self.max_iter))
        else:
            solve = l1_linear_lp_highs if solver == "highs" else l1_linear_lp_pulp
            wk, b = solve(Z[:, keep], y, penalty, margin)
            n_iter = 1
        w[keep] = wk
        return w, b, n_iter

    def _path(self, Z, keep, y, margin, solver):
        """[(penalty, w, b)] along the path, warm-started."""
        if self.penalty_path is not None:
            penalties, until_zero = iter(np.unique(np.asarray(self.penalty_path, dtype=np.float64))), False
        else:
            penalties, until_zero = _geometric_penalties(self.initial_penalty, self.penalty_factor), True
        out, init = [], None
        zero = 0.0 if self.loss == "squared_hinge" else _LP_ZERO
        for k, lam in enumerate(penalties):
            if k >= _MAX_PATH:
                raise RuntimeError(f"the penalty path did not reach all-zero weights in {_MAX_PATH} steps")
            w, b, _ = self._fit_one(Z, keep, y, float(lam), margin, solver, init)
            out.append((float(lam), w, b))
            init = (w, b)
            if until_zero and np.all(np.abs(w) <= zero):
                break
        return out

    # -- estimator API ---------------------------------------------------------------------------

    def regularization_path(self, X, y):
        """The path on ``(X, y)`` without validation (penaltyLearning's ``IntervalRegressionRegularized``):
        ``penalty_path`` or ``initial_penalty * penalty_factor^k`` until every weight is zero, warm-started.

        Returns ``(penalties (k,), coefs (k, n_features), intercepts (k,))`` in the space standardised on
        ``X`` (the space of ``coef_``); does not change the estimator."""
        margin, solver = self._check_params()
        X, y = check_X_intervals(X, y)
        _, _, Z, keep, _ = self._prepare(X)
        path = self._path(Z, keep, y, margin, solver)
        return (np.array([lam for lam, _, _ in path]), np.vstack([w for _, w, _ in path]),
                np.array([b for _, _, b in path]))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        margin, solver = self._check_params()
        X, y = validate_fit(self, X, y, check_X_intervals)
        if self.penalty is None:
            self._select(X, y, margin, solver)
            penalty = float(self.penalty_)
        else:
            penalty = float(self.penalty)
            for attr in ("path_", "cv_results_", "fold_ids_"):
                self.__dict__.pop(attr, None)
        mean, scale, Z, keep, self._x_scale = self._prepare(X)
        self.mean_, self.scale_ = mean * self._x_scale, scale * self._x_scale
        self.coef_, self.intercept_, self.n_iter_ = self._fit_one(Z, keep, y, penalty, margin, solver)
        self.penalty_ = penalty
        self.n_features_in_ = X.shape[1]
        return self

    def _select(self, X, y, margin, solver):
        n, k = X.shape[0], int(self.n_folds)
        if n < k:
            raise ValueError(f"n_folds={k} validation folds need at least {k} samples; got n_samples = {n}")
        rng = check_random_state(self.random_state)
        fold_ids = rng.permutation(np.resize(np.arange(k), n))
        for f in range(k):
            yf = y[fold_ids == f]
            if not (np.isfinite(yf[:, 0]).any() and np.isfinite(yf[:, 1]).any()):
                raise ValueError(f"validation fold {f} has no finite lower or no finite upper limit; each fold "
                                 "needs at least one of each (use fewer folds or more data)")
        rows = []
        for f in range(k):
            tr, va = fold_ids != f, fold_ids == f
            mean, scale, Z, keep, x_scale = self._prepare(X[tr])
            path = self._path(Z, keep, y[tr], margin, solver)
            W = np.column_stack([w for _, w, _ in path])
            B = np.array([b for _, _, b in path])
            pred = ((X[va] / x_scale - mean) / scale) @ W + B
            losses = _validation_loss(pred, y[va], self.validation, margin)
            for (lam, w, _), loss in zip(path, losses):
                rows.append({"fold": f, "penalty": lam, "loss": float(loss),
                             "n_nonzero": int(np.count_nonzero(np.abs(w) > (0.0 if self.loss == "squared_hinge"
                                                                             else _LP_ZERO)))})
        cv = pd.DataFrame(rows)
        stats = cv.groupby("penalty", sort=True).agg(mean=("loss", "mean"), sd=("loss", "std"),
                                                     n_nonzero=("n_nonzero", "mean"), folds=("fold", "size"))
        stats = stats[stats.folds == k].drop(columns="folds").reset_index()
        best = int(np.argmin(stats["mean"].to_numpy()))          # first minimum: the smallest penalty on ties
        if self.selection == "1sd":
            upper = stats["mean"].iloc[best] + np.nan_to_num(stats["sd"].iloc[best])
            best = int(np.flatnonzero((stats["mean"] < upper).to_numpy() | (np.arange(len(stats)) == best)).max())
        self.fold_ids_ = fold_ids
        self.cv_results_ = cv
        self.path_ = stats
        self.penalty_ = float(stats["penalty"].iloc[best])

    def predict(self, X):
        X = check_X_fitted(self, X, "coef_")
        s = self._x_scale  # an exact power of two per column, 1 for ordinary data: the same numbers
        return ((X / s - self.mean_ / s) / (self.scale_ / s)) @ self.coef_ + self.intercept_


class IntervalCARTRegressor(_IntervalScore, RegressorMixin, BaseEstimator):
    """"Interval-CART": a CART regression tree on the finite limits moved inwards by the margin.

    Every example is duplicated: one copy with target ``lower + margin``, one with ``upper - margin``;
    copies whose limit is infinite are dropped (the paper's section 5.3 baseline).
    """

    _parameter_constraints = {
        "margin": LOSS_CONSTRAINTS["margin"],
        **{k: v for k, v in GROWTH_CONSTRAINTS.items() if k != "min_impurity_decrease"},
    }

    def __init__(self, margin=0.0, max_depth=None, min_samples_split=2, min_samples_leaf=1):
        self.margin = margin
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the CART tree on the finite limits moved inwards by the margin. Targets so large that the
        tree's squared errors overflow are divided by an exact power of two (``y_scale_``, 1 for ordinary
        data) and the predictions multiplied back: the same tree, the same predictions."""
        X, y = validate_fit(self, X, y, check_X_intervals)
        margin = check_margin(self.margin)
        lo = np.flatnonzero(np.isfinite(y[:, 0]))
        hi = np.flatnonzero(np.isfinite(y[:, 1]))
        Xd = np.vstack([X[lo], X[hi]])
        yd = np.concatenate([y[lo, 0] + margin, y[hi, 1] - margin])
        if not np.isfinite(yd).all():
            raise ValueError("y limits moved inwards by the margin overflow to infinity; divide y and the "
                             "margin by a constant")
        self.y_scale_ = power_of_two_scale(float(np.abs(yd).max()), MAX_TARGET_SPAN / 2, factor=yd.size)
        self.tree_model_ = CARTRegressor(max_depth=self.max_depth, min_samples_split=self.min_samples_split,
                                         min_samples_leaf=self.min_samples_leaf).fit(Xd, yd / self.y_scale_)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        X = check_X_fitted(self, X, "tree_model_")
        return self.tree_model_.predict(X) * self.y_scale_


class _ConstantModel(_IntervalScore, RegressorMixin, BaseEstimator):
    """Predicts the fitted ``constant_`` for every row."""

    def predict(self, X):
        X = check_X_fitted(self, X, "constant_")
        return np.full(X.shape[0], self.constant_)


class ConstantIntervalRegressor(_ConstantModel):
    """The constant model: the minimiser of the hinge losses of all training intervals (the solver
    of section 4 run once). With ``loss="squared"`` and ``margin=0`` it minimises the training interval MSE."""

    _parameter_constraints = dict(LOSS_CONSTRAINTS)

    def __init__(self, loss="squared", margin=0.0):
        self.loss = loss
        self.margin = margin

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_fit(self, X, y, check_X_intervals)
        res = prefix_solve(y[:, 0], y[:, 1], loss=self.loss, margin=self.margin)
        self.constant_ = float(res.prediction[-1])
        self.n_features_in_ = X.shape[1]
        return self


class MinErrorConstantRegressor(_ConstantModel):
    """Figure 5's ``constant`` (``fun.list$constant`` of ``constant.predictions.R``, ``tdhock/mmit-paper``).

    The candidates are the sorted unique finite training limits but the largest (the script's
    ``limit.vec[-1]-diff(limit.vec)``, which equals ``limit.vec[-length(limit.vec)]``); the prediction is
    the first candidate that the fewest training intervals exclude (``pred < lower | upper < pred``).
    With a single distinct finite limit (where the script has no candidate) that limit is predicted.
    """

    _parameter_constraints: dict = {}

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_fit(self, X, y, check_X_intervals)
        lim = np.unique(y[np.isfinite(y)])
        cand = lim[:-1] if lim.size > 1 else lim
        errors = ((cand[None, :] < y[:, :1]) | (y[:, 1:] < cand[None, :])).sum(axis=0)
        self.constant_ = float(cand[int(np.argmin(errors))])
        self.n_errors_ = int(errors.min())
        self.n_features_in_ = X.shape[1]
        return self
