"""Fit times of the chapters' tree estimators on one fixed data set each: how much of the tree core's speed
reaches them.

Run on demand: ``python benchmarks/bench_chapter_fits.py``. Each estimator is fitted ``--repeat`` times on the
same synthetic data (after a small fit that loads its compiled code); the table shows the best CPU and wall
seconds of the fit and the best CPU seconds of predicting the training rows. Running the script with the interpreter of an older checkout times that checkout's estimators on
the same data, for a before/after comparison. Writes ``benchmarks/results/chapter_fits.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 20_000
    X = rng.normal(size=(n, 10))
    y_cls = (np.sin(2 * X[:, 0]) + X[:, 1] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    X_nom = rng.integers(0, 24, size=(n, 6))
    y_nom = (X_nom[:, 0] % 3 + (X_nom[:, 1] % 4 == 0) + rng.integers(0, 2, size=n)) % 3
    X_int = rng.normal(size=(50_000, 10))
    mid = np.sin(X_int[:, 0]) + X_int[:, 1]
    censored = rng.random(50_000) < 0.3
    y_int = np.column_stack([mid - 0.5, np.where(censored, np.inf, mid + 0.5)])
    y_reg = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + rng.normal(scale=0.3, size=n)
    return {"shape": (X, y_cls), "regression": (X, y_reg), "nominal": (X_nom, y_nom), "interval": (X_int, y_int)}


def cases():
    from treebook.interval import MMITRegressor
    from treebook.nominal import NominalTreeClassifier
    from treebook.oblique import HHCARTRegressor
    from treebook.shape import ShapeCARTClassifier
    from treebook.tree import CARTClassifier, CARTRegressor

    return {
        "CARTClassifier(max_depth=8), 20,000 x 10 (presorted)": ("shape", lambda: CARTClassifier(max_depth=8)),
        "CARTClassifier(criterion='entropy', max_depth=8), 20,000 x 10":
            ("shape", lambda: CARTClassifier(criterion="entropy", max_depth=8)),
        "CARTRegressor(max_depth=8), 20,000 x 10 (presorted)": ("regression", lambda: CARTRegressor(max_depth=8)),
        "HHCARTRegressor(max_depth=4), 20,000 x 10": ("regression", lambda: HHCARTRegressor(max_depth=4, random_state=0)),
        "NominalTreeClassifier(max_depth=6, unseen='node_majority'), 20,000 x 6 nominal, 3 classes":
            ("nominal", lambda: NominalTreeClassifier(max_depth=6, unseen="node_majority")),
        "ShapeCARTClassifier(max_depth=4), 20,000 x 10": ("shape", lambda: ShapeCARTClassifier(max_depth=4)),
        "NominalTreeClassifier(max_depth=6), 20,000 x 6 nominal (24 values), 3 classes":
            ("nominal", lambda: NominalTreeClassifier(max_depth=6)),
        "MMITRegressor(max_depth=5), 50,000 x 10, 30 % right-censored":
            ("interval", lambda: MMITRegressor(max_depth=5)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import treebook

    data = _data()
    rows = []
    for name, (kind, make) in cases().items():
        X, y = data[kind]
        make().fit(X[:300], y[:300])  # compiled code loaded before timing
        wall = cpu = pred = np.inf
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            est = make().fit(X, y)
            wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
            c0 = time.process_time()
            est.predict(X)
            pred = min(pred, time.process_time() - c0)
        rows.append({"estimator": name, "fit_wall_s": wall, "fit_cpu_s": cpu, "predict_cpu_s": pred})
    print(f"treebook from {Path(treebook.__file__).parent}")
    print("| estimator | fit CPU (s) | fit wall (s) | predict CPU (s) |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['estimator']} | {r['fit_cpu_s']:.3g} | {r['fit_wall_s']:.3g} | {r['predict_cpu_s']:.3g} |")
    out = Path(__file__).with_name("results")
    out.mkdir(exist_ok=True)
    (out / "chapter_fits.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
