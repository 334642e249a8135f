"""Baselines, metric and data loader of the interval chapter."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from treebook.datasets.mmit import load_neuroblastoma
from treebook.interval import interval_loss, interval_mse, interval_squared_errors
from treebook.interval.baselines import (
    L1_LINEAR_CONFIGS,
    ConstantIntervalRegressor,
    IntervalCARTRegressor,
    L1LinearIntervalRegressor,
)
from treebook.interval.l1_solvers import l1_linear_lp_highs, l1_linear_lp_pulp, squared_hinge_l1_fista
from treebook.interval.simulate import simulated_dataset

LP = "L1-LP, linear hinge, margin 0"


def lp_objective(X, y, w, b, penalty, margin):
    return interval_loss(X @ w + b, y, margin=margin).sum() + len(X) * penalty * np.abs(w).sum()


@pytest.mark.parametrize("penalty", [0.0, 0.02])
def test_l1_linear_pulp_and_matrix_lp_agree(penalty):
    X, y, _ = simulated_dataset("linear", n_samples=60, n_features=4, random_state=0)
    a = l1_linear_lp_pulp(X, y, penalty, 0.1)
    b = l1_linear_lp_highs(X, y, penalty, 0.1)
    oa, ob = lp_objective(X, y, *a, penalty, 0.1), lp_objective(X, y, *b, penalty, 0.1)
    assert oa == pytest.approx(ob, rel=1e-7, abs=1e-7)
    # no random linear model does better (the LP is the exact minimum)
    rng = np.random.default_rng(0)
    for _ in range(200):
        w = b[0] + rng.normal(scale=0.05, size=4)
        assert lp_objective(X, y, w, b[1] + rng.normal(scale=0.05), penalty, 0.1) >= ob - 1e-9


def test_l1_linear_fits_linear_pattern_and_sparsity_grows_with_penalty():
    X, y, _ = simulated_dataset("linear", random_state=1)
    est = L1LinearIntervalRegressor(loss="linear_hinge", penalty=0.001, margin=0.1).fit(X, y)
    assert est.score(X, y) > -0.05
    assert np.argmax(np.abs(est.coef_)) == 0
    nz = [np.count_nonzero(np.abs(L1LinearIntervalRegressor.from_config(LP, penalty=p).fit(X, y).coef_) > 1e-9)
          for p in (0.0, 0.01, 1.0)]
    assert nz[0] >= nz[1] >= nz[2] and nz[2] == 0


def test_lp_variant_is_the_former_l1_linear():
    """The named LP variant: linear hinge, margin 0, features standardised with ddof=0, solved by the LP."""
    X, y, _ = simulated_dataset("linear", n_samples=80, n_features=5, random_state=3)
    X[:, 4] = 2.0                                                 # a constant feature keeps weight 0
    for penalty, solver in ((0.01, "highs"), (0.003, "pulp")):
        est = L1LinearIntervalRegressor.from_config(LP, penalty=penalty, solver=solver).fit(X, y)
        assert est.loss == "linear_hinge" and est.margin == 0.0 and est.penalty_ == penalty
        Z = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
        w, b = l1_linear_lp_highs(Z, y, penalty, 0.0)
        assert lp_objective(Z, y, est.coef_, est.intercept_, penalty, 0.0) == pytest.approx(
            lp_objective(Z, y, w, b, penalty, 0.0), rel=1e-9, abs=1e-9)
        assert est.coef_[4] == 0.0
        np.testing.assert_allclose(est.predict(X), Z @ est.coef_ + est.intercept_)


# ---------------------------------------------------------------------------------------------
# The authors' L1-Linear: penaltyLearning's IntervalRegressionCV (squared hinge, margin 1, L1 path, 5-fold CV)


def small_intervals(seed, n=40, p=4):
    """Random features and intervals with some infinite limits (both kinds present)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3.0, size=p) + rng.normal(size=p)
    mu = X @ rng.normal(size=p) + rng.normal(scale=0.5, size=n)
    lo, hi = mu - rng.uniform(0.1, 2.0, n), mu + rng.uniform(0.1, 2.0, n)
    lo[rng.random(n) < 0.3] = -np.inf
    hi[(rng.random(n) < 0.3) & np.isfinite(lo)] = np.inf
    return X, np.column_stack([lo, hi])


