"""Parameter sweeps of a chapter notebook on Dask.

One papermill execution per grid point, scheduled on a Dask cluster (a ``LocalCluster`` by
default, or an existing scheduler given by address). Every executed notebook is kept; each run's
result JSON is gathered into one tidy table (CSV and parquet) whose columns are the parameters,
then the results. A failing run is recorded with its error and does not stop the others; running
the same sweep again skips the points that already finished.

The grid file is YAML, either a mapping ``name: [values...]`` (the cartesian product is run) or a
mapping with any of three sections:

``grid: {name: [values...]}``
    a cartesian product;
``points: [{name: value, ...}, ...]``
    an explicit list, run as well;
``random: {n: 200, seed: 0, space: {name: spec, ...}, fixed: {name: value}}``
    ``n`` random configurations (a random hyperparameter search), each spec one of
    ``{choice: [values]}``, ``{int: [lo, hi]}`` (both inclusive), ``{uniform: [lo, hi]}`` or
    ``{loguniform: [lo, hi]}`` (``lo > 0``). Sampling is deterministic (numpy ``default_rng(seed)``,
    ``seed`` defaults to 0) and sampled floats are rounded to 4 significant digits, so point ids are
    stable. Identical configurations are kept once: a block over a small discrete space yields fewer
    than ``n``. ``fixed`` parameters are merged into every configuration of the block, and ``random``
    may be a list of blocks, which makes a search conditional, e.g. one block per method with its own
    space. With ``grid``, every grid point is crossed with every random configuration.

Every name must be a parameter of the notebook's ``parameters`` cell; identical points are run once.

With a remote scheduler the workers must see the same file system paths (the notebook and the
output folder) and have treebook installed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import time
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from .notebooks import execute_notebook, notebook_parameters, notebook_path, project_root

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
    if set(grid) <= {"grid", "points", "random"} and grid:
        product, points, random = grid.get("grid") or {}, grid.get("points") or [], grid.get("random") or []
    else:
        product, points, random = grid, [], []
    if not isinstance(product, dict):
        raise ValueError("'grid' must map parameter names to lists of values")
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise ValueError("'points' must be a list of mappings of parameter names to values")
    for key, values in product.items():
        _check_name(key, "grid")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid key {key!r} must map to a non-empty list of values; got {values!r}")
    blocks = [random] if isinstance(random, dict) else random
    if not isinstance(blocks, list):
        raise ValueError("'random' must be a block {n, seed, space, fixed} or a list of such blocks")
    configs = [c for i, block in enumerate(blocks) for c in _random_configs(block, i, allowed)]
    clash = set(product) & {k for c in configs for k in c}
    if clash:
        raise ValueError(f"keys {sorted(clash)} are in both 'grid' and 'random'")
    out = [dict(zip(product, combo)) for combo in itertools.product(*product.values())] if product else []
    if configs:
        out = [{**g, **c} for g in out or [{}] for c in configs]
    out = _unique(out + [dict(p) for p in points])
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


def _check_name(key, where: str) -> None:
    if not isinstance(key, str) or not key.isidentifier():
        raise ValueError(f"{where} key {key!r} is not a valid parameter name")


def _unique(points: list[dict]) -> list[dict]:
    """The points in order, each identical point once (they would share one run folder)."""
    return list({point_id(p): p for p in points}.values())


_DISTRIBUTIONS = ("choice", "int", "uniform", "loguniform")


def _check_spec(key: str, spec) -> tuple[str, list]:
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in _DISTRIBUTIONS:
        raise ValueError(f"random key {key!r}: a spec is one of {{choice: [values]}}, {{int: [lo, hi]}}, "
                         f"{{uniform: [lo, hi]}} or {{loguniform: [lo, hi]}}; got {spec!r}")
    ((kind, arg),) = spec.items()
    if kind == "choice":
        if not isinstance(arg, list) or not arg:
            raise ValueError(f"random key {key!r}: choice needs a non-empty list of values; got {arg!r}")
        return kind, arg
    number = (int,) if kind == "int" else (int, float)
    if not (isinstance(arg, list) and len(arg) == 2
            and all(isinstance(v, number) and not isinstance(v, bool) for v in arg)):
        kinds = "integers" if kind == "int" else "numbers (YAML reads 1e-3 as text: write 1.0e-3)"
        raise ValueError(f"random key {key!r}: {kind} needs [lo, hi], two {kinds}; got {arg!r}")
    lo, hi = arg
    if lo > hi:
        raise ValueError(f"random key {key!r}: {kind} needs lo <= hi; got [{lo}, {hi}]")
    if kind == "loguniform" and lo <= 0:
        raise ValueError(f"random key {key!r}: loguniform needs bounds > 0; got [{lo}, {hi}]")
    return kind, arg


def _space_size(kind: str, arg: list) -> float:
    if kind == "choice":
        return len(arg)
    if kind == "int":
        return arg[1] - arg[0] + 1
    return 1 if arg[0] == arg[1] else math.inf


def _draw(kind: str, arg: list, rng: np.random.Generator):
    if kind == "choice":
        return arg[int(rng.integers(len(arg)))]
    lo, hi = arg
    if kind == "int":
        return int(rng.integers(lo, hi + 1))
    x = rng.uniform(lo, hi) if kind == "uniform" else math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return min(max(float(f"{x:.4g}"), lo), hi)


def _random_configs(block, i: int, allowed: set[str] | None) -> list[dict]:
    """The distinct configurations of one ``random`` block, in the order they were drawn."""
    where = f"random block {i}"
    if not isinstance(block, dict) or not set(block) <= {"n", "seed", "space", "fixed"}:
        raise ValueError(f"{where}: a block is a mapping with keys n, seed, space and fixed; got {block!r}")
    n, seed, space, fixed = block.get("n"), block.get("seed", 0), block.get("space"), block.get("fixed") or {}
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{where}: n must be an integer >= 1; got {n!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"{where}: seed must be an integer >= 0; got {seed!r}")
    if not isinstance(space, dict) or not space:
        raise ValueError(f"{where}: 'space' must map parameter names to distributions; got {space!r}")
    if not isinstance(fixed, dict):
        raise ValueError(f"{where}: 'fixed' must map parameter names to values; got {fixed!r}")
    for key in (*space, *fixed):
        _check_name(key, "random")
        if allowed is not None and key not in allowed:
            raise ValueError(f"random key {key!r} is not a parameter of the notebook "
                             f"(its parameters: {sorted(allowed)})")
    if set(space) & set(fixed):
        raise ValueError(f"{where}: {sorted(set(space) & set(fixed))} both fixed and sampled")
    specs = {key: _check_spec(key, spec) for key, spec in space.items()}
    target = min(n, math.prod(_space_size(*s) for s in specs.values()))
    rng = np.random.default_rng(seed)
    out: dict[str, dict] = {}
    for _ in range(100 * n):  # bounded: rounding can make a narrow float range smaller than n
        if len(out) >= target:
            break
        config = {**fixed, **{key: _draw(*s, rng) for key, s in specs.items()}}
        out.setdefault(point_id(config), config)
    return list(out.values())


def point_id(params: dict) -> str:
    """A stable id of a parameter point (hash of its sorted JSON)."""
    blob = json.dumps(params, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def _run_point(nb: str, run_dir: str, params: dict, cwd: str) -> dict:
    """Execute one point (runs on a Dask worker). Never raises: errors are recorded."""
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    result_path = run / "result.json"
    (run / "params.json").write_text(json.dumps(params, sort_keys=True, default=str))
    t0 = time.perf_counter()
    status, error = "ok", ""
    # the kernel process inherits this worker's stderr: send its log to the run folder instead of the
    # console (or of the notebook that started the cluster)
    saved = os.dup(2)
    try:
        with open(run / "kernel.log", "ab") as log:
            os.dup2(log.fileno(), 2)
            execute_notebook(nb, run / "notebook.ipynb", parameters={**params, "result_path": str(result_path)},
                             cwd=cwd, progress_bar=False, kernel_name="python3")
        if not result_path.is_file():
            raise RuntimeError("the notebook wrote no result JSON")
    except Exception as exc:  # noqa: BLE001 - any failure of a run is recorded, not raised
        status = "failed"
        error = f"{type(exc).__name__}: {exc}".strip()[:2000]
        (run / "error.txt").write_text(error + "\n\n" + traceback.format_exc())
    finally:
        os.dup2(saved, 2)
        os.close(saved)
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
        Output folder: ``runs/<id>/`` per point (executed notebook, params, kernel log, result or error),
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
    from tqdm import tqdm

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
