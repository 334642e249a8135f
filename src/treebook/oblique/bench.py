"""Benchmarks of the OF-AE decoder (logic here; ``benchmarks/bench_oblique.py`` is the CLI).

* :func:`solver_comparison` — the paper's MNIST setting (HHCART, 300 trees, depth 3, 100 training images):
  seconds per image of our HiGHS decoder beside the authors' approach (CVXPY, one fresh problem per sample,
  sequential) and the PuLP reference, with the optima compared.
* :func:`full_decode` — decode many MNIST test images with ``n_jobs`` processes (wall-clock time).
* :func:`scaling` — fit and decode time against the number of trees and the image size.
"""

from __future__ import annotations

import time

import numpy as np

from treebook.datasets.ofae import load_mnist_test, mnist_split, paper_mnist_indices
from treebook.oblique.decode import (
    l1_decode_cvxpy,
    l1_decode_highs,
    l1_decode_highs_lowrank,
    l1_decode_pulp,
    lowrank_structure,
    system_with_margin,
)
from treebook.oblique.forest import ObliqueForestEmbedding
from treebook.oblique.metrics import ssim_images

__all__ = ["cvxpy_available", "full_decode", "scaling", "solver_comparison"]


def cvxpy_available():
    try:
        import cvxpy  # noqa: F401
    except ImportError:
        return False
    return True


def _systems(forest, codes):
    g = forest.check_codes(codes)
    out = []
    for gi in g:
        rows, signs = forest.path_rows_[gi].ravel(), forest.path_signs_[gi].ravel().astype(float)
        keep = rows >= 0
        A, b = system_with_margin(forest.weights_, forest.bias_, rows[keep], signs[keep], forest.margin)
        out.append((rows[keep], signs[keep], A, b))
    return out


def solver_comparison(n_train=100, n_images=10, n_estimators=300, max_depth=3, max_features=0.75,
                      solvers=("highs", "cvxpy", "pulp"), n_reference=None, random_state=0, forest=None,
                      X_test=None):
    """Seconds per image of each solver on the same LPs, and the largest relative objective gap to HiGHS.

    ``n_reference`` limits how many images the slow reference solvers decode (default all). For
    ``"highs-lowrank"`` the one-off factorisation of the forest is reported separately (``lowrank_setup_s``).
    ``time_vs_highs`` is the solver's time per image divided by the plain HiGHS decoder's (the speed-up of
    ours over it when it is above 1). ``density`` is the mean share of non-zero entries of the LP matrix.
    A fitted ``forest`` and its test images ``X_test`` may be passed instead of fitting one here (the
    size parameters are then ignored; ``fit_s`` is None).
    """
    from threadpoolctl import threadpool_limits

    if forest is None:
        Xtr, Xte, _, _ = mnist_split(n_train, n_images, random_state=random_state)
        t0 = time.perf_counter()
        f = ObliqueForestEmbedding(n_estimators=n_estimators, max_depth=max_depth, max_features=max_features,
                                   box=(0, 255), random_state=random_state).fit(Xtr)
        fit_s = time.perf_counter() - t0
    else:
        if X_test is None:
            raise ValueError("X_test is needed with a fitted forest")
        f, Xte, fit_s = forest, np.asarray(X_test, dtype=float)[:n_images], None
    codes = f.transform(Xte)
    systems = _systems(f, codes)
    lo, hi = f._box
    res = {"n_rows": int(systems[0][2].shape[0]), "n_vars": int(systems[0][2].shape[1]), "fit_s": fit_s,
           "nnz_per_lp": float(np.mean([np.count_nonzero(s[2]) for s in systems])),
           "density": float(np.mean([np.count_nonzero(s[2]) / s[2].size for s in systems])), "solvers": {}}
    structure = None
    if "highs-lowrank" in solvers:
        t0 = time.perf_counter()
        with threadpool_limits(1):
            structure = lowrank_structure(f)
        res["lowrank_setup_s"] = time.perf_counter() - t0  # once per forest
        res["lowrank_rank"] = int(structure[2].shape[1])

    def solve(name, rows, signs, A, b):
        if name == "highs-lowrank":
            S, C, V = structure
            return l1_decode_highs_lowrank(S[rows].multiply(signs[:, None]), signs[:, None] * C[rows], V, b, lo, hi)
        fn = {"highs": l1_decode_highs, "cvxpy": l1_decode_cvxpy, "pulp": l1_decode_pulp}[name]
        return fn(A, b, lo, hi)

    objs = {}
    for name in solvers:
        if name == "cvxpy" and not cvxpy_available():
            res["solvers"][name] = None
            continue
        k = len(systems) if (name.startswith("highs") or n_reference is None) else min(n_reference, len(systems))
        times, ob = [], []
        with threadpool_limits(1):
            for rows, signs, A, b in systems[:k]:
                t0 = time.perf_counter()
                _, st, obj = solve(name, rows, signs, A, b)
                times.append(time.perf_counter() - t0)
                ob.append(obj if st == "optimal" else np.nan)
        objs[name] = np.array(ob)
        res["solvers"][name] = {"s_per_image": float(np.mean(times)), "n_images": k}
    ref = objs["highs"]
    for name, ob in objs.items():
        gap = np.abs(ob - ref[:len(ob)]) / np.maximum(1.0, np.abs(ref[:len(ob)]))
        res["solvers"][name]["max_rel_gap_to_highs"] = float(np.nanmax(gap))
        res["solvers"][name]["n_not_optimal"] = int(np.isnan(ob).sum())
        res["solvers"][name]["time_vs_highs"] = float(res["solvers"][name]["s_per_image"]
                                                         / res["solvers"]["highs"]["s_per_image"])
    return res


