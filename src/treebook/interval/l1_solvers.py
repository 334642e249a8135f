"""The solvers of L1-Linear's two losses (Rigaill, Hocking, Vert & Bach 2013), used by
:class:`~treebook.interval.baselines.L1LinearIntervalRegressor`: the linear-hinge problem as a linear
programme (written readably with pulp, or directly for HiGHS) and the squared-hinge problem with an l1
penalty by FISTA with restarts, penaltyLearning's ``IntervalRegressionCV`` solver.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning

__all__ = ["l1_linear_lp_pulp", "l1_linear_lp_highs", "squared_hinge_l1_fista", "squared_hinge_l1_objective"]


def l1_linear_lp_pulp(X, y, penalty, margin):
    """Solve the L1-Linear LP written with pulp (the readable formulation) and HiGHS; returns (w, b).

    The LP is ``min sum_i [(y_lo_i + margin - f_i)_+ + (f_i - y_hi_i + margin)_+] + n * penalty * ||w||_1``
    with ``f_i = w.x_i + b`` (linear hinge; ``w = w+ - w-``, a slack for every finite limit)."""
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


def _squared_hinge_terms(f, y, margin):
    """The violations ``a = (y_lo + m - f)_+`` and ``c = (f - y_hi + m)_+`` (0 at an infinite limit)."""
    with np.errstate(invalid="ignore"):
        a = np.maximum(y[:, 0] + margin - f, 0.0)
        c = np.maximum(f - y[:, 1] + margin, 0.0)
    return a, c


def squared_hinge_l1_objective(X, y, w, b, penalty, margin):
    """``mean_i [(y_lo_i + m - f_i)_+^2 + (f_i - y_hi_i + m)_+^2] + penalty * ||w||_1``, ``f = X w + b``:
    the cost of penaltyLearning's ``IntervalRegressionInternal`` (tdhock/penaltyLearning,
    R/IntervalRegression.R: mean squared hinge, intercept unpenalised)."""
    a, c = _squared_hinge_terms(np.asarray(X) @ np.asarray(w) + b, y, margin)
    return float(np.mean(a * a + c * c) + penalty * np.abs(w).sum())


def squared_hinge_l1_fista(X, y, penalty, margin, *, init=None, tol=1e-3, max_iter=1000, max_restarts=8):
    """Minimise :func:`squared_hinge_l1_objective` by FISTA, as penaltyLearning's ``IntervalRegressionInternal``
    (tdhock/penaltyLearning, R/IntervalRegression.R); returns ``(w, b, n_iter)``.

    penaltyLearning's choices, reproduced: FISTA (Beck & Teboulle 2009) with a constant step ``1/L``,
    ``L`` the mean squared norm of the rows of ``[1, X]`` (no line search); the intercept is neither
    thresholded nor penalised; stop when the distance of 0 to the subdifferential,
    ``max(|dF/db|, max_j dist(-dF/dw_j, penalty * sign-set(w_j)))``, is below ``tol`` (their ``threshold=1e-3``);
    on a non-finite iterate or a criterion above 1e20 restart from ``init`` with ``L *= 1.5``; after
    ``max_iter`` iterations (their ``max.iterations=1e3``) go on with ``L *= 1.5`` and twice the iterations.
    Ours: after ``max_restarts`` such increases stop with a ``ConvergenceWarning`` (theirs loops on).
    ``init``: the starting ``(w, b)`` (warm start; zeros by default).
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    Z = np.hstack([np.ones((n, 1)), X])
    theta0 = np.zeros(p + 1) if init is None else np.concatenate([[init[1]], init[0]]).astype(np.float64)
    lipschitz = float(np.mean(np.sum(Z * Z, axis=1)))

    def grad(f):
        a, c = _squared_hinge_terms(f, y, margin)
        return Z.T @ (2.0 * (c - a)) / n

    def criterion(theta, g):
        w, gw = theta[1:], g[1:]
        d = np.where(w == 0, np.maximum(np.abs(gw) - penalty, 0.0),
                     np.where(w < 0, np.abs(gw - penalty), np.abs(gw + penalty)))
        return max(abs(g[0]), float(d.max(initial=0.0)))

    def start():
        return theta0.copy(), Z @ theta0

    x, fx = start()
    y_pt, fy = x.copy(), fx.copy()
    t, it, budget, total, restarts = 1.0, 1, int(max_iter), 0, 0
    crit = tol
    while crit >= tol:
        x_last, fx_last = x, fx
        z = y_pt - grad(fy) / lipschitz
        thr = penalty / lipschitz
        z[1:] = np.where(np.abs(z[1:]) < thr, 0.0, z[1:] - thr * np.sign(z[1:]))
        x, fx = z, Z @ z
        t_last, t = t, (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        beta = (t_last - 1.0) / t
        y_pt, fy = x + beta * (x - x_last), fx + beta * (fx - fx_last)
        crit = criterion(x, grad(fx)) if np.isfinite(x).all() else np.inf
        it += 1
        total += 1
        if not np.isfinite(x).all() or crit > 1e20:      # diverged: restart with a longer step
            x, fx = start()
            y_pt, fy = x.copy(), fx.copy()
            t, it, crit = 1.0, 1, tol
            lipschitz *= 1.5
            restarts += 1
        if it > budget:                                   # slow: shorter step, more iterations
            lipschitz *= 1.5
            it, budget = 1, 2 * budget
            restarts += 1
        if restarts > max_restarts:
            warnings.warn(f"FISTA stopped after {total} iterations with criterion {crit:.3g} >= tol={tol} "
                          f"(penalty={penalty})", ConvergenceWarning, stacklevel=2)
            break
    return x[1:].copy(), float(x[0]), total
