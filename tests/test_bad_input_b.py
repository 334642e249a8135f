"""Bad input to every public entry point of chapters 3 (ShapeCART) and 4 (OF-AE) and of the data loaders.

Each case of the table either raises a ``ValueError``/``TypeError`` whose message names the argument,
or is valid (documented in the entry point's docstring) and then gives finite output. A Hypothesis
property adds random matrices with NaN, inf, huge values and degenerate shapes: an estimator raises
(naming ``X``) exactly when the matrix is bad, and otherwise fits and predicts finite values.
"""

from __future__ import annotations

import gzip
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import NotFittedError

from treebook.datasets.mmit import load_neuroblastoma
from treebook.datasets.nominal import load_nominal, nominal_summary
from treebook.datasets.ofae import first_of_each_class, load_mnist_test, read_idx, rgb_patches
from treebook.datasets.shape_trees import load_shape_dataset, paper_split
from treebook.oblique import (
    EForestEmbedding,
    HHCARTRegressor,
    ObliqueForestEmbedding,
    RandCARTRegressor,
    decode_forest,
    l1_decode_cvxpy,
    l1_decode_highs,
    l1_decode_pulp,
    mcr_bounds,
    mse_rows,
    pca_reconstruct,
    ssim_images,
)
from treebook.oblique.decode import l1_decode_highs_lowrank
from treebook.shape import ShapeCARTClassifier

VALID = "valid"
NOT_FITTED = "NotFittedError"
RNG = np.random.default_rng(0)
X = RNG.normal(size=(24, 3))
Y = X[:, 0] + 0.1 * RNG.normal(size=24)
YC = (X[:, 0] > 0).astype(int)

CASES: list[tuple[str, object, str]] = []  # (id, thunk, VALID, NOT_FITTED or the argument the message names)


def case(cid, thunk, outcome):
    CASES.append((cid, thunk, outcome))


def _label(v):
    """A test id that is the same in every process (no object addresses)."""
    return type(v).__name__ if isinstance(v, (np.random.Generator, np.random.RandomState)) else repr(v)


# ------------------------------------------------------------------ bad matrices shared by the estimators
def _bad_matrices(p=3):
    nan = X.copy()
    nan[2, 1] = np.nan
    inf = X.copy()
    inf[0, 0] = np.inf
    obj = X.astype(object)
    obj[1, 1] = None
    return {
        "nan": nan, "inf": inf, "-inf": -inf, "1d": X[:, 0], "3d": X[:, :, None], "no_rows": X[:0],
        "no_features": X[:, :0], "strings": np.full((24, p), "a"), "complex": X + 1j, "none_entry": obj,
        "sparse": sp.csr_matrix(X), "dict_entries": np.array([[{"a": 1}] * p] * 24),
    }


def _valid_matrices():
    return {"list": X.tolist(), "int": np.round(X * 10).astype(int), "float32": X.astype(np.float32),
            "frame": pd.DataFrame(X, columns=list("abc")), "fortran": np.asfortranarray(X)}


def _maker(cls, **base):
    return lambda **kw: cls(**{**base, **kw})


def _estimators():
    """name -> (constructor with the smallest settings, target or None, largest |x| supported)"""
    return {
        "HHCARTRegressor": (_maker(HHCARTRegressor, max_depth=2), Y, 1e150),
        "RandCARTRegressor": (_maker(RandCARTRegressor, max_depth=2), Y, 1e150),
        "ObliqueForestEmbedding": (_maker(ObliqueForestEmbedding, n_estimators=2, max_depth=2), None, 1e150),
        "EForestEmbedding": (_maker(EForestEmbedding, n_estimators=2, max_depth=2), None, 1e300),
        "ShapeCARTClassifier": (_maker(ShapeCARTClassifier, max_depth=2, n_intervals=4), YC, 3e38),
    }


def _fit(make, y, Xf, **kw):
    est = make(**kw)
    return est.fit(Xf) if y is None else est.fit(Xf, y)


def _out(est, Xp):
    return est.transform(Xp) if hasattr(est, "transform") else est.predict(Xp)


