"""The readings of the paper's maximum relative excess: the table generator's options, the excess over a larger
pool of methods and the readings' table, each against a direct computation."""

import numpy as np
import pandas as pd
import pytest

from treebook.nominal import best_partition
from treebook.nominal.experiments import (
    AUTHORS_METHODS,
    EXCESS_POOL,
    EXCESS_READINGS,
    excess_readings,
    max_relative_excess,
    random_table,
    simulate,
)


def test_random_table_redraws_empty_rows_and_columns_unless_told_not_to():
    rng = np.random.default_rng(0)
    kept = [random_table(rng, 3, 3, high=1, redraw=False) for _ in range(300)]
    assert any((V.sum(axis=0) == 0).any() or (V.sum(axis=1) == 0).any() for V in kept)
    redrawn = [random_table(rng, 3, 3, high=1) for _ in range(300)]
    assert all((V.sum(axis=0) > 0).all() and (V.sum(axis=1) > 0).all() for V in redrawn)
    assert all(V.min() >= 0 and V.max() <= 1 for V in kept + redrawn)


def _brute_excess(df, methods, pool):
    """The largest 100 (I(m) / min over pool minus m - 1) per impurity, table by table."""
    out = {}
    for (imp, _n, _k, _t), g in df.groupby(["impurity", "n", "k", "table"]):
        val = dict(zip(g.method, g.impurity_value))
        for m in methods:
            best = min(val[o] for o in pool if o != m)
            e = 100 * (val[m] / best - 1) if best > 0 else 0.0
            out[(m, imp)] = max(out.get((m, imp), -np.inf), e)
    return out


@pytest.mark.parametrize("pool", [None, (*AUTHORS_METHODS, *EXCESS_POOL)])
def test_max_relative_excess_matches_a_table_by_table_computation(pool):
    df = simulate([5, 7], [3, 4], n_tables=15, methods=(*AUTHORS_METHODS, *EXCESS_POOL), random_state=3)
    got = max_relative_excess(df, AUTHORS_METHODS, pool=pool)
    want = _brute_excess(df, AUTHORS_METHODS, AUTHORS_METHODS if pool is None else pool)
    for (m, imp), v in want.items():
        assert got.loc[m, imp] == pytest.approx(v, abs=1e-9)
    if pool is not None:  # a larger pool can only raise a method's excess
        base = max_relative_excess(df, AUTHORS_METHODS)
        assert (got >= base - 1e-9).all().all()
    with pytest.raises(ValueError, match="no results of"):
        max_relative_excess(df, AUTHORS_METHODS, pool=("hcc", "exhaustive"))


def test_excess_readings_runs_every_reading_and_reuses_the_paper_cells():
    base = simulate([6], [3], n_tables=8, methods=AUTHORS_METHODS, random_state=1)
    r = excess_readings(8, 1, ns=[6], ks=[3], small_ns=[4], base=base)
    assert list(dict.fromkeys(r.index.get_level_values("reading"))) == list(EXCESS_READINGS)
    assert list(r.columns) == ["gini", "entropy"] and (r.to_numpy() >= 0).all()
    pd.testing.assert_frame_equal(r.loc["the paper's text"], max_relative_excess(base, AUTHORS_METHODS)[["gini", "entropy"]],
                                  check_names=False)
    # the union of the paper's tables is the largest of its three readings' maxima
    three = [r.loc[x] for x in ("the paper's text", "entries 0..2", "entries 0..15")]
    np.testing.assert_allclose(r.loc["all the paper's tables"].to_numpy(),
                               np.maximum.reduce([t.to_numpy() for t in three]))
    alone = excess_readings(8, 1, ns=[6], ks=[3], base=base, readings=["all the paper's tables"])
    assert list(alone.index.get_level_values("reading").unique()) == ["all the paper's tables"]
    np.testing.assert_allclose(alone.to_numpy(), r.loc["all the paper's tables"].to_numpy())
    # "small n too" is the largest of those three and the small-n reading, run alone or beside them
    four = [*three, r.loc["small n added"]]
    np.testing.assert_allclose(r.loc["small n too"].to_numpy(), np.maximum.reduce([t.to_numpy() for t in four]))
    alone = excess_readings(8, 1, ns=[6], ks=[3], small_ns=[4], base=base, readings=["small n too"], progress=True)
    np.testing.assert_allclose(alone.to_numpy(), r.loc["small n too"].to_numpy())
    # the small-n reading is the maximum over the paper's cells and the added ones
    assert (r.loc["small n added"] >= r.loc["the paper's text"] - 1e-12).all().all()
    # one table of the larger pool recomputed by hand
    one = excess_readings(1, 1, ns=[6], ks=[3], readings=["larger pool"])
    V = random_table(np.random.default_rng([6, 6, 3]), 6, 3)
    for imp in ("gini", "entropy"):
        vals = {m: best_partition(V, m, imp).impurity for m in (*AUTHORS_METHODS, *EXCESS_POOL)}
        best = min(v for o, v in vals.items() if o != "lca")
        assert one.loc[("larger pool", "lca"), imp] == pytest.approx(100 * (vals["lca"] / best - 1), abs=1e-9)
    with pytest.raises(ValueError, match="unknown readings"):
        excess_readings(1, readings=["per cell"])