def standardise(X):
    sd = X.std(0, ddof=1)                                       # R's sd(), as penaltyLearning
    return (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)


def sq_objective(Z, y, w, b, penalty, margin):
    """Mean squared hinge (the package's own interval_loss) + penalty * ||w||_1, independent of baselines."""
    return interval_loss(Z @ w + b, y, loss="squared", margin=margin).mean() + penalty * np.abs(w).sum()


def lbfgs_oracle(Z, y, penalty, margin):
    """Independent minimiser: w = w+ - w-, bounds >= 0, smooth squared hinge, L-BFGS-B."""
    n, p = Z.shape
    lo, hi = y[:, 0], y[:, 1]

    def fun(v):
        b, w = v[0], v[1:p + 1] - v[p + 1:]
        f = Z @ w + b
        a = np.where(np.isfinite(lo), np.maximum(lo + margin - f, 0.0), 0.0)
        c = np.where(np.isfinite(hi), np.maximum(f - hi + margin, 0.0), 0.0)
        g_f = 2.0 * (c - a) / n
        g_w = Z.T @ g_f
        val = np.sum(a * a + c * c) / n + penalty * np.sum(v[1:])
        return val, np.concatenate([[g_f.sum()], g_w + penalty, -g_w + penalty])

    bounds = [(None, None)] + [(0.0, None)] * (2 * p)
    res = minimize(fun, np.zeros(2 * p + 1), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12, "maxcor": 30})
    return res.x[1:p + 1] - res.x[p + 1:], res.x[0], res.fun


@pytest.mark.parametrize("seed,penalty,margin", [(0, 0.01, 1.0), (1, 0.1, 1.0), (2, 0.0, 0.5), (3, 0.5, 0.0)])
def test_squared_hinge_fit_is_the_minimum(seed, penalty, margin):
    X, y = small_intervals(seed)
    Z = standardise(X)
    w_o, b_o, f_o = lbfgs_oracle(Z, y, penalty, margin)
    assert sq_objective(Z, y, w_o, b_o, penalty, margin) == pytest.approx(f_o, rel=1e-10)
    est = L1LinearIntervalRegressor(penalty=penalty, margin=margin, tol=1e-9).fit(X, y)
    f = sq_objective(Z, y, est.coef_, est.intercept_, penalty, margin)
    assert f <= f_o + 1e-9 and f == pytest.approx(f_o, rel=1e-7, abs=1e-9)
    np.testing.assert_allclose(est.coef_, w_o, atol=1e-4)
    np.testing.assert_allclose(est.predict(X), Z @ est.coef_ + est.intercept_, atol=1e-12)
    # penaltyLearning's threshold (1e-3) on the subgradient criterion: near, not at, the minimum
    loose = L1LinearIntervalRegressor(penalty=penalty, margin=margin).fit(X, y)
    assert sq_objective(Z, y, loose.coef_, loose.intercept_, penalty, margin) == pytest.approx(f_o, rel=1e-3, abs=1e-4)
    # no perturbation of the fitted weights does better
    rng = np.random.default_rng(seed)
    for _ in range(100):
        dw, db = rng.normal(scale=0.02, size=Z.shape[1]), rng.normal(scale=0.02)
        assert sq_objective(Z, y, est.coef_ + dw, est.intercept_ + db, penalty, margin) >= f - 1e-12


