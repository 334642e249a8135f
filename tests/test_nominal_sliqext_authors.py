"""Tests of ``method="sliqext_authors"``: SLIQext as the authors' tree-induction code runs it (rounds of cumulative
moves in value order), next to SLIQext as published (``"sliqext"``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nominal_oracles import brute_force_opt, random_tables, tables

from treebook.nominal import METHODS, best_partition, candidate_count, partition_impurity
from treebook.nominal.tree import NominalTreeClassifier

RTOL = 1e-9


def rounds_oracle(V, impurity):
    """The procedure read off its description, on Python sets and whole-partition impurities.

    left = every value; while more than one value is left: walk left's values in increasing order, moving each
    to the right and keeping the moves already made, up to the last (which would empty the left side); the
    running partition with the lowest impurity (the first of equals) ends the round; the next starts from it.
    Returns (impurity, left mask) of the best partition seen (first of equals), and the number of partitions
    evaluated."""
    V = np.asarray(V, dtype=float)
    n = V.shape[0]
    left = set(range(n))
    best, best_left, evaluated = np.inf, None, 0
    while len(left) > 1:
        running = set(left)
        round_best, round_left = np.inf, None
        for v in sorted(left)[:-1]:
            running.discard(v)
            mask = np.isin(np.arange(n), sorted(running))
            val = partition_impurity(V, mask, impurity)
            evaluated += 1
            if val < round_best:
                round_best, round_left = val, set(running)
        if round_best < best:
            best, best_left = round_best, set(round_left)
        left = round_left
    return best, np.isin(np.arange(n), sorted(best_left)), evaluated


def test_the_method_is_registered_and_a_tree_accepts_it():
    assert "sliqext_authors" in METHODS
    X = np.array([["a"], ["b"], ["c"], ["a"], ["c"], ["b"], ["d"], ["d"]], dtype=object)
    y = np.array([0, 1, 1, 0, 1, 1, 0, 0])
    tree = NominalTreeClassifier(splitter="sliqext_authors", nominal_features=[0]).fit(X, y)
    assert (tree.predict(X) == y).all()


@pytest.mark.parametrize("impurity", ["gini", "entropy"])
def test_the_kernel_is_the_oracle_on_random_tables(impurity):
    rng = np.random.default_rng(31)
    for V in random_tables(rng, 300, n_range=(2, 10), k_range=(2, 5)):
        want, want_mask, evaluated = rounds_oracle(V, impurity)
        got = best_partition(V, "sliqext_authors", impurity)
        assert got.impurity == pytest.approx(want, rel=RTOL, abs=1e-12)
        assert (got.left == want_mask).all() or (got.left == ~want_mask).all()
        assert 0 < got.left.sum() < V.shape[0]
        assert V.shape[0] - 1 <= evaluated <= candidate_count("sliqext_authors", *V.shape)


@settings(max_examples=150, deadline=None)
@given(V=tables, impurity=st.sampled_from(["gini", "entropy"]))
def test_never_below_the_optimum_and_empty_rows_go_right(V, impurity):
    V = V.astype(float)
    p = best_partition(V, "sliqext_authors", impurity)
    nonempty = V.sum(axis=1) > 0
    assert p.impurity == pytest.approx(partition_impurity(V, p.left, impurity), rel=RTOL, abs=1e-12)
    if nonempty.sum() >= 2 and (V.sum(axis=0) > 0).sum() >= 1:
        W = V[nonempty][:, V.sum(axis=0) > 0]
        assert p.impurity >= brute_force_opt(W, impurity) * (1 - RTOL) - 1e-12
    assert not p.left[~nonempty].any()


def test_it_differs_from_sliqext_as_published():
    """The two procedures are different heuristics: on some tables each finds a partition the other does not."""
    rng = np.random.default_rng(7)
    better = worse = 0
    for V in random_tables(rng, 400, n_range=(5, 10), k_range=(3, 4)):
        a = best_partition(V, "sliqext_authors", "entropy").impurity
        b = best_partition(V, "sliqext", "entropy").impurity
        better += a < b * (1 - 1e-9)
        worse += a > b * (1 + 1e-9)
    assert better > 0 and worse > 0


def test_one_round_suffices_when_moving_everything_is_best_at_once():
    """Two values of pure classes: round one's single proper partition splits them, and one value is left."""
    V = np.array([[5.0, 0.0], [0.0, 7.0]])
    p = best_partition(V, "sliqext_authors", "gini")
    assert p.impurity == pytest.approx(0.0, abs=1e-12)
    assert p.left.sum() == 1
