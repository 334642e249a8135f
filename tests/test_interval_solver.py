"""The dynamic-programming solver against brute-force minimisation of the same sum of hinges."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebook.interval import check_intervals, interval_loss, prefix_solve, total_loss
from treebook.interval.solver import bits_next, bits_prev, bits_set


def brute_min(y, loss, margin, w=None):
    """Exact minimum of the summed hinges: candidates are all breakpoints and, for the squared hinge,
    the stationary point of every quadratic piece (weighted mean of the breakpoints active on it)."""
    w = np.ones(len(y)) if w is None else w
    fl, fu = np.isfinite(y[:, 0]), np.isfinite(y[:, 1])
    blo, bhi = y[fl, 0] + margin, y[fu, 1] - margin
    wlo, whi = w[fl], w[fu]
    bps = np.unique(np.concatenate([blo, bhi]))
    cands = list(bps)
    if loss == "squared":
        edges = np.concatenate([[bps[0] - 1e6], bps, [bps[-1] + 1e6]])
        for a, b in zip(edges[:-1], edges[1:]):
            mid = 0.5 * (a + b)
            act_lo, act_hi = blo > mid, bhi < mid
            ws = wlo[act_lo].sum() + whi[act_hi].sum()
            if ws > 0:
                s = (wlo[act_lo] * blo[act_lo]).sum() + (whi[act_hi] * bhi[act_hi]).sum()
                cands.append(min(max(s / ws, a), b))
    return min(total_loss(c, y, loss=loss, margin=margin, weights=w) for c in cands)


@st.composite
def interval_problems(draw, max_n=12, weighted=False):
    n = draw(st.integers(1, max_n))
    centre = np.array(draw(st.lists(st.integers(-4, 4), min_size=n, max_size=n)), float)
    half = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n, max_size=n)))
    kind = np.array(draw(st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=n, max_size=n)))
    lo, hi = centre - half, centre + half
    lo[kind == 1] = -np.inf
    hi[kind == 2] = np.inf
    margin = draw(st.sampled_from([0.0, 0.25, 1.0, 3.0]))
    w = None
    if weighted:
        w = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=n, max_size=n)))
    return np.column_stack([lo, hi]), margin, w


@pytest.mark.parametrize("loss", ["linear", "squared"])
@settings(max_examples=60, deadline=None)
@given(prob=interval_problems(weighted=True))
def test_prefix_minimum_matches_brute_force(loss, prob):
    y, margin, w = prob
    res = prefix_solve(y[:, 0], y[:, 1], loss=loss, margin=margin, weights=w)
    for i in range(len(y)):
        wi = None if w is None else w[: i + 1]
        expect = brute_min(y[: i + 1], loss, margin, wi)
        assert res.cost[i] == pytest.approx(expect, rel=1e-9, abs=1e-9)
        # the reported minimiser attains the minimum
        at = total_loss(res.prediction[i], y[: i + 1], loss=loss, margin=margin, weights=wi)
        assert at == pytest.approx(expect, rel=1e-9, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(prob=interval_problems(max_n=20))
def test_linear_hinge_moves_at_most_once_per_limit(prob):
    y, margin, _ = prob
    res = prefix_solve(y[:, 0], y[:, 1], loss="linear", margin=margin)
    assert res.limit_moves.max() <= 1
    # infinite limits never move the pointer
    assert np.all(res.limit_moves[~np.isfinite(y[:, 0]), 0] == 0)
    assert np.all(res.limit_moves[~np.isfinite(y[:, 1]), 1] == 0)
    assert np.array_equal(res.moves, res.limit_moves.sum(axis=1))


def alternating(n):
    """Limits (-1.5)^k: positive ones are lower limits, negative ones upper limits (conflicting)."""
    v = (-1.5) ** np.arange(1, n + 1)
    return np.where(v > 0, v, -np.inf), np.where(v > 0, np.inf, v)


def test_squared_hinge_alternating_worst_case_is_quadratic():
    # every new limit drags the minimum of the squared hinges across a growing number of breakpoints
    tot = {n: prefix_solve(*alternating(n), loss="squared").moves.sum() for n in (24, 48)}
    assert tot[24] > 24**2 / 5
    assert tot[48] / tot[24] > 3.5  # quadratic growth
    lin = prefix_solve(*alternating(48), loss="linear")
    assert lin.moves.max() <= 1


def test_exact_targets_and_flat_minima():
    # an exact target: the minimum is 0, attained at the target
    res = prefix_solve([2.0], [2.0], loss="squared")
    assert res.cost[0] == 0 and res.prediction[0] == 2.0
    # a flat minimum predicts its midpoint, an unbounded one its finite end
    res = prefix_solve([1.0, -np.inf], [np.inf, 3.0], loss="linear")
    assert res.prediction.tolist() == [1.0, 2.0]
    assert res.cost.tolist() == [0.0, 0.0]


def test_margin_creates_cost_inside_narrow_interval():
    # width 1 < 2 * margin: the best mu is the centre and both hinges are active
    res = prefix_solve([0.0], [1.0], loss="linear", margin=1.0)
    assert res.cost[0] == pytest.approx(1.0)
    assert total_loss(res.prediction[0], np.array([[0.0, 1.0]]), margin=1.0) == pytest.approx(1.0)


def test_interval_loss_formula():
    y = np.array([[0.0, 1.0], [-np.inf, 1.0], [0.0, np.inf]])
    got = interval_loss(2.0, y, loss="squared", margin=0.5)
    # upper violated by 2 - 1 + 0.5 = 1.5 -> 2.25; lower limit contributes max(0, -2 + 0 + 0.5) = 0
    assert got.tolist() == [2.25, 2.25, 0.0]


def test_large_random_sweep_consistent():
    rng = np.random.default_rng(3)
    n = 3000
    c = rng.normal(0, 3, n)
    w = rng.exponential(1, n) + 1e-3
    lo, hi = c - w / 2, c + w / 2
    u = rng.random(n)
    lo[u < 0.2] = -np.inf
    hi[u > 0.8] = np.inf
    y = np.column_stack([lo, hi])
    for loss in ["linear", "squared"]:
        res = prefix_solve(lo, hi, loss=loss, margin=0.1)
        assert np.all(np.diff(res.cost) >= -1e-9)  # adding a hinge never lowers the minimum
        for i in [0, 99, 1499, n - 1]:
            assert res.cost[i] == pytest.approx(brute_min(y[: i + 1], loss, 0.1), rel=1e-8, abs=1e-8)


@pytest.mark.parametrize(
    "lower, upper, kwargs, match",
    [
        ([1.0, 0.0], [0.0, 1.0], {}, "lower > upper in rows 0"),
        ([-np.inf, 0.0], [np.inf, 1.0], {}, "both limits infinite.*rows 0"),
        ([0.0, np.nan], [1.0, 1.0], {}, "NaN in rows 1"),
        ([0.0], [1.0], {"margin": -1.0}, "margin"),
        ([0.0], [1.0], {"loss": "hinge"}, "loss"),
        ([0.0, 1.0], [1.0], {}, "equal length"),
        ([0.0], [1.0], {"weights": [0.0]}, "weights"),
        ([np.inf], [np.inf], {}, "lower limit of \\+inf"),
    ],
)
def test_bad_input(lower, upper, kwargs, match):
    with pytest.raises(ValueError, match=match):
        prefix_solve(lower, upper, **kwargs)


def test_check_intervals_shape():
    with pytest.raises(ValueError, match="shape"):
        check_intervals(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="shape"):
        check_intervals(np.zeros(3))


def test_active_set_next_and_previous_against_sorted_search():
    rng = np.random.default_rng(5)
    m = 700_000  # three level-2 words: exercises every level of the bit set
    l0 = np.zeros((m >> 6) + 1, np.uint64)
    l1 = np.zeros((l0.size >> 6) + 1, np.uint64)
    l2 = np.zeros((l1.size >> 6) + 1, np.uint64)
    active = np.unique(np.concatenate([rng.choice(m, 40, replace=False), [0, 63, 64, 4095, 4096, 262143,
                                                                          262144, m - 1]]))
    for r in active:
        bits_set(l0, l1, l2, int(r))
    for r in np.concatenate([active, rng.integers(0, m, 200)]):
        k = np.searchsorted(active, r, side="right")
        assert bits_next(l0, l1, l2, int(r), m) == (active[k] if k < active.size else m)
        k = np.searchsorted(active, r, side="left")
        assert bits_prev(l0, l1, l2, int(r)) == (active[k - 1] if k > 0 else -1)
    # a sparse set: the look-ups must cross empty words at every level
    l0[:] = 0
    l1[:] = 0
    l2[:] = 0
    for r in (5, m - 3):
        bits_set(l0, l1, l2, r)
    assert bits_next(l0, l1, l2, 5, m) == m - 3
    assert bits_prev(l0, l1, l2, m - 3) == 5
    assert bits_next(l0, l1, l2, m - 3, m) == m
    assert bits_prev(l0, l1, l2, 5) == -1


def test_validation_lives_in_losses_and_is_imported_one_way():
    import ast
    import inspect

    import treebook.interval.losses as losses
    import treebook.interval.solver as solver
    from treebook.interval import check_loss, check_margin

    imports = [n for n in ast.walk(ast.parse(inspect.getsource(losses))) if isinstance(n, ast.ImportFrom)]
    # nothing of the interval package: only the package-wide validation helpers
    assert all((n.level == 0 and not (n.module or "").startswith("treebook")) or (n.level == 2 and n.module == "validation")
               for n in imports)
    # the names other modules import from the solver are the losses module's
    assert solver.check_margin is losses.check_margin is check_margin
    assert solver.LOSSES is losses.LOSSES and solver.check_loss is check_loss
    assert check_loss("squared") == "squared" and check_margin(1) == 1.0
    for bad in ("abs", None, ["linear"]):
        with pytest.raises(ValueError, match="loss must be one of"):
            check_loss(bad)
