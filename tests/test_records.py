"""Scorecard verdicts, record slices, stored paper-scale records and the book's HTML checks."""

import numpy as np
import pytest

from treebook.notebooks import project_root, run_notebook
from treebook.results import (
    VERDICTS,
    check_verdicts,
    load_results,
    paper_digits,
    recompute_slice,
    record_slice,
    reproduce_slices,
    save_results,
    scorecard_frame,
    scorecard_row,
    store_record,
    stored_records_dir,
)

ROOT = project_root()
PROVENANCE = {"commit", "date", "profile", "parameters", "cpu_model", "cpu_count", "wall_seconds", "cpu_seconds"}


def test_a_tolerance_lets_the_numbers_decide_the_verdict():
    assert scorecard_row("a", 50.0, 51.0, tolerance=1.5)["verdict"] == "agrees"
    assert scorecard_row("a", 50.0, 52.0, tolerance=1.5)["verdict"] == "differs: unexplained"
    assert scorecard_row("a", 50.0, 52.0, tolerance=1.5, verdict="differs: scale")["verdict"] == "differs: scale"
    # within the tolerance the row agrees whatever excuse it was given for the other case
    assert scorecard_row("a", 50.0, 50.5, tolerance=1.0, verdict="differs: scale")["verdict"] == "agrees"
    with pytest.raises(ValueError, match="cannot agree"):
        scorecard_row("a", 50.0, 60.0, tolerance=1.0, verdict="agrees")
    with pytest.raises(ValueError, match="needs numbers"):
        scorecard_row("a", "holds", 60.0, tolerance=1.0)
    with pytest.raises(ValueError, match="needs a verdict"):
        scorecard_row("a", None, 3)
    with pytest.raises(ValueError, match="must be one of"):
        scorecard_row("a", None, 3, verdict="close enough")
    with pytest.raises(ValueError, match="'inherent:' or 'removable:'"):
        scorecard_row("a", 1, 3, verdict="differs: protocol")
    with pytest.raises(ValueError, match="'inherent:' or 'removable:'"):
        scorecard_row("a", 1, 3, "a smaller grid", verdict="differs: protocol")
    assert scorecard_row("a", 1, 3, "removable: the paper's grid", verdict="differs: protocol")["verdict"] \
        == "differs: protocol"
    assert scorecard_row("a", 1, 3, "inherent: data we do not have", verdict="differs: protocol")["verdict"] \
        == "differs: protocol"
    # the note is checked even when the numbers agree: another profile's numbers may not
    with pytest.raises(ValueError, match="'inherent:' or 'removable:'"):
        scorecard_row("a", 1, 1, "a smaller grid", tolerance=0.5, verdict="differs: protocol")
    # a comparison of ours carries no tolerance: the paper gives no value to be near
    assert scorecard_row("c", "no value", 0.5, verdict="our comparison")["verdict"] == "our comparison"
    with pytest.raises(ValueError, match="no paper value"):
        scorecard_row("c", 0.4, 0.5, tolerance=0.2, verdict="our comparison")
    row = scorecard_row("x", 1.5, np.float32(2.0), "note", tolerance=0.1, verdict="differs: scale")
    assert row["difference"] == pytest.approx(0.5) and row["digits"] == 1 and row["tolerance"] == 0.1
    assert scorecard_row("q", "holds", "holds", verdict="agrees")["difference"] is None


def test_a_protocol_row_must_say_whether_its_deviation_is_inherent_or_removable():
    ok = scorecard_row("a", 1, 3, "inherent: data we do not have", verdict="differs: protocol")
    check_verdicts([ok])
    with pytest.raises(ValueError, match="neither 'inherent:' nor 'removable:'"):
        check_verdicts([{**ok, "note": "a smaller grid"}], where="old record")


def test_paper_digits():
    assert [paper_digits(v) for v in (29.5, 0.38, 3, 181.5, 100.0, "holds", None)] == [1, 2, 0, 1, 0, None, None]


def test_a_record_without_verdicts_is_refused(tmp_path):
    with pytest.raises(ValueError, match="without a valid verdict"):
        save_results(tmp_path / "r.json", {}, [{"quantity": "q", "paper": 1, "ours": 1}])
    assert not (tmp_path / "r.json").exists()
    check_verdicts([{"quantity": "q", "verdict": v, "note": "inherent: a reason"} for v in VERDICTS])


