"""Baselines of the paper's section 5: L1-Linear, Interval-CART and the constant model."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..tree import CARTRegressor
from ..validation import check_array, check_n_features
from .losses import check_intervals
from .metrics import interval_mse
from .solver import _check_loss, check_margin, prefix_solve

__all__ = ["L1LinearIntervalRegressor", "IntervalCARTRegressor", "ConstantIntervalRegressor",
           "l1_linear_lp_pulp", "l1_linear_lp_highs"]


def _check_Xy(X, y):
    X = check_array(X)
    y = check_intervals(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    return X, y


class _IntervalScore:
    def score(self, X, y, sample_weight=None):
        """Minus the interval mean squared error (greater is better)."""
        return -interval_mse(y, self.predict(X))


# ----------------------------------------------------------------------------------------------
# L1-Linear (Rigaill, Hocking, Vert & Bach 2013)
#
#   min_{w, b}  sum_i [ (y_lo_i + eps - w.x_i - b)_+ + (w.x_i + b - y_hi_i + eps)_+ ]  +  n * lam * ||w||_1
#
# as a linear programme: w = w+ - w-, slacks xi >= 0 for every finite limit.


def l1_linear_lp_pulp(X, y, penalty, margin):
    """Solve the L1-Linear LP written with pulp (the readable formulation) and HiGHS; returns (w, b)."""
    import pulp

    n, p = X.shape
    prob = pulp.LpProblem("l1_linear_interval_regression", pulp.LpMinimize)

    def var(name, low=None):
        if hasattr(prob, "add_variable"):
            return prob.add_variable(name, lowBound=low)
        return pulp.LpVariable(name, lowBound=low)

    wp = [var(f"wp{j}", 0) for j in range(p)]
    wm = [var(f"wm{j}", 0) for j in range(p)]
    b = var("b")
    slacks = []
    for i in range(n):
        f_i = pulp.lpSum(float(X[i, j]) * (wp[j] - wm[j]) for j in range(p) if X[i, j] != 0) + b
        if np.isfinite(y[i, 0]):
            s = var(f"lo{i}", 0)
            prob += s >= float(y[i, 0]) + margin - f_i
            slacks.append(s)
        if np.isfinite(y[i, 1]):
            s = var(f"hi{i}", 0)
            prob += s >= f_i - float(y[i, 1]) + margin
            slacks.append(s)
    prob += pulp.lpSum(slacks) + n * penalty * pulp.lpSum(wp + wm)
    status = prob.solve(pulp.HiGHS(msg=False))
    if pulp.LpStatus[status] != "Optimal":
        raise RuntimeError(f"the L1-Linear LP was not solved to optimality: {pulp.LpStatus[status]}")
    w = np.array([v.value() - u.value() for v, u in zip(wp, wm)])
    return w, float(b.value())


def l1_linear_lp_highs(X, y, penalty, margin):
    """The same LP in matrix form, solved by ``scipy.optimize.linprog(method="highs")``; returns (w, b)."""
    n, p = X.shape
    lo_rows = np.flatnonzero(np.isfinite(y[:, 0]))
    hi_rows = np.flatnonzero(np.isfinite(y[:, 1]))
    k = lo_rows.size + hi_rows.size
    # variables: [w+ (p), w- (p), b (1), xi (k)];  constraints A z <= rhs
    Xl, Xh = X[lo_rows], X[hi_rows]
    A_lo = sp.hstack([sp.csr_matrix(-Xl), sp.csr_matrix(Xl), sp.csr_matrix(-np.ones((lo_rows.size, 1))),
                      -sp.eye(lo_rows.size, k, 0)])
    A_hi = sp.hstack([sp.csr_matrix(Xh), sp.csr_matrix(-Xh), sp.csr_matrix(np.ones((hi_rows.size, 1))),
                      -sp.eye(hi_rows.size, k, lo_rows.size)])
    A = sp.vstack([A_lo, A_hi]).tocsr()
    rhs = np.concatenate([-(y[lo_rows, 0] + margin), y[hi_rows, 1] - margin])
    c = np.concatenate([np.full(2 * p, n * penalty), [0.0], np.ones(k)])
    bounds = [(0, None)] * (2 * p) + [(None, None)] + [(0, None)] * k
    res = linprog(c, A_ub=A, b_ub=rhs, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"the L1-Linear LP was not solved: {res.message}")
    z = res.x
    return z[:p] - z[p:2 * p], float(z[2 * p])


class L1LinearIntervalRegressor(_IntervalScore, RegressorMixin, BaseEstimator):
    """L1-regularised linear interval regression (Rigaill et al. 2013), the paper's "L1-Linear".

    Minimises the sum of linear hinge losses with margin over the training intervals plus
    ``n * penalty * ||w||_1`` (features standardised on the training set, intercept unpenalised),
    as a linear programme solved by HiGHS.

    Parameters
    ----------
    penalty : float >= 0
    margin : float >= 0
    solver : {"highs", "pulp"}
        ``"highs"`` builds the LP matrices directly (fast); ``"pulp"`` writes the LP with pulp.
    """

    def __init__(self, penalty=0.01, margin=0.0, solver="highs"):
        self.penalty = penalty
        self.margin = margin
        self.solver = solver

    def fit(self, X, y):
        X, y = _check_Xy(X, y)
        margin = check_margin(self.margin)
        if not np.isfinite(self.penalty) or self.penalty < 0:
            raise ValueError(f"penalty must be finite and >= 0; got {self.penalty!r}")
        if self.solver not in ("highs", "pulp"):
            raise ValueError(f"solver must be 'highs' or 'pulp'; got {self.solver!r}")
        self.mean_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        Z = (X - self.mean_) / self.scale_
        solve = l1_linear_lp_highs if self.solver == "highs" else l1_linear_lp_pulp
        self.coef_, self.intercept_ = solve(Z, y, float(self.penalty), margin)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "coef_")
        X = check_array(X)
        check_n_features(X, self.n_features_in_)
        return ((X - self.mean_) / self.scale_) @ self.coef_ + self.intercept_


class IntervalCARTRegressor(_IntervalScore, RegressorMixin, BaseEstimator):
    """"Interval-CART": a CART regression tree on the finite limits moved inwards by the margin.

    Every example is duplicated: one copy with target ``lower + margin``, one with ``upper - margin``;
    copies whose limit is infinite are dropped (the paper's section 5.3 baseline).
    """

    def __init__(self, margin=0.0, max_depth=None, min_samples_split=2, min_samples_leaf=1):
        self.margin = margin
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf

    def fit(self, X, y):
        X, y = _check_Xy(X, y)
        margin = check_margin(self.margin)
        lo = np.flatnonzero(np.isfinite(y[:, 0]))
        hi = np.flatnonzero(np.isfinite(y[:, 1]))
        Xd = np.vstack([X[lo], X[hi]])
        yd = np.concatenate([y[lo, 0] + margin, y[hi, 1] - margin])
        self.tree_model_ = CARTRegressor(max_depth=self.max_depth, min_samples_split=self.min_samples_split,
                                         min_samples_leaf=self.min_samples_leaf).fit(Xd, yd)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "tree_model_")
        return self.tree_model_.predict(X)


class ConstantIntervalRegressor(_IntervalScore, RegressorMixin, BaseEstimator):
    """The constant model: the minimiser of the hinge losses of all training intervals (the solver
    of section 4 run once). With ``loss="squared"`` and ``margin=0`` it minimises the training interval MSE."""

    def __init__(self, loss="squared", margin=0.0):
        self.loss = loss
        self.margin = margin

    def fit(self, X, y):
        X, y = _check_Xy(X, y)
        _check_loss(self.loss)
        res = prefix_solve(y[:, 0], y[:, 1], loss=self.loss, margin=self.margin)
        self.constant_ = float(res.prediction[-1])
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "constant_")
        X = check_array(X)
        check_n_features(X, self.n_features_in_)
        return np.full(X.shape[0], self.constant_)
