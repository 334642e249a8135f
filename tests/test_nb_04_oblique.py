from nbfigures import assert_figures

from treebook.notebooks import run_notebook
from treebook.results import VERDICTS, recompute_slice


def test_notebook_oblique(tmp_path):
    executed, res = run_notebook("04-forest-autoencoders", profile="smoke", output_dir=tmp_path)
    r = res["results"]
    assert r["mnist_test_indices"] == [3, 2, 1, 18, 4, 8, 11, 0, 61, 7]
    seeds = r["mnist_seeds"]
    assert len(seeds) >= 2
    authors, ours = r["mnist"]["OF-AE (authors')"], r["mnist"]["OF-AE ours (improved)"]
    for m in (authors, ours):
        assert m["n"] == len(seeds) and m["n_failed_mean"] == 0 and m["fraction_reencoded_mean"] == 1.0
        assert 0.0 < m["ssim_paper10_mean"] <= 1.0 and m["ssim_paper10_sd"] >= 0.0
    # the per-seed runs are the ones summarised
    runs = [x for x in r["mnist_runs"] if x["method"] == "OF-AE (authors')"]
    assert sorted(x["seed"] for x in runs) == sorted(seeds)
    mean = sum(x["ssim_paper10"] for x in runs) / len(runs)
    assert abs(mean - authors["ssim_paper10_mean"]) < 1e-12
    assert "eForest (own decode, same depth)" in r["mnist"] and "eForest (own decode, full depth)" in r["mnist"]
    assert r["l1_ratio_max"] <= 1 + 1e-6
    assert r["max_inside_pixels"] <= r["m_rows_small"]
    assert abs(r["ssim_margin"] - r["ssim_closed"]) < 0.01
    pulp = r["solver_benchmark"]["solvers"]["pulp"]
    assert pulp["max_rel_gap_to_highs"] <= 1e-6
    assert 0.0 < r["solver_benchmark"]["density"] < 1.0
    assert set(r["directions"]) == {"pca", "svd", "ica", "fa", "grp"}
    assert r["diabetes_boxed_warnings"] == (r["diabetes_boxed_failed"] > 0)
    card = res["scorecard"]
    assert len(card) >= 6 and all(row["verdict"] in VERDICTS for row in card)
    assert not any("target" in str(row["paper"]).lower() and ">=" in str(row["paper"]) for row in card)
    # the smoke grids time 2 settings, whose exact one-sided trend p is 1/2: too few to show growth
    timing = [row["verdict"] for row in card if row["quantity"].startswith("fit time grows")]
    assert timing == ["differs: scale", "differs: scale"]
    # the record's slice (one seed of the MNIST comparison) recomputes exactly, as a stored record's must
    (entry,) = res["slices"]
    assert entry["function"] == "treebook.oblique.experiments:mnist_point" and entry["kwargs"]["seed"] == seeds[0]
    assert recompute_slice(entry) == entry["value"]
    assert_figures(executed, 6)
