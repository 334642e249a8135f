"""OF-AE decoder benchmark at the paper's MNIST setting (HHCART, 300 trees, depth 3, 100 training images).

    python benchmarks/bench_oblique.py [--images 10] [--full 10000] [--jobs 2] [--out results.json]

Prints JSON: seconds per image of our HiGHS decoder, of the authors' approach (CVXPY, one problem per
sample, sequential; needs the optional ``cvxpy``) and of the PuLP/CBC reference, the optimum gaps, and the
wall-clock time to decode ``--full`` test images with ``--jobs`` processes. Targets: >= 10x faster than CVXPY
with optima within 1e-6 relative; 10,000 images in <= 60 min on two cores.
"""

import argparse
import json

from treebook.oblique.bench import full_decode, scaling, solver_comparison


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=10, help="images for the solver comparison")
    ap.add_argument("--reference-images", type=int, default=None, help="images for CVXPY/PuLP (default all)")
    ap.add_argument("--full", type=int, default=10000, help="images for the full decode (0 to skip)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--scaling", action="store_true", help="also time fit/decode against trees and size")
    ap.add_argument("--skip-comparison", action="store_true", help="skip the solver comparison")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    res = {}
    if not args.skip_comparison:
        res["solver_comparison"] = solver_comparison(n_images=args.images, n_reference=args.reference_images)
    cmp_ = res.get("solver_comparison", {}).get("solvers", {})
    if cmp_.get("cvxpy"):
        res["target_speedup_vs_cvxpy_10x"] = cmp_["cvxpy"]["time_vs_highs"] >= 10
        res["target_same_optimum_1e-6"] = cmp_["cvxpy"]["max_rel_gap_to_highs"] <= 1e-6
    print(json.dumps(res, indent=2), flush=True)
    if args.full:
        def log(rec):
            print("full decode so far:", json.dumps(rec), flush=True)

        res["full_decode"] = full_decode(n_images=args.full, n_jobs=args.jobs, progress=True, log=log)
        res["target_full_decode_60min"] = res["full_decode"]["decode_s"] <= 3600
    if args.scaling:
        res["scaling"] = scaling(n_trees=(10, 30, 100, 300), sizes=(14, 20, 28))
    print(json.dumps(res, indent=2))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(res, fh, indent=2)


if __name__ == "__main__":
    main()
