"""Baselines, metric and data loader of the interval chapter."""

import numpy as np
import pytest

from treebook.datasets.mmit import load_neuroblastoma
from treebook.interval import interval_loss, interval_mse, interval_squared_errors
from treebook.interval.baselines import (
    ConstantIntervalRegressor,
    IntervalCARTRegressor,
    L1LinearIntervalRegressor,
    l1_linear_lp_highs,
    l1_linear_lp_pulp,
)
from treebook.interval.simulate import simulated_dataset


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
    est = L1LinearIntervalRegressor(penalty=0.001, margin=0.1).fit(X, y)
    assert est.score(X, y) > -0.05
    assert np.argmax(np.abs(est.coef_)) == 0
    nz = [np.count_nonzero(np.abs(L1LinearIntervalRegressor(penalty=p).fit(X, y).coef_) > 1e-9)
          for p in (0.0, 0.01, 1.0)]
    assert nz[0] >= nz[1] >= nz[2] and nz[2] == 0


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
