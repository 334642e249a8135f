from nbfigures import assert_figures

from treebook.notebooks import run_notebook


def test_notebook_shape(tmp_path):
    executed, res = run_notebook("03-shape-trees", profile="smoke", output_dir=tmp_path)
    r = res["results"]
    assert r["oracle_all_equal"] and r["oracle_runs"] >= 8
    methods = {row["method"] for row in r["training"]}
    assert {"CART", "ShapeCART", "Literati K=1"} <= methods
    for row in r["training"]:
        assert 0 <= row["errors"] <= row["n"]
    for trace in r["anytime"].values():
        assert all(b <= a + 1e-9 for a, b in zip(trace["upper"], trace["upper"][1:]))
        assert all(lo <= up + 1e-9 for lo, up in zip(trace["lower"], trace["upper"]))
    assert len(r["ablation"]) == 7 and len(r["compression"]) >= 2
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
    assert_figures(executed, 4)