for name, (make, y, limit) in _estimators().items():
    fitted = _fit(make, y, X, random_state=0)
    for kind, bad in _bad_matrices().items():
        case(f"{name}.fit-X-{kind}", lambda m=make, y=y, b=bad: _fit(m, y, b), "X")
        case(f"{name}.predict-X-{kind}", lambda e=fitted, b=bad: _out(e, b), "X")
    for kind, good in _valid_matrices().items():
        case(f"{name}.fit-X-{kind}", lambda m=make, y=y, g=good: _out(_fit(m, y, g), g), VALID)
    case(f"{name}.fit-X-huge", lambda m=make, y=y, s=limit: _fit(m, y, X * s * 10), "X")
    case(f"{name}.fit-X-large-but-supported", lambda m=make, y=y, s=limit: _out(_fit(m, y, X / 3 * s / 10),
                                                                                     X / 3 * s / 10), VALID)
    case(f"{name}.predict-X-wrong-features", lambda e=fitted: _out(e, X[:, :2]), "X")
    frame_fit = _fit(make, y, pd.DataFrame(X, columns=list("abc")), random_state=0)
    case(f"{name}.predict-X-reordered-columns", lambda e=frame_fit: _out(e, pd.DataFrame(X, columns=list("cab"))),
         "X")
    case(f"{name}.predict-X-renamed-columns", lambda e=frame_fit: _out(e, pd.DataFrame(X, columns=list("abd"))),
         "X")
    # parameters
    params = {"max_depth": [-1, 1.5, "3", True], "min_samples_leaf": [0, -1, 1.5, True],
              "random_state": ["x", -1, 1.5, True]}
    if name == "ShapeCARTClassifier":
        params.update(min_samples_split=[0, 1, 2.5], max_breakpoints=[0], n_intervals=[1])
    if "Forest" in name:
        params.update(n_estimators=[0, 2.0, True], max_samples=[0, 1.5, np.nan, True], max_features=[0, -0.1, True],
                      bootstrap=["no", 1], box=[(1, 0), "ab", (0, [1, 2]), (np.nan, 1), (0, "a")],
                      margin=[-1, np.nan, np.inf], progress=["yes"])
        params.update(target=["each", None], on_infeasible=["ignore", True], split_rule=["median"])
    if name == "ObliqueForestEmbedding":
        params.update(solver=["simplex"], n_jobs=[0, -1, "2"], direction=["nope"], tree=["nope"],
                      rotation=["per_leaf", 1], householder=["argmax", None])
    if name == "EForestEmbedding":
        params.update(tree=["hhcart"], point=["centre", "max"])
    if name in ("HHCARTRegressor", "RandCARTRegressor"):
        params.update(split_rule=["median"])
    if name == "HHCARTRegressor":
        params.update(direction=["lda"], householder=["argmax"])
    if name == "RandCARTRegressor":
        params.update(rotation=["per_leaf"])
    for pname, values in params.items():
        for v in values:
            case(f"{name}.param-{pname}={_label(v)}", lambda m=make, y=y, k=pname, v=v: _fit(m, y, X, **{k: v}), pname)
    for v in (None, 3, np.int64(3), np.random.RandomState(0), np.random.default_rng(0)):
        case(f"{name}.param-random_state={type(v).__name__}",
             lambda m=make, y=y, v=v: _out(_fit(m, y, X, random_state=v), X), VALID)
    case(f"{name}.param-max_depth=None", lambda m=make, y=y: _out(_fit(m, y, X, max_depth=None), X), VALID)
    # targets
    if y is not None and name != "ShapeCARTClassifier":
        for kind, yy in {"nan": np.where(np.arange(24) == 3, np.nan, Y), "inf": np.full(24, np.inf),
                         "short": Y[:-1], "2col": np.c_[Y, Y], "strings": np.full(24, "a"), "None": None,
                         "huge": Y * 1e300}.items():
            case(f"{name}.fit-y-{kind}", lambda m=make, yy=yy: m().fit(X, yy), "y")
        case(f"{name}.fit-y-column", lambda m=make: m().fit(X, Y[:, None]).predict(X), VALID)
        case(f"{name}.fit-y-int", lambda m=make: m().fit(X, np.round(Y * 5).astype(int)).predict(X), VALID)
    if name == "ShapeCARTClassifier":
        for kind, yy in {"nan": np.where(np.arange(24) == 3, np.nan, YC), "continuous": Y, "one_class": YC * 0,
                         "short": YC[:-1], "2col": np.c_[YC, YC], "None": None}.items():
            case(f"{name}.fit-y-{kind}", lambda m=make, yy=yy: m().fit(X, yy), "y")
        case(f"{name}.fit-y-strings", lambda m=make: m().fit(X, np.where(YC, "yes", "no")).predict(X), VALID)

