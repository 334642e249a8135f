"""The chapter's experiments as functions (the notebook calls them at book or smoke scale)."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from treebook.oblique.forest import ObliqueForestEmbedding
from treebook.oblique.grow import DIRECTIONS
from treebook.oblique.metrics import mse_rows, pca_reconstruct, ssim_images

__all__ = [
    "channelwise", "code_bits", "compare_methods", "compare_over_seeds", "htru_trees_study", "mean_sd", "diabetes_split", "diabetes_sweeps", "digits_split", "direction_study",
    "pca_components_for_bits", "trees_curve",
]


def digits_split(n_train=500, n_test=200, random_state=0):
    """scikit-learn's 8x8 digits (values 0..16), a seeded train/test split."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(random_state).permutation(len(X))
    return X[idx[:n_train]].astype(float), X[idx[n_train:n_train + n_test]].astype(float)


def diabetes_split(n_train=342, n_test=100, random_state=0):
    """scikit-learn's diabetes features (442 x 10), a seeded train/test split (targets unused)."""
    from sklearn.datasets import load_diabetes

    X, _ = load_diabetes(return_X_y=True)
    idx = np.random.default_rng(random_state).permutation(len(X))
    test = idx[:n_test]
    train = idx[n_test:n_test + n_train]
    return X[train], X[test]


def _fit_decode(model, Xtr, Xte):
    t0 = time.perf_counter()
    model.fit(Xtr)
    fit_s = time.perf_counter() - t0
    codes = model.transform(Xte)
    t0 = time.perf_counter()
    R, info = model.inverse_transform(codes, return_info=True)
    dec_s = time.perf_counter() - t0
    reenc = np.all(model.transform(R) == codes, axis=1)
    return R, {"fit_s": fit_s, "decode_s_per_sample": dec_s / len(Xte), "n_failed": info["n_failed"],
               "fraction_reencoded": float(reenc.mean())}


def compare_methods(Xtr, Xte, methods, shape=None, data_range=None, box=None):
    """Fit/encode/decode every method; per-sample SSIM (if ``shape``) and MSE.

    ``methods`` maps a name to an estimator with ``fit``/``transform``/``inverse_transform`` or to
    ``("pca", k)`` (PCA with ``k`` components). Returns ``(per_sample DataFrame, summary DataFrame,
    reconstructions dict)``.
    """
    rows, summ, recon = [], [], {}
    for name, m in methods.items():
        if isinstance(m, tuple) and m[0] == "pca":
            t0 = time.perf_counter()
            R, k = pca_reconstruct(Xtr, Xte, m[1], box=box)
            extra = {"fit_s": time.perf_counter() - t0, "decode_s_per_sample": 0.0, "n_failed": 0,
                     "fraction_reencoded": np.nan, "code": f"{k} floats"}
        else:
            R, extra = _fit_decode(m, Xtr, Xte)
            depth = m.max_depth if m.max_depth is not None else "full"
            extra["code"] = f"{m.n_estimators} leaf ids (depth {depth})"
        recon[name] = R
        mse = mse_rows(Xte, R)
        ssim = ssim_images(Xte, R, shape, data_range=data_range) if shape is not None else np.full(len(R), np.nan)
        for i in range(len(R)):
            rows.append({"method": name, "sample": i, "mse": mse[i], "ssim": ssim[i]})
        summ.append({"method": name, "mean_ssim": float(np.mean(ssim)), "mean_mse": float(np.mean(mse)), **extra})
    return pd.DataFrame(rows), pd.DataFrame(summ).set_index("method"), recon


def compare_over_seeds(make_methods, split, seeds, shape=None, data_range=None, box=None):
    """:func:`compare_methods` once per seed: ``split(seed)`` gives ``(Xtr, Xte)``, ``make_methods(seed)`` the
    methods. Returns ``(summary, per_sample, first)``: the per-seed summaries stacked (a ``seed`` column), the
    per-sample rows (with ``seed``) and, for the first seed, ``(X_test, reconstructions, fitted methods)``."""
    summaries, samples, first = [], [], None
    for s in seeds:
        Xtr, Xte = split(s)
        methods = make_methods(s)
        per_sample, summary, recon = compare_methods(Xtr, Xte, methods, shape=shape, data_range=data_range,
                                                     box=box)
        summaries.append(summary.reset_index().assign(seed=s))
        samples.append(per_sample.assign(seed=s))
        if first is None:
            first = (Xte, recon, methods)
    return pd.concat(summaries, ignore_index=True), pd.concat(samples, ignore_index=True), first


def mean_sd(frame, by, columns):
    """``mean ± sd`` over the rows of every group of ``by`` (sd with ``ddof=1``; 0 for a single row), the
    group order kept: a frame with ``<column>_mean``, ``<column>_sd`` and ``n``."""
    g = frame.groupby(by, sort=False)
    out = pd.DataFrame({"n": g.size()})
    for c in columns:
        out[f"{c}_mean"] = g[c].mean()
        out[f"{c}_sd"] = g[c].std(ddof=1).fillna(0.0)
    return out


