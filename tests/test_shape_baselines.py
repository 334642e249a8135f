"""ShapeCART baseline, data loader and benchmark helpers of chapter 3."""

import itertools

import numpy as np
import pytest

from treebook.datasets.shape_trees import FOLD_SEEDS, SHAPE_DATASETS, load_shape_dataset, paper_split
from treebook.shape import LiteratiClassifier
from treebook.shape.experiments import literati_run, peer_run
from treebook.shape.shapecart import ShapeCARTClassifier, shape_coordinate_descent
from treebook.tree import CARTClassifier


def _wg(c):
    n = c.sum()
    return n - (c.astype(float) ** 2).sum() / n if n else 0.0


def test_coordinate_descent_is_feasible_and_beats_the_best_threshold():
    rng = np.random.default_rng(0)
    for _ in range(40):
        M, K = int(rng.integers(2, 7)), int(rng.integers(1, 4))
        counts = rng.integers(0, 6, size=(M, 2))
        counts[:, 0] += 1
        sides, cost = shape_coordinate_descent(counts, K)
        changes = int(np.count_nonzero(sides[1:] != sides[:-1]))
        assert changes >= 1 and changes <= K
        assert cost == pytest.approx(_wg(counts[~sides].sum(0)) + _wg(counts[sides].sum(0)))
        best_thr = min(_wg(counts[: q + 1].sum(0)) + _wg(counts[q + 1:].sum(0)) for q in range(M - 1))
        assert cost <= best_thr + 1e-9
        # never better than the best feasible assignment
        brute = min(_wg(counts[~np.array(s)].sum(0)) + _wg(counts[np.array(s)].sum(0))
                    for s in itertools.product((False, True), repeat=M)
                    if 1 <= sum(a != b for a, b in zip(s[1:], s[:-1])) <= K)
        assert cost >= brute - 1e-9


def test_shapecart_k1_is_cart_and_k3_fits_better():
    rng = np.random.default_rng(1)
    X = rng.random((400, 3))
    y = ((np.sin(9 * X[:, 0]) > 0) ^ (X[:, 1] > 0.6)).astype(int)
    cart = CARTClassifier(max_depth=3).fit(X, y)
    sc1 = ShapeCARTClassifier(max_depth=3, max_breakpoints=1, n_intervals=64).fit(X, y)
    assert np.array_equal(cart.predict(X), sc1.predict(X))
    sc3 = ShapeCARTClassifier(max_depth=3, max_breakpoints=3).fit(X, y)
    assert sc3.score(X, y) > sc1.score(X, y)
    assert all(s.n_breakpoints <= 3 for s in sc3.tree_.splits if s is not None)
    with pytest.raises(ValueError):
        ShapeCARTClassifier(max_breakpoints=0).fit(X, y)


def test_loader_and_split():
    assert len(SHAPE_DATASETS) == 15 and len(FOLD_SEEDS) == 5
    X, y = load_shape_dataset("bank")
    assert X.shape == (1372, 4) and set(np.unique(y)) == {0, 1}
    assert X.min() >= 0 and X.max() <= 1
    tr, va, te = paper_split(y, 42)
    assert len(set(tr) | set(va) | set(te)) == y.size and not set(tr) & set(te)
    assert abs(tr.size / y.size - 0.7) < 0.01 and abs(te.size / y.size - 0.2) < 0.01
    with pytest.raises(ValueError, match="unknown"):
        load_shape_dataset("skin")


def test_benchmark_helpers_on_real_data():
    X, y = load_shape_dataset("bank")
    tr, _, _ = paper_split(y, 42)
    # the search proves this optimum in about a second; the generous limit absorbs a cold numba cache
    # and a loaded machine, so the check is about the result, not about the speed
    r = literati_run(X[tr], y[tr], max_depth=2, max_breakpoints=2, time_limit=120.0)
    c = peer_run("CART", X[tr], y[tr], max_depth=2, time_limit=5.0)
    assert r["proved"] and r["errors"] <= c["errors"]
    assert isinstance(r["estimator"], LiteratiClassifier) and r["time_to_best"] <= r["time"]