# ------------------------------------------------------------------ the embeddings' decoders
F = ObliqueForestEmbedding(n_estimators=2, max_depth=2, box=(-10, 10), random_state=0).fit(X)
E = EForestEmbedding(n_estimators=2, max_depth=2, random_state=0).fit(X)
CODES = F.transform(X[:3])
ECODES = E.transform(X[:3])
BAD_CODES = {"float": CODES + 0.5, "nan": np.where(CODES == CODES[0, 0], np.nan, CODES), "strings": CODES.astype(str),
             "complex": CODES + 0j, "1d": CODES[0], "wrong_trees": CODES[:, :1], "empty": CODES[:0],
             "negative": -CODES, "huge": CODES * 1e300, "root": CODES * 0, "objects": np.full(CODES.shape, None, dtype=object)}
for kind, bad in BAD_CODES.items():
    case(f"ObliqueForestEmbedding.inverse_transform-codes-{kind}", lambda b=bad: F.inverse_transform(b), "codes")
    case(f"decode_forest-codes-{kind}", lambda b=bad: decode_forest(F, b), "codes")
    eb = {"float": ECODES + 0.5, "wrong_trees": ECODES[:, :1], "strings": ECODES.astype(str)}.get(kind)
    if eb is not None:
        case(f"EForestEmbedding.inverse_transform-codes-{kind}", lambda b=eb: E.inverse_transform(b), "codes")
        case(f"mcr_bounds-codes-{kind}", lambda b=eb: mcr_bounds(E, b), "codes")
case("ObliqueForestEmbedding.inverse_transform-codes-integral-floats",
     lambda: F.inverse_transform(CODES.astype(float)), VALID)
case("ObliqueForestEmbedding.inverse_transform-codes-list", lambda: F.inverse_transform(CODES.tolist()), VALID)
case("EForestEmbedding.inverse_transform-codes-int32", lambda: E.inverse_transform(ECODES.astype(np.int32)), VALID)
for kw, arg in [({"solver": "simplex"}, "solver"), ({"n_jobs": 0}, "n_jobs"), ({"n_jobs": "2"}, "n_jobs"),
                ({"margin": -1.0}, "margin"), ({"margin": np.nan}, "margin"), ({"progress": "yes"}, "progress")]:
    case(f"decode_forest-{arg}={kw[arg]!r}", lambda kw=kw: decode_forest(F, CODES, **kw), arg)
case("decode_forest-forest=None", lambda: decode_forest(None, CODES), "forest")
case("decode_forest-forest-unfitted", lambda: decode_forest(ObliqueForestEmbedding(), CODES), NOT_FITTED)
case("decode_forest-margin=0", lambda: decode_forest(F, CODES, margin=0.0)[0], VALID)
F_HUGE_BOX = ObliqueForestEmbedding(n_estimators=2, max_depth=2, box=(-1e300, 1e300), random_state=0).fit(X)
case("ObliqueForestEmbedding.inverse_transform-box-huge", lambda: F_HUGE_BOX.inverse_transform(CODES), "box")
case("EForestEmbedding.inverse_transform-box-huge",  # MCR solves no LP: any finite box is valid
     lambda: EForestEmbedding(n_estimators=2, max_depth=2, box=(-1e300, 1e300), random_state=0).fit(X)
     .inverse_transform(ECODES), VALID)
case("mcr_bounds-forest=array", lambda: mcr_bounds(np.zeros(3), ECODES), "forest")
case("mcr_bounds-forest-oblique", lambda: mcr_bounds(F, CODES), "forest")
for m in (-1.0, np.nan, "x"):
    case(f"mcr_bounds-margin={m!r}", lambda m=m: mcr_bounds(E, ECODES, margin=m), "margin")
