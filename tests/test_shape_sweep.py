"""The chapter 3 training sweep's records: read back as the notebook reads them, refused when they do not
match, and reproduced by a rerun of a committed point (Literati runs under an expansion budget, so a point's
Literati and greedy rows are the same on any machine; the peers run under a wall-clock limit and are not
compared)."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from treebook.datasets.shape_trees import FOLD_SEEDS
from treebook.notebooks import project_root
from treebook.shape.experiments import load_train_sweep, training_benchmark
from treebook.sweep import load_grid, read_runs

SWEEP = project_root() / "results" / "sweeps" / "03-train"


def _committed(dataset, fold, depth):
    for run in read_runs(SWEEP, "sweeps/03-train-point"):
        p = run.params
        if (p["dataset"], p["fold"], p["depth"]) == (dataset, fold, depth) and run.record is not None:
            return run
    return None


def _fake_sweep(tmp_path, points, **params):
    for i, (dataset, fold, depth) in enumerate(points):
        run = tmp_path / "runs" / f"p{i}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps({"dataset": dataset, "fold": fold, "depth": depth, **params}))
        rows = [{"dataset": dataset, "depth": depth, "method": "Literati K=1", "K": 1, "n": 10, "errors": fold,
                 "accuracy": 1 - fold / 10, "proved": True, "lower_bound": "nan", "time": 1.0, "fold": fold}]
        (run / "result.json").write_text(json.dumps({"results": {"rows": rows}}))
        (run / "run.json").write_text(json.dumps({"seconds": 2.5, "status": "ok"}))
    return tmp_path


def test_a_partial_sweep_is_read_only_when_asked(tmp_path):
    folder = _fake_sweep(tmp_path, [("bank", f, 3) for f in range(5)] + [("rice", 0, 3)], expansions=300)
    with pytest.raises(ValueError, match="4 of the 10 points"):
        load_train_sweep(folder, ["bank", "rice"], [3], expansions=300)
    df = load_train_sweep(folder, ["bank", "rice"], [3], partial=True, expansions=300)
    assert df.attrs["points"] == 6 and df.attrs["total"] == 10 and df.attrs["datasets_complete"] == ["bank"]
    assert df.attrs["seconds"] == pytest.approx(15.0)
    assert sorted(df[df.dataset == "bank"].fold) == [0, 1, 2, 3, 4] and np.isnan(df.lower_bound).all()
    full = load_train_sweep(folder, ["bank"], [3], expansions=300)
    assert len(full) == 5


def test_a_sweep_at_another_budget_is_refused(tmp_path):
    folder = _fake_sweep(tmp_path, [("bank", 0, 3)], expansions=300)
    with pytest.raises(ValueError, match="expansions = \\['300'\\], not 1000"):
        load_train_sweep(folder, ["bank"], [3], [0], expansions=1000)
    with pytest.raises(ValueError, match="not a parameter"):
        load_train_sweep(folder, ["bank"], [3], [0], budget=300)


def test_an_unfinished_point_is_not_read(tmp_path):
    folder = _fake_sweep(tmp_path, [("bank", 0, 3), ("bank", 1, 3)], expansions=300)
    shutil.move(folder / "runs" / "p1" / "result.json", folder / "runs" / "p1" / "result.json.failed")
    df = load_train_sweep(folder, ["bank"], [3], [0, 1], partial=True, expansions=300)
    assert df.attrs["points"] == 1 and list(df.fold) == [0]


def test_a_committed_point_reproduces():
    run = _committed("bank", 0, 3)
    if run is None:
        pytest.fail(f"the committed sweep in {SWEEP} lacks its bank, fold 0, depth 3 point")
    p = run.params
    rows = {r["method"]: r for r in run.record["results"]["rows"]}
    df = training_benchmark(["bank"], [3], Ks=tuple(p["Ks"]), max_expansions=p["expansions"],
                            candidates=p["candidates"], baselines=tuple(p["baselines"]), peers=(),
                            seed=FOLD_SEEDS[0])
    assert len(df) == len(p["Ks"]) + len(p["baselines"])
    for r in df.to_dict(orient="records"):
        stored = rows[r["method"]]
        assert (r["errors"], r["n"]) == (stored["errors"], stored["n"]), r["method"]
        if r["method"].startswith("Literati"):
            assert (bool(r["proved"]), r["n_expanded"], r["n_leaves"]) == (
                stored["proved"], stored["n_expanded"], stored["n_leaves"]), r["method"]
    assert Path(SWEEP / "runs" / run.name / "run.json").is_file()


def test_a_committed_point_of_the_proof_sweep_reproduces():
    """The proof-rate sweep (Literati K=3 alone, 20,000 expansions): a committed point is reproduced by a
    rerun, its proof flag and expanded states included."""
    folder = project_root() / "results" / "sweeps" / "03-proof"
    runs = [r for r in read_runs(folder, "sweeps/03-train-point") if r.record is not None
            and (r.params["dataset"], r.params["fold"], r.params["depth"]) == ("bank", 0, 3)]
    if not runs:
        pytest.fail(f"the committed sweep in {folder} lacks its bank, fold 0, depth 3 point")
    p = runs[0].params
    assert p["Ks"] == [3] and p["baselines"] == [] and p["peers"] == []
    (stored,) = runs[0].record["results"]["rows"]
    df = training_benchmark(["bank"], [3], Ks=(3,), max_expansions=p["expansions"], candidates=p["candidates"],
                            baselines=(), peers=(), seed=FOLD_SEEDS[0])
    (r,) = df.to_dict(orient="records")
    assert (r["errors"], r["n"], bool(r["proved"]), r["n_expanded"]) == (
        stored["errors"], stored["n"], bool(stored["proved"]), stored["n_expanded"])


def test_the_proof_retry_grid_holds_the_first_pass_unproved_points():
    """The proof rate's second pass runs exactly the points of every finished depth of the first pass that
    were not proved, Literati K=3 alone at a larger budget (the chapter counts a point proved when either
    run proves it)."""
    root = project_root()
    proof = load_grid(root / "notebooks" / "sweeps" / "03-proof.yml")["grid"]
    retry = load_grid(root / "notebooks" / "sweeps" / "03-proof-retry.yml")["points"]
    per_depth = len(proof["dataset"]) * len(proof["fold"])
    runs = [r for r in read_runs(root / "results" / "sweeps" / "03-proof", "sweeps/03-train-point")
            if r.record is not None]
    finished = {D: sum(r.params["depth"] == D for r in runs) for D in proof["depth"]}
    unproved = sorted((r.params["depth"], r.params["dataset"], r.params["fold"]) for r in runs
                      if finished[r.params["depth"]] == per_depth and not r.record["results"]["rows"][0]["proved"])
    assert unproved, "no finished depth of the first pass has an unproved point"
    assert sorted((q["depth"], q["dataset"], q["fold"]) for q in retry) == unproved
    for q in retry:
        assert q["expansions"] > proof["expansions"][0] and q["Ks"] == [3] and q["baselines"] == [] == q["peers"]
