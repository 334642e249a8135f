"""Benchmarks of chapter 3 beyond the notebook's own timings: the resident memory of a Literati search
(:func:`memory_run`). ``benchmarks/bench_shape.py`` and ``benchmarks/bench_contree.py`` are the command lines;
the experiment drivers they call are in :mod:`treebook.shape.experiments`."""

from __future__ import annotations

import threading
import time

from ..memory import peak_rss_mib, rss_mib
from .experiments import fold_data, literati_run

__all__ = ["memory_run"]


def memory_run(name: str, depth: int = 6, max_breakpoints: int = 3, time_limit: float | None = 60.0,
               candidates: str = "cart", seed: int = 42, max_expansions: int | None = None,
               interval: float = 0.5) -> dict:
    """Fit Literati on one data set; report the peak resident memory of the process and the resident memory
    sampled every ``interval`` seconds during the search (``curve``: rows ``seconds, MiB``).  Run it in a
    fresh process to measure one data set alone."""

    X, y = fold_data(name, seed)[:2]
    before = peak_rss_mib()
    curve, stop = [], threading.Event()
    t0 = time.perf_counter()

    def sample():
        while not stop.is_set():
            curve.append((time.perf_counter() - t0, rss_mib()))
            stop.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        r = literati_run(X, y, max_depth=depth, max_breakpoints=max_breakpoints, time_limit=time_limit,
                         max_expansions=max_expansions, candidates=candidates)
    finally:
        stop.set()
        sampler.join()
    curve.append((time.perf_counter() - t0, rss_mib()))
    return {"dataset": name, "n": int(y.size), "p": int(X.shape[1]), "depth": depth, "K": max_breakpoints,
            "errors": r["errors"], "proved": r["proved"], "time": r["time"], "n_expanded": r["n_expanded"],
            "peak_rss_mb_before": before, "peak_rss_mb": peak_rss_mib(), "curve": curve}
