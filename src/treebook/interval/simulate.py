"""Simulated interval-regression data: the paper's section 5.2 data sets and random intervals for timing."""

from __future__ import annotations

import numpy as np

from ..validation import check_random_state

PATTERNS = {
    "linear": lambda x: x / 5.0,
    "sin": np.sin,
    "abs": lambda x: np.abs(x - 5.0),
}


def simulated_dataset(pattern, n_samples=200, n_features=20, *, width_std=0.3, shift_std=0.2,
                      open_proba=0.2, n_draws=10, random_state=None):
    """A data set of section 5.2: features uniform on [0, 10]; feature 0 is the signal.

    The true value is ``f(x_0)`` with ``f`` one of ``x / 5`` (linear), ``sin(x)`` and ``|x - 5|`` (abs).
    Each interval spans the smallest and largest of ``n_draws`` normal draws around the true value
    (sd ``width_std``), is shifted by a normal amount (sd ``shift_std``), and with probability
    ``open_proba`` loses one of its limits (lower or upper with equal probability).

    Returns ``(X, y, f_x0)`` with ``y`` of shape (n, 2) and the noise-free values ``f(x_0)``.
    """
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {sorted(PATTERNS)}, got {pattern!r}")
    rng = check_random_state(random_state)
    X = rng.uniform(0.0, 10.0, size=(n_samples, n_features))
    base = PATTERNS[pattern](X[:, 0])
    draws = rng.normal(base[:, None], max(width_std, 1e-3), size=(n_samples, n_draws))
    shift = rng.normal(0.0, max(shift_std, 1e-3), size=n_samples)
    lo = draws.min(axis=1) + shift
    hi = draws.max(axis=1) + shift
    opened = rng.random(n_samples) < open_proba
    drop_lower = rng.random(n_samples) < 0.5
    lo[opened & drop_lower] = -np.inf
    hi[opened & ~drop_lower] = np.inf
    return X, np.column_stack([lo, hi]), base


def random_intervals(n, *, centre_sd=3.0, open_proba=0.2, random_state=None):
    """Random intervals for timing: centre ~ N(0, centre_sd^2), width ~ Exp(1) + 1e-3,
    ``open_proba`` of them with lower = -inf and as many with upper = +inf."""
    rng = check_random_state(random_state)
    c = rng.normal(0.0, centre_sd, n)
    w = rng.exponential(1.0, n) + 1e-3
    lo, hi = c - w / 2, c + w / 2
    u = rng.random(n)
    lo[u < open_proba] = -np.inf
    hi[u > 1 - open_proba] = np.inf
    return np.column_stack([lo, hi])


def resampled_limits(y, n, *, random_state=None):
    """``n`` one-sided intervals whose limits are drawn with replacement from the finite limits of ``y``
    (keeping whether each was a lower or an upper limit): the paper's Figure 3 (right) data."""
    rng = check_random_state(random_state)
    y = np.asarray(y, dtype=float)
    lows = y[np.isfinite(y[:, 0]), 0]
    ups = y[np.isfinite(y[:, 1]), 1]
    pool = np.concatenate([lows, ups])
    is_up = np.concatenate([np.zeros(lows.size, bool), np.ones(ups.size, bool)])
    k = rng.integers(0, pool.size, n)
    v, u = pool[k], is_up[k]
    return np.column_stack([np.where(u, -np.inf, v), np.where(u, v, np.inf)])
