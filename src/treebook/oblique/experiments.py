"""The chapter's experiments as functions (the notebook calls them at book or smoke scale)."""

from __future__ import annotations

import base64
import math
import time

import numpy as np
import pandas as pd

from treebook.datasets.ofae import mnist_split
from treebook.datasets.shape_trees import load_shape_dataset
from treebook.oblique.eforest import EForestEmbedding
from treebook.oblique.forest import ObliqueForestEmbedding
from treebook.oblique.grow import DIRECTIONS
from treebook.oblique.metrics import mse_rows, off_ink_share, pca_reconstruct, ssim_authors, ssim_images

__all__ = [
    "DESIGN_SPLITS", "DESIGN_THRESHOLDS", "MNIST_NOTEBOOK", "OURS_CHANGES", "channelwise", "code_bits",
    "compare_methods", "decode_images", "design_effects", "diabetes_split", "diabetes_sweeps", "digits_split", "direction_study",
    "htru_trees_study", "mean_sd", "mnist_comparison", "mnist_methods", "mnist_point", "mnist_points",
    "pca_components_for_bits", "run_mnist", "threshold_split_design", "trees_curve",
]


def mnist_point(seed=0, n_train=100, n_test=10, n_estimators=300, max_depth=3, max_features=0.75,
                max_samples=1.0) -> dict:
    """One seed of the chapter's MNIST comparison, deterministic (a record's slice): the mean SSIM and MSE on
    the paper's 10 test images of the authors' OF-AE (HHCART with PCA, their defaults) and of eForest with
    its own decoder at the same depth, both with ``random_state=seed``, trained as the chapter trains them
    (:func:`mnist_split` with ``n_train`` and ``n_test`` images)."""

    box = (0, 255)
    Xtr, Xte, _, _ = mnist_split(n_train, n_test, random_state=seed)
    models = {"OF-AE (authors')": ObliqueForestEmbedding(tree="hhcart", direction="pca", n_estimators=n_estimators,
                                                         max_depth=max_depth, max_samples=max_samples,
                                                         max_features=max_features, box=box, n_jobs=1,
                                                         random_state=seed),
              "eForest (own decode, same depth)": EForestEmbedding(n_estimators=n_estimators, max_depth=max_depth,
                                                                   box=box, random_state=seed)}
    out = {}
    for name, model in models.items():
        R = model.fit(Xtr).inverse_transform(model.transform(Xte))[:10]
        out[name] = {"ssim": float(np.mean(ssim_images(Xte[:10], R, (28, 28), data_range=255))),
                     "mse": float(np.mean(mse_rows(Xte[:10], R)))}
    return out


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