def direction_study(Xtr, Xte, shape, n_estimators=50, max_depth=3, max_features=0.75, max_samples=0.75, n_runs=3,
                    directions=DIRECTIONS, box=(0, 255), n_jobs=1, random_state=0, **params):
    """Mean SSIM of HHCART OF-AE for every direction estimator, ``n_runs`` seeds each (the paper's bar plot;
    the authors' script: 50 training images, 50 trees, depth 3, ``max_samples = max_features = 0.75``, 10
    runs). ``params`` go to :class:`ObliqueForestEmbedding`."""
    rows = []
    for d in directions:
        for r in range(n_runs):
            f = ObliqueForestEmbedding(tree="hhcart", direction=d, n_estimators=n_estimators, max_depth=max_depth,
                                       max_features=max_features, max_samples=max_samples, box=box, n_jobs=n_jobs,
                                       random_state=random_state + r, **params)
            R, extra = _fit_decode(f, Xtr, Xte)
            rows.append({"direction": d, "run": r, "ssim": float(ssim_images(Xte, R, shape).mean()),
                         "mse": float(mse_rows(Xte, R).mean()), **extra})
    return pd.DataFrame(rows)


def trees_curve(Xtr, Xte, n_trees, kinds=("hhcart", "randcart"), shape=None, box=None, max_depth=3,
                params=None, n_jobs=1, random_state=0):
    """Quality against the number of trees for each tree kind (``params[kind]`` = extra forest parameters)."""
    params = params or {}
    rows = []
    for kind in kinds:
        for T in n_trees:
            f = ObliqueForestEmbedding(tree=kind, n_estimators=T, max_depth=max_depth, box=box, n_jobs=n_jobs,
                                       random_state=random_state, **params.get(kind, {}))
            R, extra = _fit_decode(f, Xtr, Xte)
            row = {"tree": kind, "n_trees": T, "mse": float(mse_rows(Xte, R).mean()), **extra}
            if shape is not None:
                row["ssim"] = float(ssim_images(Xte, R, shape).mean())
            rows.append(row)
    return pd.DataFrame(rows)


def htru_trees_study(n_estimators=(4, 7, 10, 13, 16, 19, 22, 25, 28), n_runs=10, n_train=50, n_test=10,
                     kinds=("hhcart", "randcart"), random_state=0, **params):
    """Test MSE of HHCART and RandCART OF-AE on HTRU2 against the number of trees (the authors' box plot,
    their ``tabular_boxplot_estimators_htru2.py``): a 50 / 50 split, the first ``n_train`` training and
    ``n_test`` test rows, depth 3, ``max_samples=0.5``, ``max_features=0.75``, no box, PCA direction for
    HHCART, ``n_runs`` forests per point on one split. The shipped HTRU2 copy (chapter 3's) has its features
    scaled to [0, 1], so the errors are in those units. ``params`` go to :class:`ObliqueForestEmbedding`."""
    from sklearn.model_selection import train_test_split

    from treebook.datasets.shape_trees import load_shape_dataset

    X, _ = load_shape_dataset("htru")
    tr, te = train_test_split(np.arange(len(X)), test_size=0.5, random_state=random_state)
    Xtr, Xte = X[tr[:n_train]], X[te[:n_test]]
    kw = {"max_depth": 3, "max_samples": 0.5, "max_features": 0.75, **params}
    rows = []
    for r in range(n_runs):
        for T in n_estimators:
            for kind in kinds:
                f = ObliqueForestEmbedding(tree=kind, n_estimators=T, random_state=random_state + r, **kw)
                R, extra = _fit_decode(f, Xtr, Xte)
                rows.append({"tree": kind, "n_trees": T, "run": r, "mse": float(mse_rows(Xte, R).mean()), **extra})
    return pd.DataFrame(rows)


def diabetes_sweeps(Xtr, Xte, base, grid, n_runs=1, random_state=0):
    """Test MSE on diabetes when one parameter varies (``grid`` = {param: values}; ``n_train`` subsamples
    the training set); the other parameters are those of ``base`` (which may hold ``box``)."""
    rows = []
    for param, values in grid.items():
        for v in values:
            for r in range(n_runs):
                kw = dict(base)
                X_fit = Xtr
                if param == "n_train":
                    X_fit = Xtr[np.random.default_rng(random_state + r).permutation(len(Xtr))[:v]]
                else:
                    kw[param] = v
                f = ObliqueForestEmbedding(random_state=random_state + r, **kw)
                R, extra = _fit_decode(f, X_fit, Xte)
                rows.append({"param": param, "value": v, "run": r, "mse": float(mse_rows(Xte, R).mean()), **extra})
    return pd.DataFrame(rows)


def channelwise(make_model, Xtr, Xte):
    """One model per RGB channel (eForest/OF-AE practice): ``Xtr``, ``Xte`` are (n, h, w, 3) arrays.
    Returns the reconstructed images (n, h, w, 3) and per-channel diagnostics."""
    n, h, w, c = Xte.shape
    R = np.empty(Xte.shape, dtype=float)
    diag = []
    for ch in range(c):
        m = make_model(ch)
        Rc, extra = _fit_decode(m, Xtr[..., ch].reshape(len(Xtr), -1).astype(float),
                                Xte[..., ch].reshape(n, -1).astype(float))
        R[..., ch] = Rc.reshape(n, h, w)
        diag.append({"channel": ch, **extra})
    return R, pd.DataFrame(diag)


def code_bits(n_trees, depth):
    """Bits of a forest code (``depth`` bits per tree for complete binary trees)."""
    return n_trees * depth


def pca_components_for_bits(bits, bits_per_float=32):
    """PCA components whose float32 code has at most ``bits`` bits (at least 1)."""
    return max(1, math.floor(bits / bits_per_float))

