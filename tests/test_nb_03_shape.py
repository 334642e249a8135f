import ast
import json

from nbfigures import assert_figures

from treebook.notebooks import load_profile, notebook_parameters, run_notebook
from treebook.shape.experiments import experiment_points, fit_point

LONG = 120  # the smoke run's "longer" budget: twice its ablation budget, three times its compression budget


def _long_sweep(folder):
    """A sweep folder holding the smoke profile's compression fits and the first ablation data set's seven
    fits at ``LONG`` expansions, as the committed longer sweeps hold the paper profile's."""
    p = {k: ast.literal_eval(v) for k, v in notebook_parameters("03-shape-trees").items()}
    p.update(load_profile("smoke")["03-shape-trees"])
    points = experiment_points(
        seed=p["seed"], candidates=p["candidates"], anytime_dataset=p["anytime_dataset"],
        anytime_depth=p["anytime_depth"], anytime_expansions=p["anytime_expansions"],
        ablation_datasets=p["ablation_datasets"], ablation_depth=p["ablation_depth"],
        ablation_expansions=p["ablation_expansions"], compression_dataset=p["compression_dataset"],
        compression_depth=p["compression_depth"], compression_lams=p["compression_lams"],
        compression_expansions=p["compression_expansions"], k1_datasets=p["datasets"], k1_depths=p["k1_depths"],
        k1_expansions=p["k1_expansions"], similarity_dataset=p["similarity_dataset"],
        similarity_expansions=p["similarity_expansions"])
    first, written = p["ablation_datasets"][0], []
    long = [{**q, "expansions": LONG} for q in points if q["experiment"] == "compression"
            or (q["experiment"] == "ablation" and q["dataset"] == first)]
    for i, q in enumerate(long):
        run = folder / "runs" / f"p{i}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps(q))
        fit = fit_point(**{k: v for k, v in q.items() if k != "contree_time_limit"})
        (run / "result.json").write_text(json.dumps({"results": {"fit": fit}}))
        (run / "run.json").write_text(json.dumps({"seconds": fit["seconds"], "status": "ok"}))
        written.append((q, fit))
    return p["ablation_datasets"], written


def test_notebook_shape(tmp_path):
    sets, written = _long_sweep(tmp_path / "long")
    assert len(sets) >= 2 and len(written) == 7 + 4
    executed, res = run_notebook("03-shape-trees", profile="smoke", output_dir=tmp_path, parameters={
        "ablation_long": str(tmp_path / "long"), "compression_long": str(tmp_path / "long"), "long_expansions": LONG})
    r = res["results"]
    # the longer fits: the first ablation data set (all seven finished) and the compression path are read from
    # them, the other ablation data set from this run's fits
    assert set(r["ablation_long_ranks"]) == {sets[0]} and len(r["compression_long"]) == 4
    assert r["long_expansions"] == LONG
    assert sorted((row["lam"], row["K"], row["objective"]) for row in r["compression_long"]) == sorted(
        (q["lam"], q["K"], fit["objective"]) for q, fit in written if q["experiment"] == "compression")
    rows = {row["quantity"]: row for row in res["scorecard"]}
    first = rows[f"ablation: rank of Literati (lookahead + round-robin) among 7 variants, {sets[0]}"]
    other = rows[f"ablation: rank of Literati (lookahead + round-robin) among 7 variants, {sets[1]}"]
    assert f"objective after {LONG:,} expansions" in first["note"] and "03-ablation-long.yml" in first["note"]
    assert first["ours"] == r["ablation_long_ranks"][sets[0]][f"{LONG:,}"]
    assert "objective after 60 expansions" in other["note"]
    comp = [row for q, row in rows.items() if q.startswith("compression:")]
    assert len(comp) == 1 and f"{LONG:,} expansions per fit" in comp[0]["note"]
    assert r["oracle_all_equal"] and r["oracle_runs"] >= 8
    methods = {row["method"] for row in r["training"]}
    assert {"CART", "ShapeCART", "Literati K=1"} <= methods
    for row in r["training"]:
        assert 0 <= row["errors"] <= row["n"]
    for trace in r["anytime"].values():
        assert all(b <= a + 1e-9 for a, b in zip(trace["upper"], trace["upper"][1:]))
        assert all(lo <= up + 1e-9 for lo, up in zip(trace["lower"], trace["upper"]))
    assert len(r["ablation"]) == 7 * len(sets) and len(r["compression"]) >= 2
    assert any(row["quantity"].startswith("test accuracy") for row in res["scorecard"])
    # the random search ran through the sweep, every configuration succeeded
    assert {row["method"] for row in r["search"]} == {"CART", "ShapeCART", "Literati"}
    assert all(row["status"] == "ok" and 0 <= row["test_acc"] <= 1 for row in r["search"])
    # K=1 over every midpoint proves depth 2 and 3 on the smoke sets; the similarity search proves too
    assert all(row["proved"] for row in r["k1_vs_contree"])
    assert any(row["similarity"] and row["proved"] for row in r["similarity"])
    assert any(row["method"].startswith("Literati-all") for row in r["training"])
    # every Literati run of the benchmark stayed within its budget of expanded states
    b = r["budgets"]
    for row in r["training"]:
        if row["method"].startswith("Literati"):
            assert row["n_expanded"] <= b["all_expansions" if row["method"].startswith("Literati-all") else "expansions"]
    assert_figures(executed, 5)  # the longer ablation fits add one
