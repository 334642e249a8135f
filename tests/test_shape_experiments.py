"""The chapter 3 experiments' fits (treebook.shape.experiments): deterministic under an expansion budget,
read back from a sweep folder as the notebook reads them, refused when a fit is missing, and the paper
profile's points written in the grid file that the README's sweep command runs."""

import ast
import json

import numpy as np
import pytest

from treebook.notebooks import notebook_parameters, project_root, read_yaml
from treebook.results import to_jsonable
from treebook.shape.experiments import (
    ABLATION_VARIANTS,
    experiment_points,
    fit_outcome,
    fit_point,
    outcome,
    read_experiments,
)
from treebook.sweep import load_grid, point_id, read_runs

ROOT = project_root()
SWEEP = ROOT / "results" / "sweeps" / "03-experiments"


def _chapter_points(p):
    """The points the chapter notebook asks for with the parameters ``p`` (as its cell does)."""
    return experiment_points(
        seed=p["seed"], candidates=p["candidates"], anytime_dataset=p["anytime_dataset"],
        anytime_depth=p["anytime_depth"], anytime_expansions=p["anytime_expansions"],
        ablation_datasets=p["ablation_datasets"], ablation_depth=p["ablation_depth"],
        ablation_expansions=p["ablation_expansions"], compression_dataset=p["compression_dataset"],
        compression_depth=p["compression_depth"], compression_lams=p["compression_lams"],
        compression_expansions=p["compression_expansions"], k1_datasets=p["k1_datasets"] or p["datasets"],
        k1_depths=p["k1_depths"], k1_expansions=p["k1_expansions"],
        contree_time_limit=p["contree_time_limit"] if p["use_peers"] else 0.0,
        similarity_dataset=p["similarity_dataset"], similarity_expansions=p["similarity_expansions"])


def test_the_grid_file_holds_the_paper_profiles_fits():
    p = {k: ast.literal_eval(v) for k, v in notebook_parameters("03-shape-trees").items()}
    p.update(read_yaml(ROOT / "notebooks" / "params" / "paper.yml")["03-shape-trees"])
    assert p["experiments_out"] == "../results/sweeps/03-experiments"
    points = _chapter_points(p)
    assert load_grid(ROOT / "notebooks" / "sweeps" / "03-experiments.yml")["points"] == points
    kinds = [q["experiment"] for q in points]
    assert kinds.count("ablation") == 7 * len(p["ablation_datasets"]) and kinds.count("anytime") == 3
    assert len({point_id(q) for q in points}) == len(points)


def test_a_fit_is_the_same_twice_and_within_its_budget():
    a = fit_point("ablation", "raisin", 3, 25, K=3, heuristic="admissible", and_rule="worst_primal", warm_start=0.0)
    b = fit_point("ablation", "raisin", 3, 25, K=3, heuristic="admissible", and_rule="worst_primal", warm_start=0.0)
    assert outcome(a) == outcome(b) and a["n_expanded"] <= 25
    tr = np.asarray(a["trace"])
    assert tr.shape[1] == 4 and np.all(np.diff(tr[:, 1]) <= 1e-9) and np.all(tr[:, 2] <= tr[:, 1] + 1e-9)
    assert a["objective"] == tr[-1, 1] and a["errors"] == round((1 - a["accuracy"]) * a["n"])
    assert a["seconds"] > 0 and a["cpu_seconds"] > 0


def test_k1_and_similarity_fits_search_every_midpoint_with_one_breakpoint():
    on = fit_point("similarity", "raisin", 2, 50, K=3, candidates="cart")  # K and candidates are the kind's
    off = fit_point("similarity", "raisin", 2, 50, similarity=False)
    k1 = fit_point("k1", "raisin", 2, 50, contree_time_limit=0.0)
    assert on["proved"] and k1["proved"] and on["errors"] == k1["errors"]
    # without the bounds the plain search never beats the optimum, and its lower bound never passes it
    assert off["errors"] >= on["errors"] and off["lower_bound"] <= on["errors"] + 1e-9
    assert "contree" not in k1


def test_compression_fits_trade_errors_for_leaves():
    fits = [fit_point("compression", "bank", 3, 30, K=1, lam=lam) for lam in (0.0, 50.0)]
    assert fits[1]["n_leaves"] <= fits[0]["n_leaves"] and fits[1]["errors"] >= fits[0]["errors"]
    # the objective is the errors plus the penalty of every node
    assert fits[1]["objective"] >= fits[1]["errors"] and fits[0]["objective"] == fits[0]["errors"]


def test_bad_fits_are_refused():
    with pytest.raises(ValueError, match="unknown experiment"):
        fit_point("anytimes", "rice", 3, 10)
    with pytest.raises(ValueError, match="positive number"):
        fit_point("anytime", "rice", 3, 0)


def _fake(tmp_path, points):
    for i, p in enumerate(points):
        run = tmp_path / "runs" / f"p{i}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps(p))
        fit = {"objective": 3.0, "errors": 3, "lower_bound": "nan", "proved": False, "n_leaves": 4, "n_expanded": 7,
               "trace": [[0.1, 3.0, 0.0, 7.0]], "seconds": 0.2, "cpu_seconds": 0.2, "n": 10, "accuracy": 0.7}
        (run / "result.json").write_text(json.dumps({"results": {"fit": fit}}))
        (run / "run.json").write_text(json.dumps({"seconds": 1.5, "status": "ok"}))
    return tmp_path


def test_fits_are_read_in_the_order_asked_and_a_missing_one_is_named(tmp_path):
    points = experiment_points(anytime_dataset="rice", anytime_depth=3, anytime_Ks=(1, 2), anytime_expansions=10,
                               ablation_datasets=["rice"], ablation_depth=3, ablation_expansions=10,
                               compression_dataset="bank", compression_depth=3, compression_lams=[0.0],
                               compression_expansions=10, k1_datasets=["raisin"], k1_depths=[2], k1_expansions=10,
                               similarity_dataset="raisin", similarity_expansions=10)
    assert len(points) == 2 + len(ABLATION_VARIANTS) + 2 + 1 + 2
    folder = _fake(tmp_path, points[::-1])
    df = read_experiments(folder, points)
    assert list(df.experiment) == [p["experiment"] for p in points] and np.isnan(df.lower_bound).all()
    assert (df.point_seconds == 1.5).all()
    with pytest.raises(ValueError, match="1 of the 14 fits have not finished"):
        read_experiments(_fake(tmp_path / "b", points[1:]), points)


def test_committed_fits_reproduce():
    """The committed paper-scale fits: the cheapest of every kind that has finished ones recomputes to the
    same tree, bounds and trace (their seconds are the machine's and are not compared)."""
    runs = [r for r in read_runs(SWEEP, "sweeps/03-fit-point") if r.record is not None]
    assert runs, f"the committed sweep in {SWEEP} has no finished fit"
    by_kind = {}
    for r in runs:
        by_kind.setdefault(r.params["experiment"], []).append(r)
    cheap = [min(rs, key=lambda r: r.record["results"]["fit"]["cpu_seconds"]) for rs in by_kind.values()]
    cheap = [r for r in cheap if r.record["results"]["fit"]["cpu_seconds"] <= 10]
    # the K=1 fits over every midpoint at depth 2 and 3 and the similarity fit with its bounds take under a second
    assert {r.params["experiment"] for r in cheap} >= {"k1", "similarity"}, [r.params for r in cheap]
    for r in cheap:
        params = {k: v for k, v in r.params.items() if k != "result_path"}
        assert to_jsonable(fit_outcome(**params)) == to_jsonable(outcome(r.record["results"]["fit"])), params
