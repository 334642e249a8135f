"""Simulated interval-regression data: the paper's section 5.2 data sets and the limits of the timing and
pointer-move experiments (Figure 3).

Two generators of Figure 3 (right) limits are kept:

- ``"authors"`` (:func:`authors_resampled_limits`, the default of :mod:`treebook.interval.bench`): the
  authors' script ``figure-simulated-seconds.R`` (GitHub ``tdhock/mmit-paper``) draws rows of the
  neuroblastoma ``target.mat`` with replacement (``sample(1:nrow(tmat), max(n.vec), replace=TRUE)``
  after ``set.seed(1)``), adds one ``runif`` draw per row to the row (R recycles the length-n vector
  down both columns, so both limits of a row move by the same amount and infinite limits stay
  infinite), runs ``compute_optimal_costs(max.tmat[1:n.sim, ], 1, loss)`` -- margin 1 -- on the first
  ``n.sim`` rows of that one draw, for ``n.sim = as.integer(10^seq(3, 7, by=0.5))``;
- ``"ours"`` (:func:`resampled_limits`): one-sided intervals whose limits are drawn from the pool of
  finite limits, no jitter, margin 0 (the book's first version).
"""

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


#: the generators of the Figure 3 experiments (see the module docstring)
GENERATORS = ("authors", "ours")
#: the margin of the authors' timing experiment (``compute_optimal_costs(..., 1, loss)``)
AUTHORS_TIMING_MARGIN = 1.0
#: the sizes of the authors' timing experiment: ``as.integer(10^seq(3, 7, by=0.5))``
AUTHORS_TIMING_SIZES = tuple(int(v) for v in 10 ** np.linspace(3.0, 7.0, 9))


def authors_resampled_limits(y, n, *, jitter=1.0, random_state=None, return_rows=False):
    """``n`` intervals made the way of the authors' Figure 3 (right) script.

    Rows of ``y`` are drawn uniformly with replacement, and every drawn row is shifted by one draw
    ``u ~ U(0, jitter)``: ``[lower + u, upper + u]`` (the same ``u`` for both limits; infinite limits
    stay infinite). ``figure-simulated-seconds.R`` of ``tdhock/mmit-paper`` does this to the
    neuroblastoma targets with ``jitter = 1`` (``tmat[i.vec, ] + runif(max(n.vec))``) and then solves with
    margin 1 (:data:`AUTHORS_TIMING_MARGIN`); the timings of its sizes use prefixes of one draw. With the
    neuroblastoma targets (one finite limit per row) ``n`` rows carry ``n`` finite limits.

    ``return_rows=True`` also returns the indices of the drawn rows.
    """
    rng = check_random_state(random_state)
    y = np.asarray(y, dtype=float)
    if y.ndim != 2 or y.shape[1] != 2 or y.shape[0] == 0:
        raise ValueError(f"y must be a non-empty (n, 2) array of intervals; got shape {y.shape}")
    if not np.isfinite(jitter) or jitter < 0:
        raise ValueError(f"jitter must be finite and >= 0; got {jitter!r}")
    rows = rng.integers(0, y.shape[0], int(n))
    out = y[rows] + (jitter * rng.random(int(n)))[:, None]
    return (out, rows) if return_rows else out


def resampled_limits(y, n, *, random_state=None):
    """``n`` one-sided intervals whose limits are drawn with replacement from the finite limits of ``y``
    (keeping whether each was a lower or an upper limit), no jitter: the book's first Figure 3 (right)
    data (generator ``"ours"``; the authors' is :func:`authors_resampled_limits`)."""
    rng = check_random_state(random_state)
    y = np.asarray(y, dtype=float)
    lows = y[np.isfinite(y[:, 0]), 0]
    ups = y[np.isfinite(y[:, 1]), 1]
    pool = np.concatenate([lows, ups])
    is_up = np.concatenate([np.zeros(lows.size, bool), np.ones(ups.size, bool)])
    k = rng.integers(0, pool.size, n)
    v, u = pool[k], is_up[k]
    return np.column_stack([np.where(u, -np.inf, v), np.where(u, v, np.inf)])