def compare_methods(Xtr, Xte, methods, shape=None, data_range=None, box=None, ink_threshold=None):
    """Fit/encode/decode every method; per-sample SSIM (if ``shape``: ours, ``ssim``, and the authors',
    ``ssim_authors``; see :mod:`treebook.oblique.metrics`), MSE and, with ``ink_threshold``, the share of the
    decoded mass off the ink (``off_ink``, :func:`~treebook.oblique.metrics.off_ink_share`).

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
        nan = np.full(len(R), np.nan)
        ssim = ssim_images(Xte, R, shape, data_range=data_range) if shape is not None else nan
        ssim_a = ssim_authors(Xte, R, shape) if shape is not None else nan
        off = off_ink_share(Xte, R, ink_threshold) if ink_threshold is not None else nan
        for i in range(len(R)):
            rows.append({"method": name, "sample": i, "mse": mse[i], "ssim": ssim[i], "ssim_authors": ssim_a[i],
                         "off_ink": off[i]})
        summ.append({"method": name, "mean_ssim": float(np.mean(ssim)), "mean_ssim_authors": float(np.mean(ssim_a)),
                     "mean_mse": float(np.mean(mse)), **extra})
    return pd.DataFrame(rows), pd.DataFrame(summ).set_index("method"), recon


#: the MNIST comparison's methods (section 5) by the names the chapter gives them
MNIST_AUTHORS, MNIST_OURS = "OF-AE (authors')", "OF-AE ours (improved)"
MNIST_EF, MNIST_EF_FULL = "eForest (own decode, same depth)", "eForest (own decode, full depth)"
MNIST_EF_MID, MNIST_EF_L1 = "eForest ours (box centre)", "eForest trees, l1 decode"
MNIST_AXIS_MIN, MNIST_AXIS_L1 = "axis CART as OF-AE grows, eForest's decode", "axis CART as OF-AE grows, l1 decode"
#: our changes to the authors' OF-AE (the chapter's "ours (improved)"), each also run alone with ``ablations``
OURS_CHANGES = {"split_rule": "best", "target": "per_tree", "householder": "largest"}
#: the point notebook of the MNIST comparison's sweep (a path under ``notebooks/``): one seed
MNIST_NOTEBOOK = "sweeps/04-mnist-point"


def mnist_methods(seed, *, n_estimators=300, max_depth=3, max_samples=1.0, max_features=0.75, box=(0, 255), n_jobs=1,
                  ablations=True) -> dict:
    """The methods of the chapter's MNIST comparison for one seed, by name: the authors' OF-AE (HHCART with the
    PCA direction, as their MNIST script), ours (:data:`OURS_CHANGES`) and, with ``ablations``, the authors'
    with one of our changes at a time; eForest at the same depth, fully grown and with our box-centre point;
    with ``ablations`` eForest's trees and axis CART trees grown as the authors' OF-AE grows its trees, each
    under eForest's decode and the l1 decode; PCA with as many components as trees and as many floats as the
    OF-AE code has bits (``("pca", k)``, see :func:`compare_methods`)."""
    common = dict(tree="hhcart", direction="pca", n_estimators=n_estimators, max_depth=max_depth,
                  max_samples=max_samples, max_features=max_features, box=box, n_jobs=n_jobs)
    m = {MNIST_AUTHORS: ObliqueForestEmbedding(**common, random_state=seed),
         MNIST_OURS: ObliqueForestEmbedding(**common, **OURS_CHANGES, random_state=seed)}
    if ablations:
        for k, v in OURS_CHANGES.items():
            m[f"OF-AE authors' + {k}={v}"] = ObliqueForestEmbedding(**{**common, k: v}, random_state=seed)
    m[MNIST_EF] = EForestEmbedding(n_estimators=n_estimators, max_depth=max_depth, box=box, random_state=seed)
    m[MNIST_EF_FULL] = EForestEmbedding(n_estimators=n_estimators, max_depth=None, box=box, random_state=seed)
    m[MNIST_EF_MID] = EForestEmbedding(n_estimators=n_estimators, max_depth=max_depth, box=box, point="mid",
                                       random_state=seed)
    if ablations:  # trees and decoder apart: eForest's random trees and axis CART trees grown as the authors' OF-AE
        # grows its trees (mean split, shared target, same subsampling), each decoded by eForest's rule and by l1
        m[MNIST_EF_L1] = EForestEmbedding(n_estimators=n_estimators, max_depth=max_depth, box=box, point="l1",
                                          random_state=seed)
        for point, name in (("minimal", MNIST_AXIS_MIN), ("l1", MNIST_AXIS_L1)):
            m[name] = EForestEmbedding(tree="axis", split_rule="mean", target="shared", n_estimators=n_estimators,
                                       max_depth=max_depth, max_samples=max_samples, max_features=max_features,
                                       box=box, point=point, random_state=seed)
    m["PCA (same count)"] = ("pca", n_estimators)
    m["PCA (same bits)"] = ("pca", pca_components_for_bits(code_bits(n_estimators, max_depth)))
    return m


def mnist_comparison(seed, *, n_train=100, n_test=10, ink_threshold=64, keep=(), **forest) -> dict:
    """One seed of the chapter's MNIST comparison: every method of :func:`mnist_methods` (``forest``: its
    keyword arguments) fitted on the ``n_train`` training images of :func:`mnist_split` and judged on its
    ``n_test`` test images, pixels boxed in ``[0, 255]``.

    Returns ``runs`` (:func:`compare_methods`' summary, one row per method, with ``seed``), ``samples`` (its
    per-sample rows, with ``seed``) and ``decodes``: for drawing, the test images' decodes of the methods named
    in ``keep`` as 8-bit images (rounded, clipped to 0..255), one base64 string per image
    (:func:`decode_images` reads them back)."""
    Xtr, Xte, _, _ = mnist_split(n_train, n_test, random_state=seed)
    methods = mnist_methods(seed, **forest)
    unknown = sorted(set(keep) - set(methods))
    if unknown:
        raise ValueError(f"keep names methods that are not compared: {unknown}")
    per_sample, summary, recon = compare_methods(Xtr, Xte, methods, shape=(28, 28), data_range=255,
                                                 box=forest.get("box", (0, 255)), ink_threshold=ink_threshold)
    return {"runs": summary.reset_index().assign(seed=seed).to_dict(orient="records"),
            "samples": per_sample.assign(seed=seed).to_dict(orient="records"),
            "decodes": {name: [base64.b64encode(row.tobytes()).decode("ascii") for row in _as_uint8(recon[name])]
                        for name in keep}}


def _as_uint8(R):
    return np.clip(np.rint(np.asarray(R, dtype=float)), 0, 255).astype(np.uint8)


def decode_images(encoded) -> np.ndarray:
    """The 8-bit images of :func:`mnist_comparison`'s ``decodes`` (base64 strings) as a float array, one row
    per image."""
    return np.stack([np.frombuffer(base64.b64decode(e), dtype=np.uint8) for e in encoded]).astype(float)


def mnist_points(seeds, *, keep=(), **params) -> list[dict]:
    """The sweep points of the MNIST comparison over ``seeds`` (``params``: those of :func:`mnist_comparison`
    but ``keep``, every one explicit); the first seed keeps the decodes of the methods ``keep``."""
    return [{"seed": int(s), **params, "keep": list(keep) if i == 0 else []} for i, s in enumerate(seeds)]


def _numeric(frame, text_columns):
    """``frame`` with every column but ``text_columns`` numeric (the records write NaN as ``"nan"``)."""
    for col in frame.columns:
        if col not in text_columns:
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def run_mnist(points, out, workers: int = 1, cache=None):
    """Run the points of :func:`mnist_points` as a sweep of :data:`MNIST_NOTEBOOK` into ``out`` (finished
    ones skipped; those that the sweep folder ``cache`` holds copied first and so read, not run, see
    :func:`treebook.sweep.copy_finished`). Returns ``(runs, samples, decodes, n_cached)``: the points' rows
    of :func:`mnist_comparison` stacked in the points' order, the first point's 8-bit decodes as arrays
    (:func:`decode_images`), and the number of points read from ``cache``."""
    from ..sweep import run_points

    done, cached = run_points(MNIST_NOTEBOOK, points, out, cache=cache, workers=workers)
    res = [run.record["results"] for run in done]
    runs = _numeric(pd.DataFrame([row for r in res for row in r["runs"]]), ("method", "code"))
    samples = _numeric(pd.DataFrame([row for r in res for row in r["samples"]]), ("method",))
    decodes = {name: decode_images(R) for name, R in res[0]["decodes"].items()}
    return runs, samples, decodes, cached


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



#: the threshold rules of :func:`threshold_split_design`: the node mean (the authors') or uniform in the node range
DESIGN_THRESHOLDS = ("mean", "uniform")
#: the split types of :func:`threshold_split_design`: a random axis feature (eForest's trees) or HHCART's search
DESIGN_SPLITS = ("random axis", "hhcart")


def _design_forest(threshold, split, **kw):
    """The forest of one cell of :func:`threshold_split_design`."""
    if split == "hhcart":
        return ObliqueForestEmbedding(tree="hhcart", direction="pca", split_rule=threshold, **kw)
    return ObliqueForestEmbedding(tree="random", random_threshold=threshold, **kw)


def threshold_split_design(seeds=(0,), n_train=100, n_test=10, n_eval=10, n_estimators=300, max_depth=3,
                           max_samples=1.0, max_features=0.75, thresholds=DESIGN_THRESHOLDS, splits=DESIGN_SPLITS,
                           box=(0, 255), shape=(28, 28), ink_threshold=64.0, data=None, n_jobs=1):
    """The 2 x 2 design that separates the threshold rule from the split type, all cells decoded by the same
    l1 LP (:class:`~treebook.oblique.forest.ObliqueForestEmbedding`'s ``inverse_transform``).

    Threshold rule (``thresholds``): ``"mean"`` — the node mean of the column (the authors' rule) — or
    ``"uniform"`` — uniform in the column's node range (RandomTreesEmbedding's, eForest's). Split type
    (``splits``): ``"random axis"`` — one random non-constant pixel, no search (eForest's trees:
    ``tree="random"`` with ``random_threshold``) — or ``"hhcart"`` — the authors' HHCART search over the pixels
    and their Householder reflection (PCA direction), each column offering its one threshold and the columns
    scored by the authors' impurity (``tree="hhcart"`` with ``split_rule``). Everything else is the authors'
    OF-AE of the MNIST experiment: ``n_estimators`` trees of depth ``max_depth``, bootstrap rows
    (``max_samples``), a feature subset per tree (``max_features``), one shared uniform target, the pixels
    boxed in ``box``; the ``("mean", "hhcart")`` cell *is* the authors' OF-AE.

    For every seed, ``data(seed)`` gives ``(X_train, X_test)`` (default: :func:`~treebook.datasets.ofae.mnist_split`
    with ``n_train`` and ``n_test`` images, the paper's 10 first), every cell's forest is fitted with
    ``random_state=seed`` and the first ``n_eval`` test images are encoded and decoded. Returns one row per
    (seed, threshold, split) with the means over those images of SSIM (ours, ``ssim``; the authors',
    ``ssim_authors``), MSE, the off-ink share of the decoded mass (``off_ink``, pixels whose original value is
    at most ``ink_threshold``; :func:`~treebook.oblique.metrics.off_ink_share`), the decoded mass on the ink
    and off it (``ink_mass``, ``off_ink_mass``: mean per image of the summed decoded values), the number of
    failed decodes, the share re-encoded to the same code, and the fit and decode seconds.
    """
    if data is None:

        def data(seed):
            Xtr, Xte, _, _ = mnist_split(n_train, n_test, random_state=seed)
            return Xtr, Xte

    for t in thresholds:
        if t not in DESIGN_THRESHOLDS:
            raise ValueError(f"thresholds must be among {DESIGN_THRESHOLDS}, got {t!r}")
    for sp_ in splits:
        if sp_ not in DESIGN_SPLITS:
            raise ValueError(f"splits must be among {DESIGN_SPLITS}, got {sp_!r}")
    rows = []
    for seed in seeds:
        Xtr, Xte = data(seed)
        Xev = np.asarray(Xte, dtype=float)[:n_eval]
        for threshold in thresholds:
            for split in splits:
                f = _design_forest(threshold, split, n_estimators=n_estimators, max_depth=max_depth,
                                   max_samples=max_samples, max_features=max_features, box=box, n_jobs=n_jobs,
                                   random_state=seed)
                R, extra = _fit_decode(f, Xtr, Xev)
                mass = np.maximum(R, 0.0)
                on_ink = Xev > ink_threshold
                rows.append({"seed": seed, "threshold": threshold, "split": split,
                             "ssim": float(ssim_images(Xev, R, shape).mean()),
                             "ssim_authors": float(ssim_authors(Xev, R, shape).mean()),
                             "mse": float(mse_rows(Xev, R).mean()),
                             "off_ink": float(np.nanmean(off_ink_share(Xev, R, ink_threshold))),
                             "ink_mass": float(np.where(on_ink, mass, 0.0).sum(axis=1).mean()),
                             "off_ink_mass": float(np.where(on_ink, 0.0, mass).sum(axis=1).mean()),
                             **extra})
    return pd.DataFrame(rows)


def design_effects(design, column):
    """Effects in a :func:`threshold_split_design` frame on ``column``, per seed then mean and sd over seeds
    (``ddof=1``; 0 for one seed): the split-type effect (HHCART minus random axis) under each threshold rule,
    the threshold effect (uniform minus mean) under each split type, the two main effects (the averages of
    those pairs) and the interaction (the split-type effect under the uniform rule minus under the mean rule).
    Returns a DataFrame indexed by effect with ``mean``, ``sd`` and ``n`` (seeds)."""
    cell = design.pivot_table(index="seed", columns=["threshold", "split"], values=column)
    need = [(t, s) for t in DESIGN_THRESHOLDS for s in DESIGN_SPLITS]
    missing = [c for c in need if c not in cell.columns]
    if missing:
        raise ValueError(f"the design lacks the cells {missing}: effects need all four")
    eff = pd.DataFrame({
        "HHCART - random axis, mean threshold": cell[("mean", "hhcart")] - cell[("mean", "random axis")],
        "HHCART - random axis, uniform threshold": cell[("uniform", "hhcart")] - cell[("uniform", "random axis")],
        "uniform - mean threshold, random axis": cell[("uniform", "random axis")] - cell[("mean", "random axis")],
        "uniform - mean threshold, HHCART": cell[("uniform", "hhcart")] - cell[("mean", "hhcart")],
    })
    eff["split type (main effect)"] = eff.iloc[:, :2].mean(axis=1)
    eff["threshold rule (main effect)"] = eff.iloc[:, 2:4].mean(axis=1)
    eff["interaction"] = eff.iloc[:, 1] - eff.iloc[:, 0]
    sd = eff.std(ddof=1) if len(eff) > 1 else pd.Series(0.0, index=eff.columns)
    return pd.DataFrame({"mean": eff.mean(), "sd": sd, "n": len(eff)})
