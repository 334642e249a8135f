"""The benchmark helpers at toy scale (the timings themselves are checked by the benchmark, not here)."""

import numpy as np

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
