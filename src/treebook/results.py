"""The JSON record each chapter notebook writes (its ``result_path`` parameter), and stored records.

A record has three parts: ``results``, the chapter's key numbers (free-form, JSON-able);
``scorecard``, rows of "paper's value — ours — verdict" that the book's scorecard page gathers from
every chapter; and ``slices``, small deterministic pieces of the computation (one table cell, one
fold, one configuration) with the value the run obtained, which a test recomputes to check that a
stored record still reproduces.

Every scorecard row carries a **verdict**, one of :data:`VERDICTS`:

``agrees``
    ours is within the row's stated ``tolerance`` of the paper's value (or, for a qualitative claim,
    the claim holds in the run);
``differs: scale``
    a run smaller than the paper's (fewer tables, folds, seconds); the paper-scale record agrees or
    has not been run;
``differs: protocol``
    a named deviation from the paper's protocol (the row's note names it);
``differs: unexplained``
    a difference we cannot account for;
``our comparison``
    the paper reports no value for the quantity: the row is a comparison of ours (its ``paper``
    column says what the paper does say), shown beside the reproduction and never counted as one.

A ``differs: protocol`` row's note says whether its deviation is ``inherent:`` (a data set we do
not have, a peer whose code is not public, a wall-clock budget on another machine, a named variant
of ours shown beside the authors' method) or ``removable:`` (more compute would remove it), with
the reason after the colon.

With a ``tolerance`` the numbers decide: within it the row ``agrees``, outside it the row takes the
``verdict`` given for that case (``differs: unexplained`` by default); a row claiming ``agrees``
against its own tolerance is an error. A row without numbers to compare must name its verdict.

Paper-scale runs are kept in the repository as ``results/paper/<notebook stem>.json``:
:func:`store_record` adds their provenance (commit, date, profile, parameters, CPU, wall and CPU
seconds) and :func:`stored_record` reads them back for the chapters and the scorecard.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

from .files import project_root, write_atomic

__all__ = ["VERDICTS", "PROTOCOL_KINDS", "to_jsonable", "scorecard_row", "check_verdicts", "paper_digits", "record_slice",
           "recompute_slice", "save_results", "load_results", "provenance", "store_record", "stored_record",
           "stored_records_dir", "paper_scale_value", "effective_verdict", "scorecard_frame", "scorecard_table",
           "verdict_badge_css", "VERDICT_COLOURS", "code_state"]

#: the verdicts a scorecard row may carry
VERDICTS = ("agrees", "differs: scale", "differs: protocol", "differs: unexplained", "our comparison")

#: the chapter label of a record (by the first two characters of its notebook's name) on the scorecard page
CHAPTER_LABELS = {"00": "0 tree core", "01": "1 nominal", "02": "2 interval", "03": "3 shape", "04": "4 oblique"}


def chapter_label(stem: str) -> str:
    """The scorecard page's label of the chapter whose notebook is ``stem`` (``stem`` itself if none)."""
    return CHAPTER_LABELS.get(stem[:2], stem)


#: the words one of which a ``differs: protocol`` row's note must contain
PROTOCOL_KINDS = ("inherent:", "removable:")


