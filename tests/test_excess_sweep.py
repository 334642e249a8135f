"""Chapter 1's replicated maximum relative excess: the sweep's records read back as the chapter reads them,
refused at another number of tables, and the paper's value placed against the replicates' range."""

import json

import pandas as pd
import pytest

from treebook.nominal.experiments import (
    AUTHORS_METHODS,
    EXCESS_READINGS,
    UNION_READINGS,
    excess_readings,
    load_excess_sweep,
    replicate_ranges,
)
from treebook.notebooks import notebook_parameters, project_root


def _fake_sweep(tmp_path, seeds, n_tables=10000, finished=True):
    for seed in seeds:
        run = tmp_path / "runs" / f"s{seed}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps({"seed": seed, "n_tables": n_tables}))
        rows = [{"reading": "the paper's text", "method": m, "gini": float(seed + i), "entropy": 10.0 * seed}
                for i, m in enumerate(AUTHORS_METHODS)]
        if finished:
            (run / "result.json").write_text(json.dumps({"results": {"rows": rows}}))
        (run / "run.json").write_text(json.dumps({"seconds": 60.0, "status": "ok"}))
    return tmp_path


def test_the_sweep_reads_back_and_ranges_place_the_paper(tmp_path):
    folder = _fake_sweep(tmp_path, [1, 2, 3])
    _fake_sweep(tmp_path, [9], finished=False)  # an unfinished point is left out
    rep = load_excess_sweep(folder, 10000)
    assert len(rep) == 3 * len(AUTHORS_METHODS) and sorted(rep.seed.unique()) == [1, 2, 3]
    assert rep.attrs["seconds"] == pytest.approx(180.0)
    paper = pd.DataFrame({"gini": [2.0, 0.5, 9.0, 5.0], "entropy": [30.0, 30.0, 5.0, 10.0]}, index=AUTHORS_METHODS)
    rng = replicate_ranges(rep, paper)
    row = rng.loc[("the paper's text", AUTHORS_METHODS[0], "gini")]
    assert (row.low, row.high, row.replicates) == (1.0, 3.0, 3)
    # inside means low <= paper <= high, ends included
    expected = {(m, imp): rng.loc[("the paper's text", m, imp), "low"] <= paper.loc[m, imp]
                <= rng.loc[("the paper's text", m, imp), "high"] for m in AUTHORS_METHODS for imp in paper.columns}
    assert {k: bool(rng.loc[("the paper's text", *k), "inside"]) for k in expected} == expected
    assert rng.loc[("the paper's text", AUTHORS_METHODS[0], "entropy"), "inside"]  # 30 = 10 x 3, the top end
    assert not rng.loc[("the paper's text", AUTHORS_METHODS[1], "gini"), "inside"]  # 0.5 below 2


def test_a_union_reading_the_points_did_not_save_is_derived_per_seed(tmp_path):
    readings = ["the paper's text", "entries 0..2", "entries 0..15", "small n added", "all the paper's tables"]
    for seed in (1, 2):
        run = tmp_path / "runs" / f"s{seed}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps({"seed": seed, "n_tables": 100}))
        rows = [{"reading": r, "method": m, "gini": float(seed * (j + 1) + i), "entropy": float(10 * seed - j)}
                for j, r in enumerate(readings) for i, m in enumerate(AUTHORS_METHODS)]
        (run / "result.json").write_text(json.dumps({"results": {"rows": rows}}))
        (run / "run.json").write_text(json.dumps({"seconds": 1.0, "status": "ok"}))
    rep = load_excess_sweep(tmp_path, 100)
    assert list(dict.fromkeys(rep["reading"])) == [r for r in EXCESS_READINGS if r in (*readings, "small n too")]
    got = rep[rep.reading == "small n too"].set_index(["seed", "method"])
    covered = rep[rep.reading.isin(UNION_READINGS["small n too"])].groupby(["seed", "method"])[["gini", "entropy"]].max()
    pd.testing.assert_frame_equal(got[["gini", "entropy"]].sort_index(), covered.sort_index())
    # the saved union reading is kept as saved, not derived again
    saved = rep[rep.reading == "all the paper's tables"]
    assert sorted(saved.gini) == sorted(5.0 * s + i for s in (1, 2) for i in range(len(AUTHORS_METHODS)))


def test_a_sweep_at_another_number_of_tables_is_refused(tmp_path):
    folder = _fake_sweep(tmp_path, [1], n_tables=500)
    with pytest.raises(ValueError, match=r"n_tables = 10000 \(finished points have n_tables in \[500\]\)"):
        load_excess_sweep(folder, 10000)


def test_the_point_notebook_runs_known_readings_and_its_grid_is_the_papers_tables():
    params = notebook_parameters("sweeps/01-excess-point")
    assert set(params) >= {"seed", "n_tables", "result_path"}
    import yaml

    grid = yaml.safe_load((project_root() / "notebooks" / "sweeps" / "01-excess.yml").read_text())["grid"]
    assert grid["n_tables"] == [10000] and len(set(grid["seed"])) >= 8


def test_a_point_is_a_function_of_its_seed_and_the_union_is_the_largest_reading():
    """excess_readings is a function of its seed (a rerun of a point gives its record), and "all the paper's
    tables" is at least each reading it covers."""
    a = excess_readings(30, random_state=7, ns=(12,), ks=(3,), readings=["the paper's text", "entries 0..2",
                                                                         "all the paper's tables"])
    b = excess_readings(30, random_state=7, ns=(12,), ks=(3,), readings=["the paper's text", "entries 0..2",
                                                                         "all the paper's tables"])
    pd.testing.assert_frame_equal(a, b)
    union = a.loc["all the paper's tables"]
    assert (union >= a.loc["the paper's text"]).all().all() and (union >= a.loc["entries 0..2"]).all().all()
    assert set(a.index.get_level_values("reading")) <= set(EXCESS_READINGS)