def full_decode(n_images=10000, n_train=100, n_estimators=300, max_depth=3, max_features=0.75, n_jobs=2,
                random_state=0, chunk_size=500, progress=False, log=None):
    """Train on the paper's training draw (:func:`paper_mnist_indices`); encode and decode ``n_images`` of the
    other MNIST test-set images in chunks of ``chunk_size`` (``n_jobs`` processes
    each). Returns wall-clock and CPU seconds, failures, the fraction re-encoded to the same code and the mean
    SSIM; ``log(record)`` is called after every chunk with the running totals (for long runs)."""
    from threadpoolctl import threadpool_limits

    X, _ = load_mnist_test()
    X = X.astype(float)
    train, _ = paper_mnist_indices(n_train, 10, random_state)
    Xtr = X[train]
    held_out = np.setdiff1d(np.arange(len(X)), train)
    Xte = X[held_out][:n_images] if n_images <= len(held_out) else X[:n_images]
    t0 = time.perf_counter()
    f = ObliqueForestEmbedding(n_estimators=n_estimators, max_depth=max_depth, max_features=max_features,
                               box=(0, 255), random_state=random_state, n_jobs=n_jobs).fit(Xtr)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with threadpool_limits(1):
        codes = f.transform(Xte)
    enc_s = time.perf_counter() - t0
    starts = range(0, len(Xte), chunk_size)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="decode chunks")
    dec_s = cpu_s = 0.0
    n_failed = n_done = n_reenc = 0
    ssim_sum = 0.0
    for s in starts:
        c = codes[s:s + chunk_size]
        t1 = time.perf_counter()
        R, info = f.inverse_transform(c, return_info=True)
        dec_s += time.perf_counter() - t1
        cpu_s += info["cpu_s"]
        n_failed += info["n_failed"]
        n_done += len(c)
        n_reenc += int(np.all(f.transform(R) == c, axis=1).sum())
        ssim_sum += float(ssim_images(Xte[s:s + chunk_size], R, (28, 28)).sum())
        rec = {"n_images": n_done, "n_jobs": n_jobs, "fit_s": fit_s, "encode_s": enc_s, "decode_s": dec_s,
               "decode_s_per_image_wall": dec_s / n_done, "decode_cpu_s": cpu_s,
               "decode_cpu_s_per_image": cpu_s / n_done, "n_failed": n_failed,
               "fraction_reencoded": n_reenc / n_done, "mean_ssim": ssim_sum / n_done}
        if log is not None:
            log(rec)
    return rec


def scaling(n_trees=(10, 30, 100), sizes=(14, 20, 28), n_train=100, n_images=3, max_depth=3,
            max_features=0.75, tree="hhcart", random_state=0, max_samples=1.0, size_trees=None):
    """Fit time and decode time per image against the number of trees (28x28) and the image side
    (``size_trees`` trees, default ``n_trees[-1]``), on MNIST resized to ``side x side``. The authors' timing
    scripts (``images_n_estimators_vs_fit_time.py``, ``images_resize_vs_fit_time.py``) use 50 training images,
    HHCART of depth 10, ``max_samples=0.25``, ``max_features=1.0``, 6..96 trees in steps of 5 and, with 30
    trees, sides 28, 32, 36, 42, 46, 50, 54, 60, 64. Returns a list of rows.

    Times are the CPU seconds of this process (``time.process_time``: the fit and the decode run in it, one
    thread each), not wall-clock seconds: on a shared machine another process's load moves a wall-clock
    timing of a fraction of a second by more than one step of these grids, which is what the trend is about.
    """
    rows = []
    for kind, values in (("trees", n_trees), ("size", sizes)):
        for v in values:
            T = v if kind == "trees" else (size_trees or n_trees[-1])
            side = 28 if kind == "trees" else v
            Xtr, Xte, _, _ = mnist_split(n_train, n_images, resize=side)
            t0 = time.process_time()
            f = ObliqueForestEmbedding(tree=tree, n_estimators=T, max_depth=max_depth, max_features=max_features,
                                       max_samples=max_samples, box=(0, 255), random_state=random_state).fit(Xtr)
            fit_s = time.process_time() - t0
            codes = f.transform(Xte)
            t0 = time.process_time()
            f.inverse_transform(codes)
            dec = (time.process_time() - t0) / len(Xte)
            rows.append({"vary": kind, "n_trees": T, "side": side, "n_features": side * side, "fit_s": fit_s,
                         "decode_s_per_image": dec})
    return rows