def to_jsonable(obj):
    """Convert numpy scalars/arrays, pandas objects, tuples and paths into plain JSON types."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else str(f)
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return obj


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_)) and math.isfinite(float(x))


def paper_digits(paper) -> int | None:
    """Decimals the paper reports for ``paper`` (from its shortest repr): 29.5 -> 1, 0.38 -> 2, 3 -> 0."""
    if isinstance(paper, (int, np.integer)) and not isinstance(paper, bool):
        return 0
    if not _is_number(paper):
        return None
    text = repr(float(paper))
    if "e" in text:
        return None
    frac = text.split(".")[1].rstrip("0")
    return min(len(frac), 4)


def scorecard_row(quantity: str, paper, ours, note: str = "", *, tolerance: float | None = None,
                  verdict: str | None = None, digits: int | None = None) -> dict:
    """One scorecard row with its verdict.

    ``tolerance`` (absolute, in the quantity's units) makes the numbers decide the verdict:
    ``agrees`` when ``|ours - paper| <= tolerance``, otherwise ``verdict`` (default
    ``"differs: unexplained"``). Without a tolerance ``verdict`` is required. ``digits`` is the
    precision the paper reports (inferred from its value when omitted); the scorecard rounds both
    numbers to it. ``difference`` is ``ours - paper`` when both are numbers.
    """
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"scorecard row {quantity!r}: verdict must be one of {VERDICTS}; got {verdict!r}")
    if verdict == "our comparison" and tolerance is not None:
        raise ValueError(f"scorecard row {quantity!r}: 'our comparison' has no paper value to be within a "
                         "tolerance of")
    requested = verdict
    numeric = _is_number(paper) and _is_number(ours)
    diff = float(ours) - float(paper) if numeric else None
    if tolerance is not None:
        if not numeric:
            raise ValueError(f"scorecard row {quantity!r}: a tolerance needs numbers for paper and ours "
                             f"(got {paper!r}, {ours!r})")
        if not (math.isfinite(tolerance) and tolerance >= 0):
            raise ValueError(f"scorecard row {quantity!r}: tolerance must be finite and >= 0; got {tolerance!r}")
        if abs(diff) <= tolerance + 1e-12 * max(1.0, abs(float(paper))):
            verdict = "agrees"
        elif verdict == "agrees":
            raise ValueError(f"scorecard row {quantity!r}: |ours - paper| = {abs(diff):g} exceeds the "
                             f"tolerance {tolerance:g}, so the row cannot agree")
        else:
            verdict = verdict or "differs: unexplained"
    elif verdict is None:
        raise ValueError(f"scorecard row {quantity!r} needs a verdict (one of {VERDICTS}) or a tolerance")
    # checked whether or not the numbers end in that verdict: a profile whose numbers happen to agree
    # must not hide a note that a paper-scale run would need
    if "differs: protocol" in (requested, verdict) and not any(kind in note for kind in PROTOCOL_KINDS):
        raise ValueError(f"scorecard row {quantity!r}: a 'differs: protocol' note must say whether the "
                         f"deviation is 'inherent:' or 'removable:' and why; got {note!r}")
    if digits is None:
        digits = paper_digits(paper)
    return to_jsonable({"quantity": quantity, "paper": paper, "ours": ours, "difference": diff,
                        "tolerance": tolerance, "verdict": verdict, "digits": digits, "note": note})


def check_verdicts(rows, where: str = "scorecard") -> None:
    """Raise ``ValueError`` naming every row of ``rows`` that has no valid verdict, or a ``differs:
    protocol`` verdict whose note does not say whether the deviation is inherent or removable."""
    bad = [r.get("quantity", "?") for r in rows if r.get("verdict") not in VERDICTS]
    if bad:
        raise ValueError(f"{where}: {len(bad)} row(s) without a valid verdict: {bad[:5]}")
    vague = [r.get("quantity", "?") for r in rows if r.get("verdict") == "differs: protocol"
             and not any(kind in (r.get("note") or "") for kind in PROTOCOL_KINDS)]
    if vague:
        raise ValueError(f"{where}: {len(vague)} 'differs: protocol' row(s) whose note says neither 'inherent:' "
                         f"nor 'removable:': {vague[:5]}")


def record_slice(function, kwargs: dict, value, label: str = "") -> dict:
    """A deterministic piece of a run: ``function(**kwargs)`` returned ``value``.

    ``function`` is a module-level callable of treebook (or its ``"module:qualname"``); a test
    recomputes the slices of every stored record (:func:`recompute_slice`) and compares exactly.
    """
    name = function if isinstance(function, str) else f"{function.__module__}:{function.__qualname__}"
    mod, _, qual = name.partition(":")
    if not mod.startswith("treebook") or not qual:
        raise ValueError(f"a slice function must be a treebook module-level callable; got {name!r}")
    return to_jsonable({"function": name, "kwargs": kwargs, "value": value, "label": label})


def recompute_slice(entry: dict):
    """Call a slice's function with its keyword arguments and return its value (JSON-able)."""
    mod, _, qual = entry["function"].partition(":")
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return to_jsonable(obj(**entry["kwargs"]))


#: OpenBLAS's kernels for x86-64, tried in this order when a stored slice does not reproduce under the kernel
#: this process runs: LAPACK's last bits depend on the kernel (an eigenvector, a PCA direction), and a tie
#: broken by them can move a Monte Carlo percentage or an LP's vertex
BLAS_KERNELS = ("SkylakeX", "Haswell", "Zen", "Sandybridge")


def blas_kernel() -> str | None:
    """The OpenBLAS kernel (``OPENBLAS_CORETYPE`` name) numpy's linear algebra runs in this process, or None."""
    for lib in threadpool_info():
        if lib.get("internal_api") == "openblas" and lib.get("architecture"):
            return str(lib["architecture"])
    return None


def unreproduced_slices(record: dict) -> list[str]:
    """Labels of the record's slices whose function no longer returns the stored value in this process."""
    return [e["label"] for e in record["slices"] if recompute_slice(e) != e["value"]]


def reproduce_slices(path) -> tuple[list[str], str | None]:
    """Recompute a stored record's slices: ``(labels that do not reproduce, the OpenBLAS kernel they were
    checked under)``. Under this process's kernel first; if some differ, in a fresh process under the kernel
    the record's provenance names (``blas``), else under each of :data:`BLAS_KERNELS` in turn -- the code
    reproduces the record if the values are exact under one of them (a change of code changes them under all)."""
    record = load_results(path)
    failed = unreproduced_slices(record)
    here = blas_kernel()
    if not failed:
        return [], here
    named = record.get("provenance", {}).get("blas")
    kernels = [named] if named else [k for k in BLAS_KERNELS if k != here]
    script = ("import json, sys; from treebook.results import load_results, unreproduced_slices; "
              "print(json.dumps(unreproduced_slices(load_results(sys.argv[1]))))")
    for kernel in kernels:
        if kernel == here:
            continue
        out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                             env={**os.environ, "OPENBLAS_CORETYPE": kernel}, timeout=1800)
        if out.returncode == 0 and json.loads(out.stdout.strip().splitlines()[-1]) == []:
            return [], kernel
    return failed, here


