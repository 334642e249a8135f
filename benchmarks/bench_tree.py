"""Benchmark of the tree core: CART fit and predict beside scikit-learn's, with their ratios and peak memory.

Run on demand::

    python benchmarks/bench_tree.py                      # the two sizes of the book's table
    python benchmarks/bench_tree.py --n 100000 --p 20 --depth 8

Each case (task, size) fits both libraries on the same data: seconds are the best of ``--repeat`` runs
(wall and CPU), the ratio is treebook / scikit-learn (below 1: treebook is faster). Peak memory is
measured in a fresh process per library and task (Linux): the peak resident set size during the fit
minus the resident set size just before it. Prints a table and writes
``benchmarks/results/tree.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from treebook.memory import peak_rss_mib, reset_peak_rss, rss_mib

SIZES = [(100_000, 20, 8), (1_000_000, 10, 10)]


def make_data(n: int, p: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y_cls = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=n) > 0.5).astype(int)
    y_reg = np.sin(X[:, 0]) + X[:, 1] + rng.normal(scale=0.3, size=n)
    return X, y_cls, y_reg


def estimator(library: str, task: str, depth: int):
    if library == "treebook":
        from treebook.tree import CARTClassifier, CARTRegressor
        return (CARTClassifier if task == "classification" else CARTRegressor)(max_depth=depth)
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    return (DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor)(max_depth=depth)


def _best_of(fn, repeat: int) -> tuple[float, float]:
    wall = cpu = np.inf
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def memory_child(library: str, task: str, n: int, p: int, depth: int) -> None:
    """(Run in a fresh process, Linux.) Print the peak-RSS growth of one fit above the RSS before it, in MiB."""
    X, y_cls, y_reg = make_data(n, p)
    est = estimator(library, task, depth)
    y = y_cls if task == "classification" else y_reg
    est.fit(X[:200], y[:200])  # imports, compiled code, allocator warm-up
    if not reset_peak_rss():  # the peak (VmHWM) from the current RSS on
        raise RuntimeError("the peak resident memory cannot be reset here (Linux /proc/self/clear_refs)")
    before = rss_mib()
    est.fit(X, y)
    print(json.dumps({"peak_mib": peak_rss_mib() - before}))


def peak_memory(library: str, task: str, n: int, p: int, depth: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--memory-child", library, task, str(n), str(p), str(depth)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["peak_mib"]


def run(n: int, p: int, depth: int, repeat: int = 3, memory: bool = True) -> list[dict]:
    X, y_cls, y_reg = make_data(n, p)
    rows = []
    for task, y in (("classification", y_cls), ("regression", y_reg)):
        row = {"task": task, "n": n, "p": p, "depth": depth}
        for library in ("treebook", "sklearn"):
            est = estimator(library, task, depth)
            est.fit(X[:200], y[:200]).predict(X[:10])  # compiled code loaded before timing
            row[f"fit_s_{library}"], row[f"fit_cpu_{library}"] = _best_of(lambda est=est, y=y: est.fit(X, y), repeat)
            row[f"predict_s_{library}"], row[f"predict_cpu_{library}"] = _best_of(lambda est=est: est.predict(X),
                                                                                  repeat)
            if memory:
                row[f"fit_peak_mib_{library}"] = peak_memory(library, task, n, p, depth)
        row["fit_ratio"] = row["fit_s_treebook"] / row["fit_s_sklearn"]
        row["predict_ratio"] = row["predict_s_treebook"] / row["predict_s_sklearn"]
        row["fit_cpu_ratio"] = row["fit_cpu_treebook"] / row["fit_cpu_sklearn"]
        row["predict_cpu_ratio"] = row["predict_cpu_treebook"] / row["predict_cpu_sklearn"]
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    head = ("| task | n, p, depth | fit treebook / sklearn (s) | ratio | predict treebook / sklearn (s) | ratio "
            "| fit peak MiB treebook / sklearn |")
    lines = [head, "|" + "---|" * 7]
    for r in rows:
        mem = (f"{r['fit_peak_mib_treebook']:.0f} / {r['fit_peak_mib_sklearn']:.0f}"
               if "fit_peak_mib_treebook" in r else "-")
        lines.append(f"| {r['task']} | {r['n']:.0e}, {r['p']}, {r['depth']} | {r['fit_s_treebook']:.3g} / "
                     f"{r['fit_s_sklearn']:.3g} | {r['fit_ratio']:.2f}x | {r['predict_s_treebook']:.3g} / "
                     f"{r['predict_s_sklearn']:.3g} | {r['predict_ratio']:.2f}x | {mem} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--memory-child":
        library, task, n, p, depth = sys.argv[2:7]
        memory_child(library, task, int(n), int(p), int(depth))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, help="rows (with --p and --depth: one size instead of the two default ones)")
    ap.add_argument("--p", type=int, default=20)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory subprocesses")
    args = ap.parse_args()
    sizes = [(args.n, args.p, args.depth)] if args.n else SIZES
    rows = [r for n, p, d in sizes for r in run(n, p, d, args.repeat, memory=not args.no_memory)]
    print(table(rows))
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "tree.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
