"""First call of the compiled code in a fresh process: what the first fit costs beyond a repeated one.

Run on demand: ``python benchmarks/bench_first_call.py``. Every entry point runs in its own fresh Python
process: treebook is imported (not timed), then the same small fit (and predict) is timed twice; the
difference is what loading the compiled kernels costs (numba compiles with ``cache=True``, so after the
first run on a machine the machine code is read from the on-disk cache instead of being compiled; ``make
venv`` fills that cache with ``python -m treebook.warmup``). Goal: at most 1 s for every entry point. For a
time-limited Literati fit the table also shows the seconds its time limit saw in the first and the second
fit (the clock starts after the kernels are loaded). To see what a new environment without the warm-up
pays, delete the ``*.nbi`` / ``*.nbc`` files under ``src/`` first. Prints a table and writes
``benchmarks/results/first_call.json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "CARTClassifier fit + predict": (
        "from treebook.tree import CARTClassifier as E\nX, y = cls_data()",
        "E(max_depth=4).fit(X, y).predict(X)"),
    "CARTRegressor fit + predict, ccp_alpha": (
        "from treebook.tree import CARTRegressor as E\nX, y = reg_data()",
        "E(max_depth=4, ccp_alpha=1e-3).fit(X, y).predict(X)"),
    "NominalTreeClassifier fit + predict": (
        "from treebook.nominal import NominalTreeClassifier as E\nX, y = nominal_data()",
        "E(max_depth=3).fit(X, y).predict(X)"),
    "MMITRegressor fit + predict": (
        "from treebook.interval import MMITRegressor as E\nX, y = interval_data()",
        "E(max_depth=3).fit(X, y).predict(X)"),
    "ShapeCARTClassifier fit + predict": (
        "from treebook.shape import ShapeCARTClassifier as E\nX, y = cls_data()",
        "E(max_depth=3).fit(X, y).predict(X)"),
    "LiteratiClassifier fit (20 expansions) + predict": (
        "from treebook.shape import LiteratiClassifier as E\nX, y = cls_data()",
        "E(max_depth=2, max_breakpoints=2, time_limit=None, max_expansions=20).fit(X, y).predict(X)"),
    "LiteratiClassifier fit (time_limit=60, 20 expansions)": (
        "from treebook.shape import LiteratiClassifier as E\nX, y = cls_data()",
        "res = E(max_depth=2, max_breakpoints=2, time_limit=60.0, max_expansions=20).fit(X, y)"),
    "ObliqueForestEmbedding fit + transform + inverse_transform": (
        "from treebook.oblique import ObliqueForestEmbedding as E\nX, y = cls_data()",
        "m = E(n_estimators=5, max_depth=3, random_state=0).fit(X)\nm.inverse_transform(m.transform(X[:3]))"),
}

PRELUDE = """
import numpy as np
rng = np.random.default_rng(0)
def cls_data():
    X = rng.normal(size=(300, 4))
    return X, (X[:, 0] + X[:, 1] > 0).astype(int)
def reg_data():
    X = rng.normal(size=(300, 4))
    return X, X[:, 0] + rng.normal(scale=0.1, size=300)
def nominal_data():
    X = rng.integers(0, 8, size=(300, 3))
    return X, (X[:, 0] % 3 == 0).astype(int)
def interval_data():
    X = rng.normal(size=(300, 3))
    mid = X[:, 0]
    return X, np.column_stack([mid - 1, np.where(rng.random(300) < 0.3, np.inf, mid + 1)])
"""


def child(name: str) -> None:
    setup, call = CASES[name]
    namespace: dict = {}
    exec(PRELUDE + setup, namespace)  # noqa: S102 - the benchmark's own fixed snippets
    times, charged = [], []
    for _ in range(2):
        t0 = time.perf_counter()
        exec(call, namespace)  # noqa: S102
        times.append(time.perf_counter() - t0)
        if "res" in namespace:  # a time-limited search: the seconds its time limit saw
            charged.append(namespace.pop("res").fit_time_)
    print(json.dumps({"first_s": times[0], "second_s": times[1], "charged_s": charged}))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    rows = []
    for name in CASES:
        out = subprocess.run([sys.executable, __file__, "--child", name], check=True, capture_output=True,
                             text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        rows.append({"entry point": name, **r, "extra_s": r["first_s"] - r["second_s"]})
    print("| entry point | first call (s) | second call (s) | extra (s) | seconds the time limit saw |")
    print("|---|---|---|---|---|")
    for r in rows:
        seen = " / ".join(f"{c:.3f}" for c in r["charged_s"]) or "-"
        print(f"| {r['entry point']} | {r['first_s']:.3f} | {r['second_s']:.3f} | {r['extra_s']:.3f} | {seen} |")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "first_call.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
