"""A sweep's records on disk: the files of a run folder, written whole and read back, which points
are finished and which run again, and the tables gathered from every run folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..files import write_atomic
from ..notebooks import (
    notebook_parameters,
)
from .grid import point_id

#: hidden files of a run folder: the attempt in progress, and the executed notebook while it runs
_RUNNING, _PARTIAL_NOTEBOOK = ".running", ".notebook.partial.ipynb"


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text)


def _read_json(path: Path):
    """``(value, problem)``: the JSON in ``path``, or None and why it cannot be used (``"missing"``, ...)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, "missing"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable ({exc})"
    if not text.strip():
        return None, "empty"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc})"


def _read_result(path: Path):
    """``(record, problem)`` for a run's ``result.json`` (a JSON object whose ``results`` is a mapping)."""
    record, problem = _read_json(path)
    if problem is None and not (isinstance(record, dict) and isinstance(record.get("results", {}), dict)):
        record, problem = None, "not a record (a JSON object with a 'results' mapping)"
    return record, problem




def copy_finished(source, out, points, base=None) -> list[str]:
    """Copy into ``out`` the finished runs of ``points`` that the sweep folder ``source`` holds, so that a
    sweep of those points into ``out`` reads them instead of running them; return the copied points' ids.

    A point is taken from ``source`` when its run folder there (``runs/<id>/``, the id of ``{**base,
    **point}``) has a readable ``result.json`` and a ``params.json`` equal to the point; its
    ``params.json``, ``result.json`` and ``run.json`` are copied. A point already finished in ``out`` is
    left alone, and ``source`` is only read (a committed sweep stays as committed)."""
    source, out = Path(source), Path(out)
    base = dict(base or {})
    copied = []
    for params in points:
        full = json.loads(json.dumps({**base, **params}, sort_keys=True, default=str))
        pid = point_id({**base, **params})
        src, dst = source / "runs" / pid, out / "runs" / pid
        if _read_result(dst / "result.json")[0] is not None:
            continue
        stored, problem = _read_json(src / "params.json")
        if problem is not None or stored != full or _read_result(src / "result.json")[0] is None:
            continue
        dst.mkdir(parents=True, exist_ok=True)
        for name in ("params.json", "run.json", "result.json"):  # the result last: it marks the point finished
            if (src / name).is_file():
                _write_text(dst / name, (src / name).read_text())
        copied.append(pid)
    return copied


class SweepRun(NamedTuple):
    """One run folder of a sweep, as :func:`read_runs` reads it."""

    name: str  #: the point's id (its folder's name)
    params: dict  #: the point notebook's defaults, overridden by the run's ``params.json``
    record: dict | None  #: ``result.json`` (None: the point did not finish, or its record cannot be read)
    seconds: float  #: the run's wall time from ``run.json`` (NaN where the folder has none)


def read_runs(folder, notebook) -> list[SweepRun]:
    """The run folders (``runs/<id>/``: ``params.json``, ``result.json``, ``run.json``, the files a sweep
    commits) of a sweep of the point notebook ``notebook`` in ``folder``, sorted by id. A parameter absent
    from a run's ``params.json`` has the notebook's default value; a folder without readable parameters is
    left out. No results table is needed: a fresh clone of committed run folders reads the same."""
    import ast

    defaults = {k: ast.literal_eval(v) for k, v in notebook_parameters(notebook).items()}
    root = Path(folder) / "runs"
    runs = []
    for run in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        params, _ = _read_json(run / "params.json")
        if not isinstance(params, dict):
            continue
        record, problem = _read_result(run / "result.json")
        info, _ = _read_json(run / "run.json")
        seconds = info.get("seconds") if isinstance(info, dict) else None
        runs.append(SweepRun(run.name, {**defaults, **params}, record if problem is None else None,
                             float(seconds) if isinstance(seconds, (int, float)) else float("nan")))
    return runs



def _started(run_dir: Path, token: str) -> bool:
    info, _ = _read_json(run_dir / _RUNNING)
    return isinstance(info, dict) and info.get("token") == token


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, (list, tuple)):
            out[key] = json.dumps(v)
        else:
            out[key] = v
    return out



def _clean_leftovers(folder: Path) -> None:
    """Remove the temporary files of writes that a killed sweep did not finish (under the folder's lock)."""
    for tmp in folder.glob(".*.tmp"):
        tmp.unlink(missing_ok=True)