def test_records_round_trip_with_slices(tmp_path):
    row = scorecard_row("x", 1.5, np.float32(2.0), "note", tolerance=1.0)
    sl = record_slice(paper_digits, {"paper": 2.25}, 2, "digits of 2.25")
    assert sl["function"] == "treebook.results:paper_digits"
    rec = save_results(tmp_path / "r.json", {"a": np.arange(3), "b": np.float64(np.inf), "c": {"d": np.bool_(True)}},
                       [row], [sl])
    back = load_results(tmp_path / "r.json")
    assert back == rec and back["results"] == {"a": [0, 1, 2], "b": "inf", "c": {"d": True}}
    assert recompute_slice(back["slices"][0]) == back["slices"][0]["value"]
    assert reproduce_slices(tmp_path / "r.json")[0] == []
    # a value the code does not compute fails under every OpenBLAS kernel, in this process and in fresh ones
    wrong = record_slice(paper_digits, {"paper": 2.25}, 3, "digits of 2.25, stored wrong")
    save_results(tmp_path / "w.json", {}, [row], [sl, wrong])
    assert reproduce_slices(tmp_path / "w.json")[0] == ["digits of 2.25, stored wrong"]
    assert save_results(None, {"a": 1})["results"] == {"a": 1}
    with pytest.raises(ValueError, match="treebook module-level"):
        record_slice(np.mean, {}, 0)


def test_store_a_run_with_its_provenance(tmp_path):
    executed, res = run_notebook("00-tree-core", profile="smoke", parameters={"n_repeats": 1},
                                 output_dir=tmp_path / "run")
    assert PROVENANCE <= set(res["provenance"]) and res["provenance"]["profile"] == "smoke"
    assert res["provenance"]["parameters"]["n_repeats"] == 1 and res["provenance"]["wall_seconds"] > 0
    root = tmp_path / "repo"
    dst = store_record(executed.with_suffix(".json"), root=root)
    assert dst == stored_records_dir(root) / "00-tree-core.json" and load_results(dst) == res
    plain = tmp_path / "plain.json"
    save_results(plain, {}, [])
    with pytest.raises(ValueError, match="no provenance"):
        store_record(plain, root=root)
    frame = scorecard_frame(res["scorecard"], "00-tree-core", log=lambda *_: None)
    assert list(frame.columns[:6]) == ["quantity", "paper", "ours", "paper-scale", "tolerance", "paper-scale verdict"]


def _stored():
    return sorted(stored_records_dir(ROOT).glob("*.json"))


def test_at_least_one_paper_scale_record_is_stored():
    assert _stored(), "no paper-scale record under results/paper/"


@pytest.mark.parametrize("path", _stored(), ids=lambda p: p.stem)
def test_a_stored_record_reproduces(path):
    """Every stored paper-scale record names its provenance and its slices recompute exactly (under the
    OpenBLAS kernel of the run that stored it, when this process's kernel breaks a tie otherwise)."""
    rec = load_results(path)
    assert PROVENANCE <= set(rec["provenance"]), f"{path.name}: incomplete provenance"
    assert rec["provenance"]["profile"] == "paper"
    assert (ROOT / "notebooks" / f"{path.stem}.ipynb").is_file()
    check_verdicts(rec["scorecard"], where=path.name)
    assert rec["slices"], f"{path.name} has no slice to recompute"
    failed, kernel = reproduce_slices(path)
    assert not failed, f"{path.name}: slices {failed} no longer reproduce (OpenBLAS kernel {kernel})"


def test_a_small_book_shows_every_figure_and_loads_nothing_from_outside(tmp_path):
    from treebook.book import check_html, image_outputs, prepare_for_book, run_jupyter_book, stage_sources

    stage = tmp_path / "stage"
    stage_sources(ROOT, stage)
    (stage / "_toc.yml").write_text("format: jb-book\nroot: notebooks/00-tree-core\n")
    executed, _ = run_notebook("00-tree-core", profile="smoke", parameters={"n_repeats": 1},
                               output_dir=stage / "notebooks")
    (executed.with_suffix(".json")).unlink()
    prepare_for_book(executed)
    html = run_jupyter_book(stage, tmp_path / "build.log")
    pages = {"notebooks/00-tree-core": executed}
    assert image_outputs(executed) >= 3
    assert check_html(html, pages) == []
    page = (html / "notebooks" / "00-tree-core.html").read_text()
    assert page.count("<figcaption") >= 3 and "Fig. 1" in page
    # an external script is reported, and so is a page with fewer images than its notebook
    (html / "extra.html").write_text('<html><script src="https://cdn.example.org/x.js"></script></html>')
    external = "extra.html: loads https://cdn.example.org/x.js from outside the build"
    assert check_html(html, pages) == [external]
    (html / "notebooks" / "00-tree-core.html").write_text(page.replace("<img", "<span"))
    assert check_html(html, pages)[0].startswith("notebooks/00-tree-core: 0 <img> on the page")


def _cell(kind, source, **extra):
    cell = {"cell_type": kind, "metadata": extra.pop("metadata", {}), "source": source}
    if kind == "code":
        cell.update(outputs=extra.pop("outputs", []), execution_count=None)
    return cell


