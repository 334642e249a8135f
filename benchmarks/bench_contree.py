"""Literati with K = 1 over every midpoint (ConTree's search space) beside ConTree, in the same process.

Run on demand: ``python benchmarks/bench_contree.py`` (ConTree from ``pip install -e '.[compare]'``).
Fold 0 of the chapter's protocol (stratified 70/10/20, seed 42), training set; each case is run
``--repeats`` times, ConTree first, then Literati, both until they prove optimality or reach
``--time-limit`` seconds. Wall and CPU seconds are both recorded: the CPU ratio is the fair one when other
work shares the machine. Goals: rice at depth 3 in at most half ConTree's time, raisin at depth 4 within
60 s. Prints one line per run and writes ``benchmarks/results/contree.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from treebook.shape.experiments import available_peers, fold_data, literati_run, peer_run

CASES = (("rice", 3), ("raisin", 4))


def _timed(fn, *args, **kwargs):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=[f"{d}:{D}" for d, D in CASES], help="data set:depth")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "contree.json"))
    args = ap.parse_args(argv)
    if "pycontree" not in available_peers():
        raise SystemExit("ConTree is not installed: pip install -e '.[compare]'")
    X0, y0 = fold_data("raisin")[:2]
    literati_run(X0[:200], y0[:200], max_depth=2, max_breakpoints=1, candidates="all", time_limit=10)  # load
    peer_run("ConTree", X0[:200], y0[:200], max_depth=2, time_limit=10)
    rows = []
    for case in args.cases:
        name, depth = case.split(":")
        X, y = fold_data(name)[:2]
        for rep in range(args.repeats):
            c, c_wall, c_cpu = _timed(peer_run, "ConTree", X, y, max_depth=int(depth),
                                      time_limit=args.time_limit)
            lit, l_wall, l_cpu = _timed(literati_run, X, y, max_depth=int(depth), max_breakpoints=1,
                                        candidates="all", time_limit=args.time_limit)
            row = {"dataset": name, "depth": int(depth), "repeat": rep,
                   "contree_errors": c["errors"], "contree_proved": c["proved"],
                   "contree_wall_s": round(c_wall, 2), "contree_cpu_s": round(c_cpu, 2),
                   "literati_errors": lit["errors"], "literati_proved": bool(lit["proved"]),
                   "literati_wall_s": round(l_wall, 2), "literati_cpu_s": round(l_cpu, 2),
                   "cpu_ratio": round(l_cpu / c_cpu, 3) if c_cpu > 0 else None,
                   "n_expanded": lit["n_expanded"]}
            print(json.dumps(row), flush=True)
            rows.append(row)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
