from nbfigures import assert_figures

from treebook.notebooks import run_notebook


def test_notebook_tree_core(tmp_path):
    executed, res = run_notebook("00-tree-core", profile="smoke", output_dir=tmp_path)
    r = res["results"]
    assert r["mismatch_nodes"] == 0
    assert r["identical_nodes"] > 0
    assert r["test_agreement_no_tie_off_boundary"] == 1.0
    assert r["min_cost_decrease"] >= 0
    assert_figures(executed, 3)
