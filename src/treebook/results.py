"""The small JSON record each chapter notebook writes (its ``result_path`` parameter).

A record has two parts: ``results``, the chapter's key numbers (free-form, JSON-able), and
``scorecard``, rows of "paper's value — ours — difference" that the book's scorecard page gathers
from every chapter.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

__all__ = ["to_jsonable", "save_results", "load_results", "scorecard_row"]


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


def scorecard_row(quantity: str, paper, ours, note: str = "") -> dict:
    """One scorecard row; ``difference`` is ``ours - paper`` when both are numbers."""
    diff = None
    if isinstance(paper, (int, float, np.number)) and isinstance(ours, (int, float, np.number)):
        diff = float(ours) - float(paper)
    return to_jsonable({"quantity": quantity, "paper": paper, "ours": ours, "difference": diff, "note": note})


def save_results(result_path, results: dict, scorecard: list[dict] | None = None) -> dict:
    """Write ``{"results": ..., "scorecard": [...]}`` to ``result_path`` (if not None) and return it."""
    record = {"results": to_jsonable(results), "scorecard": to_jsonable(scorecard or [])}
    if result_path is not None:
        path = Path(result_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2, allow_nan=False))
    return record


def load_results(path) -> dict:
    """Read a record written by :func:`save_results`."""
    return json.loads(Path(path).read_text())
