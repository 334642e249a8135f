"""Benchmark of the tree core: CART fit and predict times beside scikit-learn's.

Run on demand: ``python benchmarks/bench_tree.py [--n 100000] [--p 20] [--depth 8]``.
Prints a table and writes ``benchmarks/results/tree.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treebook.tree import CARTClassifier, CARTRegressor


def _best_of(fn, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(n: int, p: int, depth: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y_cls = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=n) > 0.5).astype(int)
    y_reg = np.sin(X[:, 0]) + X[:, 1] + rng.normal(scale=0.3, size=n)
    rows = []
    for name, ours, sk, y in (
        ("classification", CARTClassifier(max_depth=depth), DecisionTreeClassifier(max_depth=depth), y_cls),
        ("regression", CARTRegressor(max_depth=depth), DecisionTreeRegressor(max_depth=depth), y_reg),
    ):
        t_ours = _best_of(partial(ours.fit, X, y))
        t_sk = _best_of(partial(sk.fit, X, y))
        p_ours = _best_of(partial(ours.predict, X))
        p_sk = _best_of(partial(sk.predict, X))
        rows.append({"task": name, "n": n, "p": p, "depth": depth, "fit_s_treebook": t_ours, "fit_s_sklearn": t_sk,
                     "predict_s_treebook": p_ours, "predict_s_sklearn": p_sk})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--p", type=int, default=20)
    ap.add_argument("--depth", type=int, default=8)
    args = ap.parse_args()
    rows = run(args.n, args.p, args.depth)
    for r in rows:
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "tree.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
