"""Parameter sweeps of a chapter notebook on Dask.

One papermill execution per grid point, scheduled on a Dask cluster (a ``LocalCluster`` by
default, or an existing scheduler given by address). Every executed notebook is kept; each run's
result JSON is gathered into one tidy table (CSV and parquet) whose columns are the parameters,
then the results. A failing run is recorded with its error and does not stop the others; running
the same sweep again skips the points that already finished.

The grid file is YAML, either a mapping ``name: [values...]`` (the cartesian product is run) or
``{points: [{name: value, ...}, ...]}`` (an explicit list), optionally both: ``{grid: {...},
points: [...]}``. Every name must be a parameter of the notebook's ``parameters`` cell.

With a remote scheduler the workers must see the same file system paths (the notebook and the
output folder) and have treebook installed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
import traceback
from pathlib import Path

import pandas as pd
import yaml

from .notebooks import notebook_parameters, notebook_path, project_root

__all__ = ["load_grid", "expand_grid", "run_sweep", "point_id"]


def load_grid(path) -> dict:
    """Read and validate a grid file (see the module docstring for its form)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"grid file {path} does not exist")
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: a grid file must be a non-empty mapping")
    return data


def expand_grid(grid: dict, allowed: set[str] | None = None) -> list[dict]:
    """All grid points as parameter dicts; raise ``ValueError`` naming a wrong key or value."""
    if set(grid) <= {"grid", "points"} and grid:
        product = grid.get("grid") or {}
        points = grid.get("points") or []
    else:
        product, points = grid, []
    if not isinstance(product, dict):
        raise ValueError("'grid' must map parameter names to lists of values")
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise ValueError("'points' must be a list of mappings of parameter names to values")
    for key, values in product.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ValueError(f"grid key {key!r} is not a valid parameter name")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid key {key!r} must map to a non-empty list of values; got {values!r}")
    out = [dict(zip(product, combo)) for combo in itertools.product(*product.values())] if product else []
    out += [dict(p) for p in points]
    if not out:
        raise ValueError("the grid defines no points")
    if allowed is not None:
        for point in out:
            for key in point:
                if key not in allowed:
                    raise ValueError(f"grid key {key!r} is not a parameter of the notebook "
                                     f"(its parameters: {sorted(allowed)})")
                if key == "result_path":
                    raise ValueError("grid key 'result_path' is set by the sweep itself")
    return out


def point_id(params: dict) -> str:
    """A stable id of a parameter point (hash of its sorted JSON)."""
    blob = json.dumps(params, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def _run_point(nb: str, run_dir: str, params: dict, cwd: str) -> dict:
    """Execute one point (runs on a Dask worker). Never raises: errors are recorded."""
    import papermill

    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    result_path = run / "result.json"
    (run / "params.json").write_text(json.dumps(params, sort_keys=True, default=str))
    t0 = time.perf_counter()
    status, error = "ok", ""
    try:
        papermill.execute_notebook(nb, str(run / "notebook.ipynb"), parameters={**params,
                                   "result_path": str(result_path)}, cwd=cwd, progress_bar=False,
                                   kernel_name="python3")
        if not result_path.is_file():
            raise RuntimeError("the notebook wrote no result JSON")
    except Exception as exc:  # noqa: BLE001 - any failure of a run is recorded, not raised
        status = "failed"
        error = f"{type(exc).__name__}: {exc}".strip()[:2000]
        (run / "error.txt").write_text(error + "\n\n" + traceback.format_exc())
    return {"status": status, "error": error, "seconds": time.perf_counter() - t0}


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


def run_sweep(notebook, grid, out, *, base_params=None, scheduler: str | None = None,
              workers: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Run ``notebook`` at every grid point on Dask and return (and write) the results table.

    Parameters
    ----------
    notebook : str or path
        A notebook path or stem (``01-nominal-partitions``).
    grid : dict or path
        The grid (see :func:`expand_grid`), or a YAML file holding it.
    out : path
        Output folder: ``runs/<id>/`` per point (executed notebook, params, result or error),
        and ``results.csv`` / ``results.parquet``.
    base_params : dict or path, optional
        Parameters common to every point (a flat mapping, or a profile file such as
        ``notebooks/params/smoke.yml`` whose section for this notebook is used).
    scheduler : str, optional
        Address of an existing Dask scheduler; by default a ``LocalCluster`` is started.
    workers : int, optional
        Workers of the ``LocalCluster`` (one thread each).
    """
    from dask.distributed import Client, LocalCluster, as_completed
    from tqdm.auto import tqdm

    nb = notebook_path(notebook)
    allowed = set(notebook_parameters(nb))
    grid_dict = load_grid(grid) if not isinstance(grid, dict) else grid
    points = expand_grid(grid_dict, allowed)
    base = _base_params(base_params, nb.stem, allowed)
    out = Path(out).resolve()
    (out / "runs").mkdir(parents=True, exist_ok=True)

    todo, rows = [], {}
    for params in points:
        full = {**base, **params}
        pid = point_id(full)
        run_dir = out / "runs" / pid
        rows[pid] = (params, full)
        if not (run_dir / "result.json").is_file():
            todo.append((pid, full))

    statuses: dict[str, dict] = {}
    if todo:
        cluster = None
        if scheduler:
            client = Client(scheduler)
        else:
            cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        try:
            futures = {client.submit(_run_point, str(nb), str(out / "runs" / pid), full, str(nb.parent),
                                     pure=False): pid for pid, full in todo}
            bar = tqdm(total=len(points), initial=len(points) - len(todo), desc=f"sweep {nb.stem}",
                       disable=not progress, unit="run")
            for fut in as_completed(futures):
                pid = futures[fut]
                try:
                    statuses[pid] = fut.result()
                except Exception as exc:  # noqa: BLE001 - a lost worker is recorded like a failure
                    statuses[pid] = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "seconds": None}
                bar.update(1)
            bar.close()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    records = []
    for pid, (_params, full) in rows.items():
        run_dir = out / "runs" / pid
        rec = {"run_id": pid, **full}
        result_file = run_dir / "result.json"
        if result_file.is_file():
            res = json.loads(result_file.read_text())
            rec.update(statuses.get(pid, {"status": "ok", "error": "", "seconds": None}))
            rec.update(_flatten(res.get("results", {})))
        else:
            st = statuses.get(pid)
            if st is None:
                err = (run_dir / "error.txt").read_text().splitlines()[0] if (run_dir / "error.txt").is_file() else ""
                st = {"status": "failed", "error": err, "seconds": None}
            rec.update(st)
        rec["notebook"] = str(run_dir / "notebook.ipynb")
        records.append(rec)
    table = pd.DataFrame.from_records(records)
    table.to_csv(out / "results.csv", index=False)
    table.astype({c: str for c in table.columns if table[c].dtype == object}).to_parquet(
        out / "results.parquet", index=False)
    return table


def _base_params(base_params, stem: str, allowed: set[str]) -> dict:
    if base_params is None:
        return {}
    if not isinstance(base_params, dict):
        path = Path(base_params)
        if not path.is_absolute() and not path.is_file():
            path = project_root() / path
        base_params = yaml.safe_load(path.read_text()) or {}
        if not isinstance(base_params, dict):
            raise ValueError(f"{path}: base parameters must be a mapping")
    if stem in base_params and isinstance(base_params[stem], dict):
        base_params = base_params[stem]
    for key in base_params:
        if key not in allowed:
            raise ValueError(f"base parameter {key!r} is not a parameter of the notebook "
                             f"(its parameters: {sorted(allowed)})")
    return dict(base_params)
