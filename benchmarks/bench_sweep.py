"""Benchmark of the sweep runner's start-up cost per point: fresh kernels against warm (forked) points.

Run on demand: ``python benchmarks/bench_sweep.py [--points 40] [--workers 2]``.

A trivial notebook (a parameters cell, and one cell that imports numpy, pandas, matplotlib and
treebook, as the chapters' point notebooks do, and writes its result with
``treebook.results.save_results``) is swept over ``--points`` points, ``--workers`` at a time, once
with a fresh kernel per point (on a ``LocalCluster`` of ``--workers`` workers) and once warm (the
default: threads of the sweep's process, each point in a child forked from one template, without a
kernel), each sweep in a process of its own. Printed per mode: the wall time, the per-point overhead
(wall time x workers / points, less the notebook's own work as it measured it), and the CPU seconds of
the sweep's process and all its descendants per point (``getrusage``: the robust figure on a machine
shared with other work); then the ratios. These figures hold the sweep's fixed costs (its imports;
Dask's cluster and its workers' imports, or the template) spread over the points; a second sweep of ``--baseline``
points per mode gives the marginal cost of a point, free of them: (cost of ``--points`` less cost
of ``--baseline``) / (``--points`` - ``--baseline``). Writes ``benchmarks/results/sweep.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

WORK = """\
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import treebook
from treebook.results import save_results

t0, c0 = time.perf_counter(), time.process_time()
save_results(result_path, {"x": x, "mean": float(np.mean([x, 1.0])), "rows": len(pd.DataFrame({"x": [x]})),
                           "work_wall": time.perf_counter() - t0, "work_cpu": time.process_time() - c0})
"""

SWEEP = """\
import sys
from treebook.sweep import run_sweep
table = run_sweep(sys.argv[1], {"x": list(range(int(sys.argv[3])))}, sys.argv[2], workers=int(sys.argv[4]),
                  progress=False, warm=sys.argv[5] == "warm")
assert (table.status == "ok").all(), table[table.status != "ok"].error.tolist()
table.to_csv(sys.argv[2] + "/table.csv", index=False)
"""


def _notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("result_path = None\nx = 0")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(WORK)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "trivial.ipynb"
    nbformat.write(nb, path)
    return path


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_mode(mode: str, nb: Path, folder: Path, points: int, workers: int) -> dict:
    import pandas as pd

    out = folder / mode
    c0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", SWEEP, str(nb), str(out), str(points), str(workers), mode], check=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    table = pd.read_csv(out / "table.csv")
    work = float(table.work_wall.mean())
    return {"mode": mode, "points": points, "workers": workers, "wall_s": wall,
            "overhead_per_point_s": wall * workers / points - work,
            "point_overhead_s": float(table.seconds.mean()) - work,
            "cpu_per_point_s": cpu / points, "work_per_point_s": work}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--baseline", type=int, default=4, help="points of the second sweep per mode (0: none)")
    args = ap.parse_args()
    rows, marginal = [], []
    with tempfile.TemporaryDirectory(prefix="treebook-bench-sweep-") as tmp:
        folder = Path(tmp)
        nb = _notebook(folder)
        for mode in ("fresh", "warm"):
            full = run_mode(mode, nb, folder, args.points, args.workers)
            rows.append(full)
            if args.baseline:
                base = run_mode(mode, nb, folder / "baseline", args.baseline, args.workers)
                n = args.points - args.baseline
                marginal.append({"mode": mode, "points": n,
                                 "overhead_per_point_s": (full["wall_s"] - base["wall_s"]) * args.workers / n
                                 - full["work_per_point_s"],
                                 "cpu_per_point_s": (full["cpu_per_point_s"] * args.points
                                                     - base["cpu_per_point_s"] * args.baseline) / n})
    print(f"{args.points} points of a trivial notebook on {args.workers} workers (whole sweeps)")
    print(f"{'mode':6} {'wall (s)':>9} {'overhead/point (s)':>19} {'CPU/point (s)':>14}")
    for r in rows:
        print(f"{r['mode']:6} {r['wall_s']:9.1f} {r['overhead_per_point_s']:19.3f} {r['cpu_per_point_s']:14.3f}")
    fresh, warm = rows
    ratios = {"wall": fresh["wall_s"] / warm["wall_s"],
              "overhead_per_point": fresh["overhead_per_point_s"] / warm["overhead_per_point_s"],
              "cpu_per_point": fresh["cpu_per_point_s"] / warm["cpu_per_point_s"]}
    print("fresh / warm: " + ", ".join(f"{k} {v:.1f}x" for k, v in ratios.items()))
    if marginal:
        print(f"marginal cost of a point ({args.points} less {args.baseline} points)")
        print(f"{'mode':6} {'overhead/point (s)':>29} {'CPU/point (s)':>14}")
        for r in marginal:
            print(f"{r['mode']:6} {r['overhead_per_point_s']:29.3f} {r['cpu_per_point_s']:14.3f}")
        ratios["marginal_cpu_per_point"] = marginal[0]["cpu_per_point_s"] / marginal[1]["cpu_per_point_s"]
        print(f"fresh / warm: marginal CPU per point {ratios['marginal_cpu_per_point']:.1f}x")
    out = Path(__file__).with_name("results") / "sweep.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "marginal": marginal, "ratios": ratios}, indent=2) + "\n")


if __name__ == "__main__":
    main()