case("mcr_bounds-margin=0.1", lambda: mcr_bounds(E, ECODES, margin=0.1)[0].clip(-1e9, 1e9), VALID)

# ------------------------------------------------------------------ the l1 decoders
A0, B0 = np.array([[1.0, 1.0], [1.0, -1.0]]), np.array([4.0, -1.0])
LO, HI = np.array([-10.0, -10.0]), np.array([10.0, 10.0])
LP_BAD = {
    "A-nan": ((np.array([[np.nan, 1.0], [1.0, -1.0]]), B0, LO, HI), "A"),
    "A-inf": ((A0 * np.inf, B0, LO, HI), "A"),
    "A-1d": ((A0[0], B0[:1], LO, HI), "A"),
    "A-strings": ((np.full((2, 2), "a"), B0, LO, HI), "A"),
    "A-numeric-strings": ((A0.astype(str), B0, LO, HI), VALID),  # converted, as check_array does
    "A-huge": ((A0 * 1e16, B0, LO, HI), "A"),
    "A-no-columns": ((A0[:, :0], B0, LO[:0], HI[:0]), "A"),
    "A-sparse-nan": ((sp.csr_matrix(np.array([[np.nan, 1.0], [0.0, 1.0]])), B0, LO, HI), "A"),
    "b-short": ((A0, B0[:1], LO, HI), "b"),
    "b-nan": ((A0, np.array([np.nan, 1.0]), LO, HI), "b"),
    "b-inf": ((A0, np.array([np.inf, 1.0]), LO, HI), "b"),
    "b-huge": ((A0, np.array([1e25, 1.0]), LO, HI), "b"),
    "b-2d": ((A0, B0[:, None], LO, HI), "b"),
    "lo-nan": ((A0, B0, np.array([np.nan, 0.0]), HI), "lo"),
    "lo-wrong-length": ((A0, B0, np.zeros(3), HI), "lo"),
    "lo-strings": ((A0, B0, "a", HI), "lo"),
    "lo-huge": ((A0, B0, -1e300, HI), "lo"),
    "hi-huge": ((A0, B0, LO, 1e25), "hi"),
    "lo>hi": ((A0, B0, HI, LO), "lo"),
    "lo=+inf": ((A0, B0, np.inf, np.inf), "lo"),
}
for fname, fn in [("l1_decode_highs", l1_decode_highs), ("l1_decode_pulp", l1_decode_pulp),
                  ("l1_decode_cvxpy", l1_decode_cvxpy)]:
    for kind, (args, arg) in LP_BAD.items():
        case(f"{fname}-{kind}", lambda fn=fn, args=args: fn(*args)[0], arg)
case("l1_decode_highs-scalar-bounds", lambda: l1_decode_highs(A0, B0, -10, 10)[0], VALID)
case("l1_decode_highs-infinite-bounds", lambda: l1_decode_highs(A0, B0, -np.inf, np.inf)[0], VALID)
case("l1_decode_highs-sparse-A", lambda: l1_decode_highs(sp.csr_matrix(A0), B0, LO, HI)[0], VALID)
case("l1_decode_highs-no-rows", lambda: l1_decode_highs(A0[:0], B0[:0], LO, HI)[0], VALID)
case("l1_decode_highs-list-input", lambda: l1_decode_highs(A0.tolist(), B0.tolist(), LO.tolist(), HI.tolist())[0],
     VALID)
case("l1_decode_pulp-scalar-bounds", lambda: l1_decode_pulp(A0, B0, -10, 10)[0], VALID)
V1 = np.array([[1.0], [0.0]])
case("l1_decode_highs_lowrank-V-nan", lambda: l1_decode_highs_lowrank(sp.csr_matrix(A0), np.zeros((2, 1)),
                                                                         V1 * np.nan, B0, LO, HI), "V")
case("l1_decode_highs_lowrank-dense-shape", lambda: l1_decode_highs_lowrank(sp.csr_matrix(A0), np.zeros((2, 2)),
                                                                              V1, B0, LO, HI), "dense")
case("l1_decode_highs_lowrank-b-nan", lambda: l1_decode_highs_lowrank(sp.csr_matrix(A0), np.zeros((2, 1)), V1,
                                                                        B0 * np.nan, LO, HI), "b")