def _write_json_atomic(path: Path, data) -> None:
    write_atomic(path, json.dumps(data, indent=2, allow_nan=False))


def save_results(result_path, results: dict, scorecard: list[dict] | None = None,
                 slices: list[dict] | None = None) -> dict:
    """Write ``{"results", "scorecard", "slices"}`` to ``result_path`` (if not None) and return it.

    Every scorecard row must carry a verdict (see :func:`scorecard_row`).
    """
    scorecard = to_jsonable(scorecard or [])
    check_verdicts(scorecard, where=str(result_path or "record"))
    record = {"results": to_jsonable(results), "scorecard": scorecard, "slices": to_jsonable(slices or [])}
    if result_path is not None:
        _write_json_atomic(Path(result_path), record)
    return record


def load_results(path) -> dict:
    """Read a record written by :func:`save_results`."""
    return json.loads(Path(path).read_text())


# ---------------------------------------------------------------------------- stored records
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(args, cwd) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def code_state(root=None) -> dict:
    """The checkout's commit, whether tracked files differ from it, and the time: taken when a run starts."""
    root = Path(root) if root is not None else project_root()
    dirty = _git(["status", "--porcelain", "--untracked-files=no"], root)
    return {"commit": _git(["rev-parse", "HEAD"], root), "dirty": bool(dirty) if dirty is not None else None,
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}


def provenance(profile: str, parameters: dict, wall_seconds: float, cpu_seconds: float, root=None,
               state: dict | None = None) -> dict:
    """Where and how a run was made: commit, date, profile, parameters, CPU and time. ``state`` is
    :func:`code_state` at the run's start (taken now when omitted)."""
    state = state or code_state(root)
    return to_jsonable({
        **state,
        "profile": profile, "parameters": {k: v for k, v in parameters.items() if k != "result_path"},
        "cpu_model": _cpu_model(), "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "blas": blas_kernel(), "wall_seconds": round(float(wall_seconds), 1), "cpu_seconds": round(float(cpu_seconds), 1),
    })


def stored_records_dir(root=None) -> Path:
    """``results/paper`` of the checkout: the stored paper-scale records."""
    return (Path(root) if root is not None else project_root()) / "results" / "paper"


def store_record(record_path, stem: str | None = None, root=None) -> Path:
    """Copy a run's record (with its ``provenance``) to ``results/paper/<stem>.json``; return the path.

    The record must come from :func:`treebook.notebooks.run_notebook` (which adds the provenance)
    and every scorecard row must carry a verdict.
    """
    record_path = Path(record_path)
    record = load_results(record_path)
    if "provenance" not in record:
        raise ValueError(f"{record_path} has no provenance: make it with `treebook run` (or run_notebook)")
    check_verdicts(record.get("scorecard", []), where=str(record_path))
    stem = stem or record_path.stem
    dst = stored_records_dir(root) / f"{stem}.json"
    _write_json_atomic(dst, record)
    return dst


def stored_record(stem: str, root=None) -> dict | None:
    """The stored paper-scale record of notebook ``stem``, or None when none is stored."""
    path = stored_records_dir(root) / f"{stem}.json"
    return load_results(path) if path.is_file() else None


