"""The Monte Carlo, tree-induction and benchmark helpers of chapter 1 compute what they claim."""

import numpy as np
import pandas as pd
import pytest

from treebook.datasets.nominal import load_nominal
from treebook.nominal import best_partition
from treebook.nominal.bench import time_per_split
from treebook.nominal.experiments import (
    cross_validate_splitters,
    max_relative_excess,
    paired_wins,
    random_table,
    ratio_to_optimum,
    simulate,
    time_ratios,
    win_cell,
    win_percentages,
    wins_losses_table,
)


def test_random_tables_have_no_empty_rows_or_columns():
    rng = np.random.default_rng(0)
    for _ in range(200):
        V = random_table(rng, 12, 9, high=1)
        assert V.shape == (12, 9) and (V.sum(0) > 0).all() and (V.sum(1) > 0).all()
        assert set(np.unique(V)) <= {0.0, 1.0}


def test_simulation_tables_are_recomputable_and_summaries_consistent():
    df = simulate([6, 8], [3, 4], n_tables=15, exact_max_n=8, random_state=3)
    assert len(df) == 2 * 2 * 2 * 15 * 4
    # the same seed reproduces the same tables: recompute one cell's impurities from scratch (each cell
    # draws from its own generator, so that a cell can be recomputed alone)
    rng = np.random.default_rng([3, 6, 3])
    first = [random_table(rng, 6, 3) for _ in range(15)]
    sub = df[(df.n == 6) & (df.k == 3) & (df.impurity == "gini") & (df.method == "hcc")]
    np.testing.assert_allclose(sub["impurity_value"], [best_partition(V, "hcc", "gini").impurity for V in first])
    wins = win_percentages(df)
    assert ((wins >= 0) & (wins <= 100)).all().all()
    # at least one method wins every table, so the best win rate per cell is >= 100 / (number of methods)
    assert (wins.groupby(level=["impurity", "n"]).max() >= 25).all().all()
    exc = max_relative_excess(df)
    assert (exc >= 0).all().all()
    assert (time_ratios(df).xs("lca", level="method") == 1).all().all()
    r = ratio_to_optimum(df)
    assert (r["ratio"] >= 1 - 1e-9).all() and r.loc[r.method == "hcc", "ratio"].max() <= 2 + 1e-9
    # a method that wins 100% has zero excess
    for imp in ("gini", "entropy"):
        for m in exc.index:
            if (wins.xs(imp, level="impurity").xs(m, level="method") == 100).all().all():
                assert exc.loc[m, imp] == pytest.approx(0, abs=1e-7)


def test_one_cell_recomputes_alone():
    df = simulate([6, 8], [3, 4], ("gini", "entropy"), n_tables=20, random_state=5)
    wins = win_percentages(df)
    alone = win_cell("entropy", 8, 4, n_tables=20, seed=5)
    assert alone == {m: float(wins.loc[("entropy", 8, m), 4]) for m in alone}
    # a Generator draws the cells in sequence instead (not recomputable cell by cell)
    assert len(simulate([6], [3], ("gini",), n_tables=3, random_state=np.random.default_rng(0))) == 12
    with pytest.raises(ValueError, match=">= 0"):
        simulate([6], [3], n_tables=2, random_state=-1)


def test_paired_wins_detects_a_clear_difference_and_ties():
    rows = []
    rng = np.random.default_rng(1)
    for r in range(10):
        for f in range(3):
            base = 0.7 + 0.01 * rng.normal()
            rows += [{"repeat": r, "fold": f, "splitter": "a", "accuracy": base + 0.05},
                     {"repeat": r, "fold": f, "splitter": "b", "accuracy": base + 0.01 * rng.normal()},
                     {"repeat": r, "fold": f, "splitter": "c", "accuracy": base + 0.05}]
    cv = pd.DataFrame(rows)
    assert paired_wins(cv, "a", "b") == 1
    assert paired_wins(cv, "b", "a") == -1
    assert paired_wins(cv, "a", "c") == 0
    table = wins_losses_table({("x", "gini"): cv, ("y", "gini"): cv}, "a", ["b", "c"])
    assert table.loc["gini", "b"] == "+2 -0" and table.loc["gini", "c"] == "+0 -0"


def test_cross_validation_runs_on_a_real_data_set():
    X, y = load_nominal("cars")
    cv = cross_validate_splitters(X, y, ("hcc", "lca"), "entropy", n_repeats=2, n_folds=3, max_rows=500,
                                  random_state=0)
    assert len(cv) == 2 * 3 * 2
    assert (cv["accuracy"] > 0.7).all()  # the majority class is 70%; trees must do better than chance here
    assert cv.groupby("splitter")["accuracy"].mean().min() > 0.75


def test_time_per_split_reports_every_configuration():
    t = time_per_split(["lca", "hcc"], [12], [3, 4], n_tables=2, min_seconds=0.0)
    assert len(t) == 4 and (t["ms_per_split"] > 0).all()


def test_cross_validation_forwards_tree_params():
    from treebook.nominal import AUTHORS_TREE_RULES

    X, y = load_nominal("cars")
    cv = cross_validate_splitters(X, y, ("lca",), "gini", n_repeats=1, n_folds=3, max_rows=300, random_state=1,
                                  tree_params=AUTHORS_TREE_RULES)
    plain = cross_validate_splitters(X, y, ("lca",), "gini", n_repeats=1, n_folds=3, max_rows=300, random_state=1)
    assert len(cv) == 3 and cv["leaves"].sum() < plain["leaves"].sum()
    with pytest.raises(ValueError, match="chi2_alpha"):
        cross_validate_splitters(X, y, ("lca",), n_repeats=1, max_rows=300, tree_params={"chi2_alpha": 2.0})
    with pytest.raises(ValueError, match="tree_params"):
        cross_validate_splitters(X, y, ("lca",), n_repeats=1, max_rows=300, tree_params={"max_depth": 3})