case("l1_decode_highs_lowrank-valid", lambda: l1_decode_highs_lowrank(sp.csr_matrix(A0), np.zeros((2, 1)), V1,
                                                                        B0, LO, HI)[0], VALID)

# ------------------------------------------------------------------ metrics
IM = RNG.uniform(0, 255, size=(3, 64))
for kind, (args, kw, arg) in {
    "X-nan": ((np.where(IM > 250, np.nan, IM), IM, (8, 8)), {}, "X"),
    "Y-inf": ((IM, IM * np.inf, (8, 8)), {}, "Y"),
    "shapes-differ": ((IM, IM[:2], (8, 8)), {}, "shapes"),
    "X-1d": ((IM[0], IM[0], (8, 8)), {}, "X"),
    "X-huge": ((IM * 1e300, IM, (8, 8)), {}, "X"),
    "shape-product": ((IM, IM, (8, 7)), {}, "shape"),
    "shape-zero": ((IM, IM, (0, 64)), {}, "shape"),
    "shape-fraction": ((IM, IM, (8.0, 8)), {}, "shape"),
    "shape-string": ((IM, IM, "8x8"), {}, "shape"),
    "shape-too-small": ((IM[:, :36], IM[:, :36], (6, 6)), {}, "shape"),
    "data_range-zero": ((IM, IM, (8, 8)), {"data_range": 0}, "data_range"),
    "data_range-nan": ((IM, IM, (8, 8)), {"data_range": np.nan}, "data_range"),
    "data_range-string": ((IM, IM, (8, 8)), {"data_range": "255"}, "data_range"),
    "channel_axis-outside": ((IM, IM, (8, 8)), {"channel_axis": 5}, "channel_axis"),
    "channel_axis-float": ((IM, IM, (8, 8)), {"channel_axis": 1.0}, "channel_axis"),
}.items():
    case(f"ssim_images-{kind}", lambda a=args, k=kw: ssim_images(*a, **k), arg)
case("ssim_images-valid", lambda: ssim_images(IM, IM[::-1], (8, 8)), VALID)
case("ssim_images-rgb", lambda: ssim_images(np.tile(IM, 3), np.tile(IM, 3), (8, 8, 3), channel_axis=-1), VALID)
for kind, (args, arg) in {"X-nan": ((IM * np.nan, IM), "X"), "shapes-differ": ((IM, IM[:, :3]), "shapes"),
                          "Y-huge": ((IM, IM * 1e300), "Y"), "X-strings": ((np.full(IM.shape, "a"), IM), "X")}.items():
    case(f"mse_rows-{kind}", lambda a=args: mse_rows(*a), arg)
case("mse_rows-lists", lambda: mse_rows(IM.tolist(), IM.tolist()), VALID)
for kind, (args, kw, arg) in {
    "n_components-zero": ((X, X, 0), {}, "n_components"),
    "n_components-fraction": ((X, X, 1.5), {}, "n_components"),
    "X_train-one-row": ((X[:1], X, 1), {}, "X_train"),
    "X_test-features": ((X, X[:, :2], 1), {}, "X_test"),
    "X_test-nan": ((X, X * np.nan, 1), {}, "X_test"),
    "X_train-huge": ((X * 1e300, X, 1), {}, "X_train"),
    "box-string": ((X, X, 1), {"box": "ab"}, "box"),
    "box-triple": ((X, X, 1), {"box": (0, 1, 2)}, "box"),
}.items():
    case(f"pca_reconstruct-{kind}", lambda a=args, k=kw: pca_reconstruct(*a, **k), arg)
case("pca_reconstruct-too-many-components", lambda: pca_reconstruct(X, X, 50)[0], VALID)

# ------------------------------------------------------------------ data loaders
for n in (-1, 0, 10001, 1.5, "5", np.nan):
    case(f"load_mnist_test-n={n!r}", lambda n=n: load_mnist_test(n=n), "n")
