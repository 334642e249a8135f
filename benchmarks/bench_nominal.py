"""Per-split timings of the nominal partition procedures (chapter 1).

    python benchmarks/bench_nominal.py [--tables 50] [--out results.json]

Prints JSON: milliseconds per split of HcC, LCA, PCext, SLIQext (n = 50, k = 9) and of the exhaustive
search (n = 20, k = 9), against the targets (HcC <= 2 ms, LCA <= 0.05 ms, PCext <= 0.5 ms, SLIQext <= 2 ms,
exhaustive <= 1 s) and the authors' pure-Python timings; plus the time per split against n and k.
"""

import argparse
import json

from treebook.nominal.bench import check_targets, time_per_split


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, default=50, help="random tables per configuration")
    ap.add_argument("--no-grid", action="store_true", help="skip the time-against-n-and-k grid")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    targets = check_targets(n_tables=args.tables)
    res = {"targets": targets.to_dict(orient="records"), "all_targets_met": bool(targets["met"].all())}
    if not args.no_grid:
        grid = time_per_split(["hcc", "lca", "pcext", "sliqext", "twoing", "balanced", "one_vs_rest"],
                              [12, 25, 50, 100, 200], [3, 5, 7, 9], "entropy", n_tables=max(5, args.tables // 5))
        res["grid"] = grid.to_dict(orient="records")
    print(json.dumps(res, indent=2))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(res, fh, indent=2)


if __name__ == "__main__":
    main()
