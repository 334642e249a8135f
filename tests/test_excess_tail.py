"""Chapter 1's tail of PCext-Entropy's relative excess: the per-table excesses against an independent
recomputation, the block maxima of paper-sized draws, the local search and the pooled per-cell summary."""

import json

import numpy as np
import pytest
import yaml

from treebook.nominal import best_partition, partition_impurity
from treebook.nominal.experiments import (
    TAIL_FROM,
    excess_climb,
    excess_tail,
    load_tail_sweep,
    random_table,
    tail_summary,
)
from treebook.notebooks import notebook_parameters, project_root

OTHERS = ("hcc", "sliqext", "lca")


def _excess(V, method="pcext_counts", impurity="entropy"):
    """The excess recomputed from the partitions' masks (not from the procedures' own impurity values)."""
    imp = {m: partition_impurity(V, best_partition(V, m, impurity).left, impurity) for m in (method, *OTHERS)}
    q = min(imp[o] for o in OTHERS)
    return 0.0 if q <= 0 else 100 * (imp[method] / q - 1)


def test_the_tail_is_every_large_excess_of_the_cells_tables():
    r = excess_tail(8, 3, 600, high=2, seed=5, block=200)
    rng = np.random.default_rng([5, 8, 3, 2])
    tables = [random_table(rng, 8, 3, 2) for _ in range(600)]
    ex = np.array([_excess(V) for V in tables])
    assert r["tail"] == pytest.approx(np.sort(ex[ex >= TAIL_FROM]).tolist(), abs=1e-5)
    assert r["block_maxima"] == pytest.approx(ex.reshape(3, 200).max(axis=1).tolist(), abs=1e-5)
    assert r["largest"] == pytest.approx(ex.max()) and r["largest"] >= max(r["block_maxima"]) - 1e-5
    assert np.array_equal(np.array(r["largest_table"]), tables[int(np.argmax(ex))])
    assert (r["n"], r["k"], r["high"], r["seed"], r["n_tables"], r["block"]) == (8, 3, 2, 5, 600, 200)
    assert r == excess_tail(8, 3, 600, high=2, seed=5, block=200)  # a function of its arguments
    assert json.loads(json.dumps(r)) == r  # a sweep record as it is


def test_no_excess_is_negative_where_the_method_is_among_the_best():
    # Hypercube Cover against LCA alone: HcC tries LCA's direction too, so it is never worse
    r = excess_tail(12, 3, 300, high=7, seed=1, method="hcc", others=("lca",), block=100)
    assert max(r["block_maxima"]) <= 1e-9 and r["tail"] == []


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=1, k=3, n_tables=10), "n >= 2"),
    (dict(n=5, k=1, n_tables=10), "k >= 2"),
    (dict(n=5, k=3, n_tables=10, high=0), "largest entry >= 1"),
    (dict(n=5, k=3, n_tables=15, block=10), "multiple of block"),
    (dict(n=5, k=3, n_tables=0, block=10), "multiple of block"),
    (dict(n=5, k=3, n_tables=10, block=10, others=("pcext_counts", "lca")), "without 'pcext_counts'"),
    (dict(n=5, k=3, n_tables=10, block=10, others=()), "non-empty"),
])
def test_bad_tail_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        excess_tail(**kwargs)


def test_the_local_search_returns_a_valid_table_with_the_excess_it_reports():
    start = excess_tail(12, 3, 500, high=2, seed=3, block=500)
    e, T = excess_climb(start["largest_table"], steps=300, seed=0)
    assert e >= start["largest"] - 1e-9  # the start is met first
    assert T.shape == (12, 3) and T.min() >= 0 and T.max() <= 2
    assert (T.sum(axis=1) > 0).all() and (T.sum(axis=0) > 0).all()
    assert e == pytest.approx(_excess(T.astype(float)))
    assert (e, T.tolist()) == (lambda r: (r[0], r[1].tolist()))(excess_climb(start["largest_table"], steps=300, seed=0))


@pytest.mark.parametrize("table, match", [
    ([[0, 1], [0, 2]], "all-zero"),
    ([[3, 1], [1, 2]], "integers in 0..2"),
    ([[1.5, 1], [1, 2]], "integers in 0..2"),
    ([1, 2, 1], "2-d"),
    ([[1, 1], [1, np.nan]], "integers in 0..2"),
])
def test_the_local_search_refuses_a_table_outside_the_cell(table, match):
    with pytest.raises(ValueError, match=match):
        excess_climb(table, steps=1)


def _point(n=12, k=3, seed=1, tail=(6.0, 16.0, 22.0), maxima=(16.0, 22.0), n_tables=20000, block=10000):
    return {"n": n, "k": k, "high": 2, "seed": seed, "n_tables": n_tables, "block": block,
            "method": "pcext_counts", "impurity": "entropy", "tail": list(tail), "block_maxima": list(maxima),
            "largest": max(maxima), "largest_table": [[1]]}


def test_the_summary_pools_a_cells_seeds_and_bounds_a_rate_never_seen():
    pts = [_point(seed=1), _point(seed=2, tail=(7.0,), maxima=(7.0, 5.0)), _point(n=25, tail=(), maxima=(3.0, 4.0))]
    s = tail_summary(pts, 21.6)
    a = s.loc[(12, 3, 2)]
    assert (a.tables, a.reached, a.draws, a.draws_reached, a.largest) == (40000, 1, 4, 1, 22.0)
    assert a.rate == pytest.approx(1 / 40000)
    b = s.loc[(25, 3, 2)]
    assert (b.reached, b.draws_reached) == (0, 0)
    # none in N tables: the 95 % upper bound of the rate is -ln(0.05) / N, about 3 / N (the rule of three)
    assert b.rate_upper95 == pytest.approx(-np.log(0.05) / 20000)
    assert a.rate_upper95 > a.rate
    assert tail_summary(pts, 10.0).loc[(12, 3, 2), "reached"] == 2  # 16 and 22
    with pytest.raises(ValueError, match="seed 1 twice"):
        tail_summary([_point(), _point()], 21.6)
    with pytest.raises(ValueError, match="not 10000"):
        tail_summary([_point(block=5000, n_tables=10000)], 21.6)
    with pytest.raises(ValueError, match=">= 5"):
        tail_summary(pts, 4.0)
    with pytest.raises(ValueError, match="no tail points"):
        tail_summary([], 21.6)


def test_the_sweep_reads_back_its_finished_points(tmp_path):
    for i, finished in ((1, True), (2, True), (3, False)):
        run = tmp_path / "runs" / f"r{i}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps({"n": 12, "k": 3, "high": 2, "seed": i, "n_tables": 20000}))
        if finished:
            (run / "result.json").write_text(json.dumps({"results": {"tail": _point(seed=i)}}))
    pts = load_tail_sweep(tmp_path)
    assert [p["seed"] for p in pts] == [1, 2]
    assert tail_summary(pts, 21.6).loc[(12, 3, 2), "tables"] == 40000


def test_the_grid_draws_paper_sized_blocks_of_the_point_notebooks_parameters():
    params = notebook_parameters("sweeps/01-tail-point")
    grid = yaml.safe_load((project_root() / "notebooks" / "sweeps" / "01-tail.yml").read_text())["points"]
    assert all(set(p) <= set(params) for p in grid)
    assert all(p["n_tables"] % 10000 == 0 and p["high"] == 2 for p in grid)
    assert len({(p["n"], p["k"], p["seed"]) for p in grid}) == len(grid)