def _plan(out: Path, points: list[dict], base: dict, log) -> tuple[dict, list]:
    """The current grid's points (``{id: (point, full params)}``) and those to run, checking every record.

    A finished point has a readable ``result.json`` (its other files may be missing: the records kept in
    the repository have only ``params.json`` and ``result.json``). A damaged ``result.json`` is reported
    by path, kept beside as ``result.json.damaged`` and the point runs again; so does a point whose run
    was interrupted before it wrote its result.
    """
    rows, todo = {}, []
    for params in points:
        full = {**base, **params}
        pid = point_id(full)
        rows[pid] = (params, full)
        run_dir = out / "runs" / pid
        if run_dir.is_dir():
            _clean_leftovers(run_dir)
            (run_dir / _RUNNING).unlink(missing_ok=True)
        result = run_dir / "result.json"
        record, problem = _read_result(result)
        if record is not None:
            partial = run_dir / _PARTIAL_NOTEBOOK
            if partial.is_file():  # killed after the result was written, before the notebook was moved
                if (run_dir / "notebook.ipynb").is_file():
                    partial.unlink()
                else:
                    os.replace(partial, run_dir / "notebook.ipynb")
            stored, p_problem = _read_json(run_dir / "params.json")
            if p_problem is not None or stored != json.loads(json.dumps(full, sort_keys=True, default=str)):
                why = p_problem or "differs from the point"
                log(f"{run_dir / 'params.json'}: {why}; written again from the grid (the result is kept)")
                _write_text(run_dir / "params.json", json.dumps(full, sort_keys=True, default=str))
            continue
        if problem != "missing":
            log(f"{result}: damaged record ({problem}); kept as result.json.damaged, the point runs again")
            os.replace(result, run_dir / "result.json.damaged")
        elif run_dir.is_dir() and not (run_dir / "error.txt").is_file():
            log(f"{result}: missing (its run did not finish); the point runs again")
        todo.append((pid, full))
    return rows, todo



def _row(out: Path, pid: str, full: dict | None, status: dict | None, log) -> dict:
    run_dir = out / "runs" / pid
    if full is None:
        full, problem = _read_json(run_dir / "params.json")
        if problem is not None or not isinstance(full, dict):
            log(f"{run_dir / 'params.json'}: {problem or 'not a mapping'}; the run's parameters are not in the table")
            full = {}
    rec = {"run_id": pid, **full}
    record, problem = _read_result(run_dir / "result.json")
    if record is not None:
        if not (status and status["status"] == "ok"):  # finished by an earlier sweep: its run.json has the time
            info, _ = _read_json(run_dir / "run.json")
            seconds = info.get("seconds") if isinstance(info, dict) else None
            status = {"status": "ok", "error": "", "seconds": seconds}
        rec.update(status)
        rec.update(_flatten(record.get("results", {})))
    else:
        if status is None:
            err = ""
            if (run_dir / "error.txt").is_file():
                err = (run_dir / "error.txt").read_text(errors="replace").partition("\n")[0]
            elif problem == "missing":
                err = "the run did not finish (no result.json)"
            else:
                err = f"result.json: {problem}"
            status = {"status": "failed", "error": err, "seconds": None}
        rec.update(status)
    rec["notebook"] = str(run_dir / "notebook.ipynb")
    return rec


def _gather(out: Path, rows: dict, statuses: dict, log) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The current grid's table and the table of every run folder in ``out/runs`` (the grid's rows first)."""
    current = [_row(out, pid, full, statuses.get(pid), log) for pid, (_params, full) in rows.items()]
    others = []
    for run_dir in sorted(p for p in (out / "runs").iterdir() if p.is_dir() and p.name not in rows):
        if not (run_dir / "params.json").exists() and not (run_dir / "result.json").exists():
            log(f"{run_dir}: neither params.json nor result.json; not in the table")
            continue
        others.append(_row(out, run_dir.name, None, None, log))
    return pd.DataFrame.from_records(current), pd.DataFrame.from_records(current + others)


def _write_tables(out: Path, table: pd.DataFrame) -> None:
    import io

    write_atomic(out / "results.csv", table.to_csv(index=False))
    buf = io.BytesIO()
    table.astype({c: str for c in table.columns if table[c].dtype == object}).to_parquet(buf, index=False)
    write_atomic(out / "results.parquet", buf.getvalue())