def paper_scale_value(record: dict | None, quantity: str, field: str = "ours"):
    """``field`` of scorecard row ``quantity`` in a stored record (None when absent)."""
    for row in (record or {}).get("scorecard", []):
        if row.get("quantity") == quantity:
            return row.get(field)
    return None


def effective_verdict(verdict, paper_scale_verdict):
    """The verdict a scorecard shows for a row: an ``agrees`` or ``differs: scale`` row of the book's smaller
    run whose stored paper-scale run does not agree takes that run's verdict (the smaller run neither excuses
    nor settles what the paper-scale run says); any other row keeps its own."""
    if (verdict in ("agrees", "differs: scale") and isinstance(paper_scale_verdict, str)
            and paper_scale_verdict != "agrees"):
        return paper_scale_verdict
    return verdict


#: the colour of each verdict's badge (the chapters' scorecards and the scorecard page)
VERDICT_COLOURS = {"agrees": "#2e7d32", "differs: scale": "#ef6c00", "differs: protocol": "#1565c0",
                   "differs: unexplained": "#c62828", "our comparison": "#616161"}

#: the columns of a chapter's scorecard and their share of the table's width (per cent)
SCORECARD_WIDTHS = {"quantity": 20, "paper": 10, "ours": 12, "paper-scale": 11, "tolerance": 8,
                    "paper-scale verdict": 9, "verdict": 9, "note": 21}


def verdict_badge_css(verdict) -> str:
    """CSS of a table cell that shows ``verdict`` as a coloured badge (none for an empty cell)."""
    if not isinstance(verdict, str) or not verdict:
        return ""
    colour = VERDICT_COLOURS.get(verdict, "#616161")
    return (f"background-color: {colour}; color: white; border-radius: 4px; font-weight: bold; "
            "text-align: center")


def scorecard_table(frame, widths=None):
    """A scorecard frame (:func:`scorecard_frame`) for reading: a pandas ``Styler`` with every cell's whole
    text (a plain frame cuts long cells at 50 characters), wrapped within a table of the text's width, the
    verdicts as coloured badges, no index. ``widths`` maps columns to their share of the width (per cent;
    default :data:`SCORECARD_WIDTHS`)."""
    widths = SCORECARD_WIDTHS if widths is None else widths
    verdicts = [c for c in ("verdict", "paper-scale verdict") if c in frame.columns]
    return (frame.style.hide(axis="index")
            .format(precision=3, na_rep="")
            .set_table_styles([{"selector": "", "props": "width: 100%; table-layout: fixed;"},
                               {"selector": "th", "props": "font-size: 0.8em; overflow-wrap: break-word;"}]
                              + [{"selector": f"th.col{i}", "props": f"width: {widths[c]}%;"}
                                 for i, c in enumerate(frame.columns) if c in widths])
            .set_properties(**{"font-size": "0.78em", "white-space": "normal", "vertical-align": "top",
                               "overflow-wrap": "break-word", "text-align": "left"})
            .set_properties(subset=[c for c in ("note",) if c in frame.columns], **{"font-size": "0.72em"})
            .map(verdict_badge_css, subset=verdicts))


def scorecard_frame(rows, stem: str, log=print):
    """A chapter's scorecard as a DataFrame, with the stored paper-scale value of each row beside ours.

    The ``paper-scale`` column holds ``ours`` of the same quantity in ``results/paper/<stem>.json``
    (blank where no record is stored or it lacks the row); its provenance is printed first. The
    ``verdict`` column is the :func:`effective_verdict` of the row's own and the paper-scale one.
    """
    import pandas as pd

    rows = to_jsonable(list(rows))
    check_verdicts(rows, where=stem)
    stored = stored_record(stem)
    if stored is None:
        log(f"paper-scale record: none stored for {stem} (results/paper/{stem}.json)")
    else:
        p = stored.get("provenance", {})
        log(f"paper-scale record: profile {p.get('profile')!r}, commit {str(p.get('commit'))[:10]}, "
            f"{p.get('date')}, {p.get('cpu_count')} x {p.get('cpu_model')}, "
            f"{p.get('wall_seconds')} s wall, {p.get('cpu_seconds')} s CPU")
    frame = pd.DataFrame(rows, columns=["quantity", "paper", "ours", "tolerance", "verdict", "note"])
    frame.insert(3, "paper-scale", [paper_scale_value(stored, q) for q in frame.quantity])
    frame.insert(5, "paper-scale verdict", [paper_scale_value(stored, q, "verdict") for q in frame.quantity])
    frame["verdict"] = [effective_verdict(v, p) for v, p in zip(frame["verdict"], frame["paper-scale verdict"])]
    return frame
