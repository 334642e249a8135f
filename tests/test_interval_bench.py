"""The benchmark helpers at toy scale (the timings themselves are checked by the benchmark, not here)."""

import numpy as np
import pytest

from treebook.interval.bench import (
    alternating_worst_case,
    fit_timing,
    intervals_with_limits,
    moves_over_orderings,
    solver_timing,
)
from treebook.interval.simulate import random_intervals, resampled_limits


def test_solver_timing_records_moves():
    y_src = random_intervals(300, random_state=0)
    df = solver_timing([500, 2000], data=("random", "neuroblastoma"), y_source=y_src, random_state=1)
    assert len(df) == 2 * 2 * 2
    assert (df[df.loss == "linear"].max_moves <= 1).all()
    assert (df.seconds > 0).all() and (df.cpu_seconds >= 0).all()
    expected = np.tile(np.repeat([500, 2000], 2), 2)  # rows: data x size x loss
    assert (abs(df.n_limits - expected) <= 0.1 * expected).all()


def test_resampled_limits_are_one_sided_draws():
    y_src = np.array([[1.0, np.inf], [-np.inf, 2.0], [3.0, np.inf]])
    z = resampled_limits(y_src, 500, random_state=0)
    assert (np.isfinite(z).sum(axis=1) == 1).all()
    assert set(z[np.isfinite(z[:, 0]), 0]) <= {1.0, 3.0}
    assert set(z[np.isfinite(z[:, 1]), 1]) == {2.0}
    assert np.isfinite(intervals_with_limits(1600, "random", random_state=0)).sum() > 1400


def test_fit_timing_and_worst_case_and_orderings():
    df = fit_timing(300, 4, 3, random_state=0)
    assert list(df.loss) == ["linear", "squared"] and (df.n_leaves >= 1).all()
    w = alternating_worst_case([10, 20, 40])
    assert (np.diff(w.total_moves) > 0).all()
    rng = np.random.default_rng(0)
    mo = moves_over_orderings(rng.normal(size=(50, 3)), random_intervals(50, random_state=1), [0.0, 0.5])
    assert len(mo) == 2 * 2 * 3 * 2
    assert (mo[mo.loss == "linear"].max_moves <= 1).all()


# ---------------------------------------------------------------------------------------------
# Figure 3 generators: the authors' (figure-simulated-seconds.R, tdhock/mmit-paper) and ours


def test_authors_resampled_limits_resample_rows_and_shift_both_limits_by_one_uniform_draw():
    from scipy import stats

    from treebook.interval.simulate import authors_resampled_limits

    y_src = np.array([[1.0, np.inf], [-np.inf, 2.0], [3.0, 5.0], [0.5, 0.5]])
    n = 40_000
    z, rows = authors_resampled_limits(y_src, n, random_state=0, return_rows=True)
    assert z.shape == (n, 2) and rows.shape == (n,)
    # rows are drawn uniformly with replacement from the source rows
    counts = np.bincount(rows, minlength=4)
    assert stats.chisquare(counts).pvalue > 1e-3
    # infinite limits stay infinite, finite ones stay finite
    np.testing.assert_array_equal(np.isinf(z), np.isinf(y_src[rows]))
    # the shift of a row: one U(0, 1) draw, the same for both limits (R recycles runif(n) down both columns)
    lo_fin, hi_fin = np.isfinite(y_src[rows, 0]), np.isfinite(y_src[rows, 1])
    with np.errstate(invalid="ignore"):  # inf - inf in the branch not taken
        u = np.where(lo_fin, z[:, 0] - y_src[rows, 0], z[:, 1] - y_src[rows, 1])
    both = lo_fin & hi_fin
    np.testing.assert_allclose(z[both, 1] - y_src[rows[both], 1], u[both], atol=1e-12)
    np.testing.assert_allclose(z[both, 1] - z[both, 0], (y_src[rows, 1] - y_src[rows, 0])[both], atol=1e-12)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # the shift does not depend on the row drawn
    assert stats.kstest(u[rows == 0], u[rows == 2]).pvalue > 1e-3
    # jitter 0: exact copies of the drawn rows
    z0, r0 = authors_resampled_limits(y_src, 100, jitter=0.0, random_state=1, return_rows=True)
    np.testing.assert_array_equal(z0, y_src[r0])


def test_solver_timing_defaults_to_the_authors_generator_and_margin():
    from treebook.interval.simulate import AUTHORS_TIMING_SIZES

    assert AUTHORS_TIMING_SIZES == (1000, 3162, 10000, 31622, 100000, 316227, 1000000, 3162277, 10000000)
    y_src = np.column_stack([np.arange(50.0), np.full(50, np.inf)])
    y_src[::4] = np.column_stack([np.full(13, -np.inf), np.arange(13.0)])  # some upper limits
    df = solver_timing([300, 1000], y_source=y_src, random_state=0)
    assert set(df.data) == {"neuroblastoma"} and set(df.generator) == {"authors"} and set(df.margin) == {1.0}
    assert list(df.n_limits) == [300, 300, 1000, 1000]  # one finite limit per row
    assert (df[df.loss == "linear"].max_moves <= 1).all()
    assert (df.max_moves_row <= df.max_moves).all()
    ours = solver_timing([300], y_source=y_src, generator="ours", random_state=0)
    assert set(ours.margin) == {0.0} and set(ours.generator) == {"ours"}
    assert set(solver_timing([300], y_source=y_src, generator="ours", margin=0.5).margin) == {0.5}
    with pytest.raises(ValueError, match="generator"):
        solver_timing([300], y_source=y_src, generator="theirs")
    # the authors' limits are jittered (not in the source's pool); ours are draws from the pool
    pool = set(y_src[np.isfinite(y_src)])
    za = intervals_with_limits(500, "neuroblastoma", y_src, 0)
    zo = intervals_with_limits(500, "neuroblastoma", y_src, 0, generator="ours")
    assert not set(za[np.isfinite(za)]) & pool and set(zo[np.isfinite(zo)]) <= pool


def test_moves_over_sizes_resamples_rows_to_every_size():
    from treebook.interval.bench import moves_over_sizes
    from treebook.interval.simulate import simulated_dataset

    X, y, _ = simulated_dataset("abs", n_samples=60, n_features=4, random_state=0)
    df = moves_over_sizes(X, y, [100, 400], features=2, n_margins=3, random_state=0, dataset="abs")
    assert len(df) == 2 * 2 * 3 * 2 * 2  # sizes x losses x margins x features x directions
    assert sorted(df.n_rows.unique()) == [100, 400] and set(df.generator) == {"authors"}
    assert df.feature.nunique() == 2 and set(df.feature) <= set(range(4))
    assert (df[df.loss == "linear"].max_moves <= 1).all()
    n_fin = np.isfinite(y).sum(axis=1).mean()
    assert abs(df[df.n_rows == 400].n_limits.iloc[0] / 400 - n_fin) < 0.3
    ours = moves_over_sizes(X, y, [100], margins=[0.0, 1.0], features=[0], generator="ours", random_state=0)
    assert len(ours) == 2 * 2 * 2 and set(ours.margin) == {0.0, 1.0}
