from nbfigures import assert_figures

from treebook.notebooks import run_notebook


def test_notebook_nominal(tmp_path):
    executed, res = run_notebook("01-nominal-partitions", profile="smoke", output_dir=tmp_path)
    r = res["results"]
    assert r["hcc_max_ratio_to_opt"] <= 2 + 1e-9
    assert r["win_rtol"] == 1e-9
    # the win percentages are percentages and HcC wins (almost) always at n = 12
    assert all(0 <= v <= 100 for v in r["wins"].values())
    assert all(v >= 90 for key, v in r["wins"].items() if key.split("|")[1] == "n=12" and "|hcc|" in key)
    # every exact-ratio summary is at least 1 and HcC's worst case is within Theorem 3.5
    assert all(s["mean"] >= 1 - 1e-9 for s in r["exact_ratio"].values())
    assert set(r["table4"]) == {"lca", "hcc"}
    assert all(0.0 < a <= 1.0 for a in r["cv_accuracy"].values())
    quantities = [row["quantity"] for row in res["scorecard"]]
    assert any(q.startswith("Tables 1-2") for q in quantities)
    assert any(q.startswith("Table 4") for q in quantities)
    assert_figures(executed, 6)
    # Tables 1-2 are compared with the authors' PCext; Coppersmith's is kept beside it
    assert set(r["mean_abs_diff_pcext_k3"]) == {"authors' PCext (count rows)", "Coppersmith's PCext"}
    assert any("pcext_counts" in key for key in r["wins"]) and r["wins_coppersmith_pcext"]
    # Table 4 ran under the authors' tree rules, with their PCext and SLIQext; SLIQext as published beside them
    assert r["tree_rules"]["prepruning"] == "chi2" and "pcext_counts" in r["cv_splitters"]
    assert {"sliqext_authors", "sliqext"} <= set(r["cv_splitters"])
    assert any(q.startswith("Table 4: lca vs sliqext_authors") for q in quantities)
    assert not any(q.startswith("Table 4: lca vs sliqext ") for q in quantities)  # no paper value for ours
    assert res["slices"] and res["slices"][0]["function"].endswith(":win_cell")
    # the tail of PCext-Entropy's excess: the local search starts from the k = 3 table with the largest excess
    tail = r["excess_tail"]
    assert tail["tables"] > 0 and 0.0 <= tail["draw_probability_upper95"] <= 1.0
    largest_k3 = max(c["largest"] for key, c in tail["cells"].items() if "|k=3|" in key)
    assert tail["climb_excess"] >= largest_k3 - 1e-9
    pcext = next(row for row in res["scorecard"] if row["quantity"] == "max relative excess % of pcext_counts (entropy)")
    assert "its tail" in pcext["note"]