def test_a_prose_edit_reuses_the_outputs_and_only_images_carry_a_caption(tmp_path):
    import json

    from treebook.book import code_key, merge_prose

    png = {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}, "metadata": {}}
    table = {"output_type": "execute_result", "data": {"text/html": "<table/>"}, "metadata": {}, "execution_count": 2}
    figure = {"mystnb": {"figure": {"name": "fig-x", "caption": "A figure."}}}
    src = {"cells": [_cell("markdown", "# Old title"), _cell("code", "a = 1", metadata={"tags": ["parameters"]}),
                     _cell("code", "plot(a)", metadata=figure)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    ran = json.loads(json.dumps(src))
    ran["cells"].insert(2, _cell("code", "a = 2", metadata={"tags": ["injected-parameters"]}))
    ran["cells"][3]["outputs"] = [table, png]
    (tmp_path / "src.ipynb").write_text(json.dumps(src))
    (tmp_path / "raw.ipynb").write_text(json.dumps(ran))
    key = code_key(tmp_path / "src.ipynb", {"a": 2}, "lib")
    src["cells"][0]["source"] = "# New title"
    src["cells"][2]["metadata"]["mystnb"]["figure"]["caption"] = "A better caption."
    (tmp_path / "src.ipynb").write_text(json.dumps(src))
    assert code_key(tmp_path / "src.ipynb", {"a": 2}, "lib") == key  # prose and captions do not count
    assert code_key(tmp_path / "src.ipynb", {"a": 3}, "lib") != key
    merge_prose(tmp_path / "src.ipynb", tmp_path / "raw.ipynb", tmp_path / "book.ipynb")
    cells = json.loads((tmp_path / "book.ipynb").read_text())["cells"]
    assert cells[0]["source"] == "# New title"
    assert "remove-cell" in cells[2]["metadata"]["tags"]  # the injected parameters, hidden
    assert cells[3]["outputs"] == [table] and "mystnb" not in cells[3]["metadata"]
    assert cells[4]["outputs"] == [png] and "remove-input" in cells[4]["metadata"]["tags"]
    assert cells[4]["metadata"]["mystnb"]["figure"]["caption"] == "A better caption."
    src["cells"][2]["source"] = "plot(a + 1)"
    (tmp_path / "src.ipynb").write_text(json.dumps(src))
    assert code_key(tmp_path / "src.ipynb", {"a": 2}, "lib") != key  # code does


@pytest.mark.parametrize("path", _stored(), ids=lambda p: p.stem)
def test_a_scale_row_shows_the_paper_scale_verdict_where_that_run_does_not_agree(path):
    """The scorecards' rule, over every row of every stored record: a book row excused by scale shows the
    stored paper-scale verdict unless that run agrees; every other verdict is kept as it is."""
    stored = load_results(path)["scorecard"]
    book = [{**row, "verdict": "differs: scale", "tolerance": None} for row in stored]
    frame = scorecard_frame(book, path.stem, log=lambda *_: None)
    assert len(frame) == len(stored)
    for row, shown in zip(stored, frame.itertuples()):
        assert shown.verdict == ("differs: scale" if row["verdict"] == "agrees" else row["verdict"]), row["quantity"]
    kept = scorecard_frame([{**row, "verdict": "differs: protocol", "note": "inherent: x"} for row in stored[:3]],
                           path.stem, log=lambda *_: None)
    assert (kept.verdict == "differs: protocol").all()


def test_a_scorecard_table_keeps_every_cell_whole_and_badges_the_verdicts():
    """The chapters' scorecard display: no cell is cut (a plain frame cuts at 50 characters), each verdict
    cell carries its badge colour, an empty paper-scale verdict none, and the table takes the text's width."""
    import pandas as pd

    from treebook.results import VERDICT_COLOURS, scorecard_table

    note = "inherent: " + "a long reason " * 20
    frame = pd.DataFrame([{"quantity": "q" * 80, "paper": 1.0, "ours": 1.23456, "paper-scale": None,
                           "tolerance": 0.1, "paper-scale verdict": None, "verdict": "differs: protocol",
                           "note": note}])
    html = scorecard_table(frame).to_html()
    assert note.strip() in html and "q" * 80 in html and "..." not in html
    assert html.count(VERDICT_COLOURS["differs: protocol"]) == 1 and "1.235" in html
    assert "table-layout: fixed" in html and "width: 100%" in html


def test_the_paper_scale_verdict_overrides_a_smaller_runs_agreement_or_scale_but_nothing_else():
    from treebook.results import effective_verdict

    assert effective_verdict("agrees", "differs: unexplained") == "differs: unexplained"
    assert effective_verdict("differs: scale", "differs: unexplained") == "differs: unexplained"
    assert effective_verdict("agrees", "differs: scale") == "differs: scale"
    assert effective_verdict("differs: scale", "agrees") == "differs: scale"
    assert effective_verdict("agrees", None) == "agrees"
    assert effective_verdict("differs: protocol", "differs: unexplained") == "differs: protocol"
    assert effective_verdict("our comparison", "differs: scale") == "our comparison"