def test_fista_warm_start_and_convergence_warning():
    X, y = small_intervals(4)
    Z = standardise(X)
    w0, b0, it0 = squared_hinge_l1_fista(Z, y, 0.05, 1.0, tol=1e-8)
    w1, b1, it1 = squared_hinge_l1_fista(Z, y, 0.05, 1.0, init=(w0, b0), tol=1e-8)
    assert it1 < it0 and np.allclose(w1, w0, atol=1e-7)
    with pytest.warns(ConvergenceWarning, match="FISTA stopped"):
        squared_hinge_l1_fista(Z, y, 0.05, 1.0, tol=1e-14, max_iter=1)


def test_path_is_monotone_and_ends_with_zero_weights():
    X, y = small_intervals(5, n=60, p=6)
    Z = standardise(X)
    est = L1LinearIntervalRegressor(tol=1e-8)
    penalties, W, B = est.regularization_path(X, y)
    assert not hasattr(est, "coef_")
    # penaltyLearning's path: 0.001 * 1.2^k, stopped at the first penalty with every weight zero
    np.testing.assert_allclose(penalties, 0.001 * 1.2 ** np.arange(len(penalties)), rtol=1e-12)
    assert np.all(W[-1] == 0) and np.any(W[:-1] != 0, axis=1).all()
    l1 = np.abs(W).sum(axis=1)
    assert np.all(np.diff(l1) <= 1e-6)                          # larger penalty => L1 norm not larger
    # zero weights are optimal at the last penalty: |dL/dw| <= penalty at (0, b)
    f = np.full(len(y), B[-1])
    a = np.where(np.isfinite(y[:, 0]), np.maximum(y[:, 0] + 1.0 - f, 0.0), 0.0)
    c = np.where(np.isfinite(y[:, 1]), np.maximum(f - y[:, 1] + 1.0, 0.0), 0.0)
    assert np.abs(Z.T @ (2 * (c - a)) / len(y)).max() <= penalties[-1] + 1e-6
    # every point of the path is the minimum at its penalty (warm starts do not change the answer)
    for k in (0, len(penalties) // 2, len(penalties) - 2):
        _, _, f_o = lbfgs_oracle(Z, y, penalties[k], 1.0)
        assert sq_objective(Z, y, W[k], B[k], penalties[k], 1.0) == pytest.approx(f_o, rel=1e-7, abs=1e-9)
    # a given path is fitted in increasing order
    p2, W2, _ = L1LinearIntervalRegressor(penalty_path=[0.3, 0.01, 0.1]).regularization_path(X, y)
    assert p2.tolist() == [0.01, 0.1, 0.3] and W2.shape == (3, 6)


def test_cv_selects_the_minimum_of_the_mean_validation_loss():
    X, y = small_intervals(6, n=80, p=5)
    est = L1LinearIntervalRegressor(random_state=0, tol=1e-8).fit(X, y)
    cv, path = est.cv_results_, est.path_
    assert list(path.columns) == ["penalty", "mean", "sd", "n_nonzero"]
    # folds: a random permutation of 0..4 repeated to n (balanced)
    assert sorted(np.bincount(est.fold_ids_).tolist()) == [16] * 5
    # path_ keeps the penalties every fold reached, with mean and sd (ddof=1) over the folds
    counts = cv.groupby("penalty").size()
    assert set(path.penalty) == set(counts.index[counts == 5])
    g = cv[cv.penalty.isin(path.penalty)].groupby("penalty")["loss"]
    np.testing.assert_allclose(path["mean"], g.mean().to_numpy())
    np.testing.assert_allclose(path["sd"], g.std(ddof=1).to_numpy())
    assert est.penalty_ == path.penalty[path["mean"].idxmin()]
    # the validation loss is the mean squared hinge (margin 1) of a fit on the other folds
    for k in (0, int(np.flatnonzero(path.penalty == est.penalty_)[0])):
        lam = path.penalty.iloc[k]
        for f in (0, 3):
            tr, va = est.fold_ids_ != f, est.fold_ids_ == f
            m = L1LinearIntervalRegressor(penalty=lam, tol=1e-8).fit(X[tr], y[tr])
            want = interval_loss(m.predict(X[va]), y[va], loss="squared", margin=1.0).mean()
            got = cv.loss[(cv.fold == f) & (cv.penalty == lam)].item()
            assert got == pytest.approx(want, rel=1e-5, abs=1e-8)
    # refit on all the data at the selected penalty
    ref = L1LinearIntervalRegressor(penalty=est.penalty_, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, atol=1e-7)
    assert est.intercept_ == pytest.approx(ref.intercept_, abs=1e-7)


def test_cv_is_deterministic_with_random_state():
    X, y = small_intervals(7, n=70, p=4)
    a = L1LinearIntervalRegressor(random_state=3).fit(X, y)
    b = clone(a).fit(X, y)
    assert np.array_equal(a.fold_ids_, b.fold_ids_) and a.path_.equals(b.path_)
    assert a.penalty_ == b.penalty_ and np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    c = L1LinearIntervalRegressor(random_state=4).fit(X, y)
    assert not np.array_equal(a.fold_ids_, c.fold_ids_)


def test_one_sd_rule_and_other_criteria():
    X, y = small_intervals(8, n=90, p=6)
    base = L1LinearIntervalRegressor(random_state=0).fit(X, y)
    sd1 = L1LinearIntervalRegressor(random_state=0, selection="1sd").fit(X, y)
    path = sd1.path_
    best = path["mean"].idxmin()
    within = path[path["mean"] < path["mean"][best] + path["sd"][best]]
    assert sd1.penalty_ == within.penalty.max() >= base.penalty_
    for crit in ("mse", "incorrect_intervals", "linear_hinge"):
        e = L1LinearIntervalRegressor(random_state=0, validation=crit).fit(X, y)
        assert e.penalty_ == e.path_.penalty[e.path_["mean"].idxmin()]
    cnt = L1LinearIntervalRegressor(random_state=0, validation="incorrect_intervals").fit(X, y).cv_results_
    assert np.all(cnt.loss == np.round(cnt.loss))              # a count, as penaltyLearning's colSums
    # the LP variant selected on a given grid by validation MSE
    lp = L1LinearIntervalRegressor.from_config(LP, penalty=None, penalty_path=[0.001, 0.01, 0.1],
                                               validation="mse", n_folds=3, random_state=0).fit(X, y)
    assert lp.penalty_ in (0.001, 0.01, 0.1) and len(lp.path_) == 3


def test_named_configurations():
    paper = L1LinearIntervalRegressor.from_config("L1-Linear (penaltyLearning)")
    assert paper.get_params() == L1LinearIntervalRegressor().get_params()      # the defaults are the authors'
    assert (paper.loss, paper.margin, paper.penalty, paper.n_folds, paper.initial_penalty, paper.penalty_factor,
            paper.validation, paper.selection, paper.tol, paper.max_iter) == (
        "squared_hinge", 1.0, None, 5, 1e-3, 1.2, "squared_hinge", "min", 1e-3, 1000)
    assert set(L1_LINEAR_CONFIGS) == {"L1-Linear (penaltyLearning)", LP}
    with pytest.raises(ValueError, match="unknown configuration"):
        L1LinearIntervalRegressor.from_config("nope")


@pytest.mark.parametrize("params,match", [
    ({"loss": "squared"}, "'loss' parameter"), ({"margin": -1}, "margin"), ({"penalty": -0.1}, "'penalty' parameter"),
    ({"penalty": np.inf}, "'penalty' parameter"), ({"penalty_path": []}, "penalty_path"),
    ({"penalty_path": [0.1, -1]}, "penalty_path"), ({"initial_penalty": 0}, "initial_penalty"),
    ({"penalty_factor": 1.0}, "penalty_factor"), ({"n_folds": 1}, "n_folds"), ({"n_folds": 2.5}, "n_folds"),
    ({"validation": "auc"}, "validation"), ({"selection": "max"}, "selection"), ({"tol": 0}, "tol"),
    ({"max_iter": 0}, "max_iter"), ({"solver": "highs"}, "solver"),
    ({"loss": "linear_hinge", "solver": "fista"}, "solver"),
])
def test_l1_linear_rejects_bad_parameters(params, match):
    X, y = small_intervals(9, n=30, p=3)
    with pytest.raises(ValueError, match=match):
        L1LinearIntervalRegressor(**params).fit(X, y)


def test_l1_linear_rejects_bad_data():
    X, y = small_intervals(10, n=30, p=3)
    with pytest.raises(ValueError, match="rows"):
        L1LinearIntervalRegressor(penalty=0.1).fit(X[:-1], y)
    bad = y.copy()
    bad[0] = [2.0, 1.0]
    with pytest.raises(ValueError, match="lower > upper"):
        L1LinearIntervalRegressor(penalty=0.1).fit(X, bad)
    with pytest.raises(ValueError, match="at least 5 samples"):
        L1LinearIntervalRegressor().fit(X[:4], y[:4])
    y1 = np.column_stack([np.arange(30.0), np.full(30, np.inf)])
    y1[0, 1] = 10.0                                              # one finite upper limit: four folds have none
    with pytest.raises(ValueError, match="no finite lower or no finite upper"):
        L1LinearIntervalRegressor(random_state=0).fit(X, y1)
    L1LinearIntervalRegressor(penalty=0.1).fit(X, y1)            # a fixed penalty needs no folds
    est = L1LinearIntervalRegressor(penalty=0.1).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        L1LinearIntervalRegressor(random_state=0).fit(X, y)


def test_interval_cart_and_constant():
    X, y, _ = simulated_dataset("abs", random_state=2)
    cart = IntervalCARTRegressor(max_depth=3).fit(X, y)
    const = ConstantIntervalRegressor().fit(X, y)
    assert np.unique(const.predict(X)).size == 1
    # the constant minimises the training interval MSE among constants
    grid = np.linspace(-2, 8, 2001)
    assert const.score(X, y) >= max(-interval_mse(y, np.full(len(y), g)) for g in grid) - 1e-9
    assert cart.score(X, y) > const.score(X, y)


def test_interval_mse():
    y = np.array([[0.0, 1.0], [-np.inf, 0.0], [2.0, np.inf]])
    assert interval_squared_errors(y, [0.5, 1.0, 1.0]).tolist() == [0.0, 1.0, 1.0]
    assert interval_mse(y, [2.0, -1.0, 5.0]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="values"):
        interval_mse(y, [0.0])


def test_neuroblastoma_loader():
    X, y = load_neuroblastoma()
    assert X.shape == (3418, 117) and y.shape == (3418, 2)
    assert np.isfinite(X).all()
    finite = np.isfinite(y)
    assert np.all(finite.sum(axis=1) == 1)
    assert finite[:, 0].sum() == 2845 and finite[:, 1].sum() == 573
    Xf, yf = load_neuroblastoma(as_frame=True)
    assert list(yf.columns) == ["lower", "upper"] and Xf.shape == (3418, 117)


def test_margin_grid_and_cross_validation_protocol():
    from treebook.interval.experiments import cross_validate_methods, make_methods, margin_grid

    y = np.array([[0.0, 1.0], [0.5, np.inf], [-np.inf, 3.0], [0.5, 0.5]])
    g = margin_grid(y, 4)
    assert g[0] == pytest.approx(0.5) and g[-1] == pytest.approx(3.0) and np.all(np.diff(g) > 0)
    X, y, _ = simulated_dataset("sin", n_samples=60, n_features=3, random_state=0)
    methods = make_methods(n_margins=2, inner_cv=2, max_depth=3, l1_penalties=(0.01,), cart_depths=(2,),
                           random_state=0)
    df = cross_validate_methods(X, y, methods, n_folds=3, dataset="sin", random_state=0)
    assert len(df) == 3 * len(methods)
    assert set(df.method) == set(methods)
    # every test fold score is the interval MSE of that method's predictions (non-negative)
    assert (df.mse >= 0).all() and np.allclose(df.log10_mse, np.log10(df.mse.clip(lower=1e-12)))
