from nbfigures import assert_figures

from treebook.notebooks import run_notebook


def test_notebook_oblique(tmp_path):
    executed, res = run_notebook("04-forest-autoencoders", profile="smoke", output_dir=tmp_path)
    r = res["results"]
    ofae = r["mnist"]["OF-AE HHCART"]
    assert ofae["n_failed"] == 0 and ofae["fraction_reencoded"] == 1.0
    assert 0.0 < ofae["mean_ssim"] <= 1.0
    assert r["l1_ratio_max"] <= 1 + 1e-6
    assert r["max_inside_pixels"] <= r["m_rows_small"]
    assert abs(r["ssim_margin"] - r["ssim_closed"]) < 0.01
    pulp = r["solver_benchmark"]["solvers"]["pulp"]
    assert pulp["max_rel_gap_to_highs"] <= 1e-6
    assert set(r["directions"]) == {"pca", "svd", "ica", "fa", "grp"}
    assert len(res["scorecard"]) >= 3 and all(row["verdict"] == "agrees" for row in res["scorecard"])
    assert_figures(executed, 6)
