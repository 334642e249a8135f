"""The points of a sweep: grid files, their cartesian products, explicit points and random
configurations (the forms are described in :mod:`treebook.sweep`), and the stable id of a point."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from pathlib import Path

import numpy as np

from ..notebooks import (
    read_yaml,
)


def load_grid(path) -> dict:
    """Read and validate a grid file (see the module docstring for its form)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"grid file {path} does not exist")
    data = read_yaml(path)
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