case("load_mnist_test-flatten='no'", lambda: load_mnist_test(flatten="no"), "flatten")
case("load_mnist_test-n=3", lambda: load_mnist_test(n=3, flatten=False)[0].astype(float), VALID)
LAB = np.array([3, 1, 1, 0, 3, 2, 0])
for kind, (args, arg) in {"labels-2d": ((LAB[:, None],), "labels"), "labels-empty": ((LAB[:0],), "labels"),
                          "labels-nan": ((np.array([1.0, np.nan]),), "labels"),
                          "exclude-outside": ((LAB, [7]), "exclude"), "exclude-floats": ((LAB, [0.5]), "exclude"),
                          "exclude-whole-class": ((LAB, [5]), "exclude"),
                          "exclude-strings": ((LAB, ["a"]), "exclude")}.items():
    case(f"first_of_each_class-{kind}", lambda a=args: first_of_each_class(*a), arg)
case("first_of_each_class-exclude-negative-index", lambda: first_of_each_class(LAB, [-1]), VALID)
case("first_of_each_class-exclude-empty", lambda: first_of_each_class(LAB, []), VALID)
for kw, arg in [({"size": 0}, "size"), ({"size": -1}, "size"), ({"size": 1.5}, "size"), ({"stride": 0}, "stride"),
                ({"images": "astronaut"}, "images"), ({"images": ()}, "images"), ({"images": ("nope",)}, "images"),
                ({"images": ("camera",)}, "images"), ({"images": (3,)}, "images"),
                ({"size": 10000, "images": ("coffee",)}, "size")]:
    case(f"rgb_patches-{kw}", lambda kw=kw: rgb_patches(**kw), arg)
case("rgb_patches-valid", lambda: rgb_patches(size=16, stride=64, images=["coffee"])[0].astype(float), VALID)
for name in (1, None, ["bank"], "skin"):
    case(f"load_shape_dataset-name={name!r}", lambda n=name: load_shape_dataset(n), "name")
    case(f"load_nominal-name={name!r}", lambda n=name: load_nominal(n), "name")
YS = np.repeat([0, 1], 20)
for kind, (args, kw, arg) in {"val-zero": ((YS, 1), {"val": 0}, "val"), "val-above-one": ((YS, 1), {"val": 1.5}, "val"),
                              "test-negative": ((YS, 1), {"test": -0.1}, "test"),
                              "val+test=1": ((YS, 1), {"val": 0.5, "test": 0.5}, "val"),
                              "seed-negative": ((YS, -1), {}, "seed"), "seed-string": ((YS, "x"), {}, "seed"),
                              "seed-float": ((YS, 1.5), {}, "seed"), "y-2d": ((YS[:, None], 1), {}, "y"),
                              "y-empty": ((YS[:0], 1), {}, "y")}.items():
    case(f"paper_split-{kind}", lambda a=args, k=kw: paper_split(*a, **k), arg)
case("paper_split-numpy-seed", lambda: np.concatenate(paper_split(YS, np.int64(4))).astype(float), VALID)
for names, arg in (("adult", "names"), (["nope"], "names"), ([], "names"), (3, "names")):
    case(f"nominal_summary-names={names!r}", lambda n=names: nominal_summary(n), arg)
case("nominal_summary-one-set", lambda: nominal_summary(["cars"]).to_numpy(dtype=float), VALID)
case("load_neuroblastoma-as_frame='yes'", lambda: load_neuroblastoma(as_frame="yes"), "as_frame")
case("read_idx-path-int", lambda: read_idx(123), "path")


def _finite(out):
    if isinstance(out, tuple):
        return all(_finite(o) for o in out)
    a = np.asarray(out)
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


@pytest.mark.parametrize("cid, thunk, outcome", CASES, ids=[c[0] for c in CASES])
def test_bad_input_case(cid, thunk, outcome):
    if outcome == VALID:
        assert _finite(thunk())
    elif outcome == NOT_FITTED:
        with pytest.raises(NotFittedError):
            thunk()
    else:
        with pytest.raises((ValueError, TypeError)) as err:
            thunk()
        assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(outcome)}(?![A-Za-z0-9_])", str(err.value)), str(err.value)


def test_read_idx_names_a_file_that_is_not_gzip(tmp_path):
    p = tmp_path / "plain.idx"
    p.write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x01a")
    with pytest.raises(ValueError, match="not a gzipped IDX file") as err:
        read_idx(p)
    assert "path" in str(err.value) and str(p) in str(err.value)
    with gzip.open(tmp_path / "ok.gz", "wb") as fh:
        fh.write(b"\x00\x00\x08\x01\x00\x00\x00\x02ab")
    assert read_idx(tmp_path / "ok.gz").tolist() == [97, 98]


