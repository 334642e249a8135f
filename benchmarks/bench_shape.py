"""Chapter 3 benchmark: Literati (K = 1, 2, 3) beside CART, ShapeCART and the installed peers.

Fold 0 of the paper's protocol (stratified 70/10/20, seed 42; the paper averages 5 folds), training
errors on the 70 % part, one time limit per run (default 60 s), depths 3 and 4 on rice, bank and raisin;
Literati with the adaptive local-CART candidates and over every midpoint (``Literati-all``; with K = 1
the space of ConTree); optionally the resident memory against time at depth 6 on every shipped data set
(or those given), each in a fresh process.

    python benchmarks/bench_shape.py --time-limit 60 --out bench_shape.json
    python benchmarks/bench_shape.py --memory --memory-time 60
    python benchmarks/bench_shape.py --memory --memory-K 1 --memory-candidates all
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from treebook.datasets.shape_trees import SHAPE_DATASETS
from treebook.results import to_jsonable
from treebook.shape.bench import memory_run
from treebook.shape.experiments import available_peers, training_benchmark


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["rice", "bank", "raisin"])
    ap.add_argument("--depths", nargs="+", type=int, default=[3, 4])
    ap.add_argument("--K", nargs="*", type=int, default=[1, 2, 3],
                    help="K of the Literati runs over the local-CART candidates (none to skip them)")
    ap.add_argument("--no-baselines", action="store_true", help="skip CART, ShapeCART and the peers")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--all-K", nargs="*", type=int, default=[1, 2, 3],
                    help="K of the Literati runs over every midpoint (none to skip them)")
    ap.add_argument("--memory", action="store_true", help="peak memory at depth 6 on every shipped data set")
    ap.add_argument("--memory-time", type=float, default=60.0)
    ap.add_argument("--memory-K", type=int, default=3, help="K of the memory runs")
    ap.add_argument("--memory-candidates", choices=["cart", "all"], default="cart")
    ap.add_argument("--memory-datasets", action="store_true", help="memory runs on --datasets only")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    pd.set_option("display.width", 200)
    out = {"peers": available_peers()}
    peers = [m for m, pkg in [("ConTree", "pycontree"), ("STreeD", "pystreed"), ("SGT-ShapeCART", "sgtlearn"),
                              ("SGT-ShapeTAO", "sgtlearn")] if pkg in out["peers"]]
    if not args.memory:
        df = training_benchmark(args.datasets, args.depths, Ks=tuple(args.K), time_limit=args.time_limit,
                                candidates="cart", baselines=() if args.no_baselines else ("CART", "ShapeCART"),
                                peers=() if args.no_baselines else tuple(peers), progress=True)
        if args.all_K:
            allm = training_benchmark(args.datasets, args.depths, Ks=tuple(args.all_K), time_limit=args.time_limit,
                                      candidates="all", baselines=(), peers=(), progress=True)
            allm["method"] = allm.method.str.replace("Literati", "Literati-all")
            df = pd.concat([df, allm], ignore_index=True)
        cols = ["dataset", "depth", "method", "errors", "proved", "time", "time_to_best", "n_leaves", "peak_rss_mb"]
        print(df[cols].to_string(index=False))
        out["training"] = df.to_dict(orient="records")
    else:
        rows = []
        ctx = mp.get_context("spawn")
        for name in (args.datasets if args.memory_datasets else SHAPE_DATASETS):
            with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as ex:
                r = ex.submit(memory_run, name, 6, args.memory_K, args.memory_time, args.memory_candidates).result()
            curve = r["curve"]
            marks = [curve[int(f * (len(curve) - 1))] for f in (0.25, 0.5, 0.75, 1.0)]
            print({k: v for k, v in r.items() if k != "curve"}, "RSS (s, MiB):",
                  [(round(t, 1), round(m)) for t, m in marks], flush=True)
            rows.append(r)
        out["memory"] = rows
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(to_jsonable(out), fh, indent=2)


if __name__ == "__main__":
    main()
