"""Compile treebook's numba kernels ahead of their first use: ``python -m treebook.warmup``.

The kernels are compiled with ``cache=True``: numba keeps the machine code beside the sources (in
``__pycache__``) and a later process reads it instead of compiling again. Without this step the first fit
of a process in a new environment pays the compilation -- several seconds for Literati and MMIT. ``make
venv`` (and so ``make book`` and ``make test``) runs this module once after installing the package; it fits
every exported estimator, every split procedure of chapter 1 and the solvers on small data of the dtypes
the estimators work in, so that each kernel's usual specialisation is in the cache.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

__all__ = ["warm_up"]


def _data(rng):
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    return X, y


def _tree_core(rng):
    from .tree import CARTClassifier, CARTRegressor

    X, y = _data(rng)
    for criterion in ("gini", "entropy"):
        est = CARTClassifier(criterion=criterion, max_depth=3, ccp_alpha=1e-3).fit(X, y)
        est.predict(X)
        est.decision_path(X)
    r = X[:, 0] + rng.normal(scale=0.1, size=len(X))
    for target in (r, np.column_stack([r, -r])):
        CARTRegressor(max_depth=3, ccp_alpha=1e-3, max_features=2, random_state=0).fit(X, target).predict(X)


def _nominal(rng):
    from .nominal import NominalTreeClassifier
    from .nominal.partitions import METHODS, best_partition

    for k in (2, 3):
        V = rng.integers(1, 8, size=(6, k)).astype(float)
        for method in METHODS:
            if method == "breiman" and k != 2:
                continue
            for impurity in ("gini", "entropy"):
                best_partition(V, method, impurity)
    X = rng.integers(0, 6, size=(150, 2))
    y = (X[:, 0] % 3 == 0).astype(int) + (X[:, 1] == 2)
    for splitter in ("hcc", "lca", "pcext", "sliqext"):
        NominalTreeClassifier(splitter=splitter, max_depth=2).fit(X, y).predict(X)
    NominalTreeClassifier(max_depth=2, unseen="node_majority").fit(X, y).predict(X)


def _interval(rng):
    from .interval import MMITForestRegressor, MMITPrunedCV, MMITRegressor, prefix_solve

    X = rng.normal(size=(80, 3))
    mid = X[:, 0] + X[:, 1]
    y = np.column_stack([mid - 0.5, np.where(rng.random(80) < 0.3, np.inf, mid + 0.5)])
    for loss in ("linear", "squared"):
        prefix_solve(y[:, 0], y[:, 1], margin=0.1, loss=loss)
        MMITRegressor(loss=loss, margin=0.1, max_depth=3).fit(X, y).predict(X)
    MMITForestRegressor(n_estimators=2, max_depth=2, random_state=0).fit(X, y).predict(X)
    MMITPrunedCV(cv=2, param_grid={"max_depth": [2]}, random_state=0).fit(X, y).predict(X)


def _shape(rng):
    from .shape import LiteratiClassifier, ShapeCARTClassifier

    X, y = _data(rng)
    ShapeCARTClassifier(max_depth=2).fit(X, y).predict(X)
    for K in (1, 2, 3):
        for candidates in ("cart", "all"):
            LiteratiClassifier(max_depth=3, max_breakpoints=K, candidates=candidates, time_limit=None,
                               max_expansions=30).fit(X, y).predict(X)


def _oblique(rng):
    from .oblique import EForestEmbedding, HHCARTRegressor, ObliqueForestEmbedding, RandCARTRegressor

    X, _ = _data(rng)
    t = rng.uniform(size=len(X))
    HHCARTRegressor(max_depth=2, random_state=0).fit(X, t).predict(X)
    RandCARTRegressor(max_depth=2, random_state=0).fit(X, t).predict(X)
    for tree in ("hhcart", "randcart", "axis", "random"):
        m = ObliqueForestEmbedding(tree=tree, n_estimators=3, max_depth=2, random_state=0).fit(X)
        m.inverse_transform(m.transform(X[:2]))
    e = EForestEmbedding(n_estimators=3, max_depth=2, random_state=0).fit(X)
    e.inverse_transform(e.transform(X[:2]))


PARTS = {"tree core": _tree_core, "chapter 1": _nominal, "chapter 2": _interval, "chapter 3": _shape,
         "chapter 4": _oblique}


#: the parts' order when they run in parallel: the longest compilation first (chapter 3's, some 13 s of about 30)
_LONGEST_FIRST = ("chapter 3", "tree core", "chapter 1", "chapter 2", "chapter 4")


def _run_part(name: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        PARTS[name](np.random.default_rng(0))
        return time.perf_counter() - t0


def warm_up(log=print, jobs: int = 1) -> dict[str, float]:
    """Run every part of :data:`PARTS` once; returns the seconds each took (compilation, the first time), in
    the order of :data:`PARTS`. With ``jobs > 1`` the parts run in that many processes, the longest first
    (numba writes each kernel's cache file whole, so two processes compiling the same kernel is safe)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer; got {jobs!r}")
    seconds = {}
    if jobs == 1:
        for name in PARTS:
            seconds[name] = _run_part(name)
            log(f"treebook warm-up: {name}: {seconds[name]:.1f} s")
        return seconds
    from concurrent.futures import ProcessPoolExecutor, as_completed

    order = [n for n in _LONGEST_FIRST if n in PARTS] + [n for n in PARTS if n not in _LONGEST_FIRST]
    with ProcessPoolExecutor(max_workers=min(jobs, len(order))) as pool:
        futures = {pool.submit(_run_part, name): name for name in order}
        for fut in as_completed(futures):
            seconds[futures[fut]] = fut.result()
            log(f"treebook warm-up: {futures[fut]}: {seconds[futures[fut]]:.1f} s")
    return {name: seconds[name] for name in PARTS}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Compile treebook's numba kernels into their on-disk cache.")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    warm_up(log=lambda line: print(line, file=sys.stderr), jobs=parser.parse_args().jobs)