@pytest.mark.parametrize("name", list(_estimators()))
def test_every_method_raises_not_fitted_before_fit(name):
    make = _estimators()[name][0]
    est = make()
    methods = [m for m in ("predict", "predict_proba", "apply", "decision_path", "transform", "inverse_transform",
                           "check_codes") if hasattr(est, m)]
    assert methods
    for m in methods:
        with pytest.raises(NotFittedError):
            getattr(est, m)(X if m not in ("inverse_transform", "check_codes") else CODES)


def test_reordered_frame_columns_raise_instead_of_predicting_differently():
    frame = pd.DataFrame(X, columns=list("abc"))
    reg = HHCARTRegressor(max_depth=3, random_state=0).fit(frame, Y)
    assert np.array_equal(reg.predict(frame), reg.predict(X))  # an array of the same columns is accepted
    with pytest.raises(ValueError, match="feature names should match"):
        reg.predict(frame[["b", "a", "c"]])
    with pytest.warns(UserWarning, match="fitted with feature names"):
        reg.predict(X)
    assert list(reg.feature_names_in_) == list("abc")


def test_seeds_follow_scikit_learn_rules():
    rs = HHCARTRegressor(direction="grp", max_depth=3)
    a = rs.set_params(random_state=np.random.RandomState(5)).fit(X, Y).predict(X)
    b = rs.set_params(random_state=np.random.RandomState(5)).fit(X, Y).predict(X)
    assert np.array_equal(a, b)  # a RandomState seeds reproducibly
    c = HHCARTRegressor(direction="grp", max_depth=3, random_state=5).fit(X, Y).predict(X)
    d = HHCARTRegressor(direction="grp", max_depth=3, random_state=5).fit(X, Y).predict(X)
    assert np.array_equal(c, d)
    # None draws fresh entropy: over a few fits the random directions differ
    fits = {ObliqueForestEmbedding(n_estimators=2, max_depth=2).fit(X).weights_.tobytes() for _ in range(4)}
    assert len(fits) > 1
    # a Generator is taken as every treebook estimator takes it: the same state, the same fit
    e = ShapeCARTClassifier(random_state=np.random.default_rng(3)).fit(X, YC).predict(X)
    f = ShapeCARTClassifier(random_state=np.random.default_rng(3)).fit(X, YC).predict(X)
    assert np.array_equal(e, f)
    with pytest.raises(ValueError, match="random_state"):
        ShapeCARTClassifier(random_state=True).fit(X, YC)


SHAPES = st.tuples(st.integers(0, 6), st.integers(0, 4))
ELEMENTS = st.one_of(st.floats(-1e3, 1e3), st.sampled_from([np.nan, np.inf, -np.inf, 1e200, -1e306, 0.0]))
MIN_ROWS = {"ObliqueForestEmbedding": 2, "EForestEmbedding": 2, "HHCARTRegressor": 1, "RandCARTRegressor": 1,
            "ShapeCARTClassifier": 1}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(MIN_ROWS)), Xr=SHAPES.flatmap(lambda s: arrays(np.float64, s, elements=ELEMENTS)))
def test_random_matrices_raise_exactly_when_bad(name, Xr):
    make, _, limit = _estimators()[name]
    n, p = Xr.shape
    if name == "ShapeCARTClassifier":
        y = np.arange(n) % 2
    elif name.endswith("Regressor"):
        y = np.linspace(0.0, 1.0, n)
    else:
        y = None
    bad = (n < MIN_ROWS[name] or p == 0 or not np.isfinite(Xr).all()
           or (np.isfinite(Xr).all() and Xr.size and np.abs(Xr).max() > limit)
           or (name == "ShapeCARTClassifier" and n < 2))  # a classifier needs two classes
    if bad:
        with pytest.raises((ValueError, TypeError)) as err:
            _fit(make, y, Xr, random_state=0)
        assert re.search(r"\b[Xy]\b", str(err.value)), str(err.value)
    else:
        est = _fit(make, y, Xr, random_state=0)
        assert _finite(_out(est, Xr))
