"""Chapter 4's attribution design: the authors' SSIM, the off-ink share, the uniform threshold rule, the
random split's threshold and the 2 x 2 design's effects, each against a direct computation."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treebook.oblique import ObliqueForestEmbedding, off_ink_share, skimage019_data_range, ssim_authors
from treebook.oblique.experiments import (
    DESIGN_SPLITS,
    DESIGN_THRESHOLDS,
    design_effects,
    threshold_split_design,
)
from treebook.oblique.grow import oblique_find_split
from treebook.oblique.splits import _threshold_scan, _uniform_scan, projected_split


# ---------------------------------------------------------------- the authors' SSIM
def _ssim_1d(a, b, data_range, win=7):
    """SSIM of two 1-D signals as scikit-image computes it (uniform window, sample covariances), the mean
    taken over the positions whose window lies inside the signal."""
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    half = (win - 1) // 2
    vals = []
    for i in range(half, len(a) - half):
        x, y = a[i - half:i + half + 1], b[i - half:i + half + 1]
        mx, my = x.mean(), y.mean()
        vx, vy = x.var(ddof=1), y.var(ddof=1)
        cxy = ((x - mx) * (y - my)).sum() / (win - 1)
        vals.append((2 * mx * my + c1) * (2 * cxy + c2) / ((mx ** 2 + my ** 2 + c1) * (vx + vy + c2)))
    return float(np.mean(vals))


@settings(max_examples=15, deadline=None)
@given(st.integers(7, 12), st.integers(1, 5), st.integers(0, 10**6))
def test_authors_ssim_is_the_mean_of_one_dimensional_ssims_along_the_columns(h, w, seed):
    """``multichannel=True`` on a grey image: every column is a channel, compared as a 1-D signal."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, size=(h, w)).astype(float)
    b = np.clip(a + rng.normal(scale=40, size=(h, w)), 0, 255)
    got = ssim_authors(a.reshape(1, -1), b.reshape(1, -1), (h, w))[0]
    want = np.mean([_ssim_1d(a[:, c], b[:, c], data_range=2.0) for c in range(w)])
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_authors_ssim_takes_the_old_default_range_of_the_originals_dtype():
    assert skimage019_data_range(np.float64) == 2.0 and skimage019_data_range(np.float32) == 2.0
    assert skimage019_data_range(np.uint8) == 255.0
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, size=(2, 64)).astype(np.uint8)
    b = np.clip(a + rng.normal(scale=30, size=a.shape), 0, 255)
    as_int = ssim_authors(a, b, (8, 8))
    want = [np.mean([_ssim_1d(x.reshape(8, 8)[:, c].astype(float), y.reshape(8, 8)[:, c], 255.0)
                     for c in range(8)]) for x, y in zip(a, b)]
    np.testing.assert_allclose(as_int, want, rtol=1e-9)
    assert not np.allclose(as_int, ssim_authors(a.astype(float), b, (8, 8)))  # a float original: range 2
    assert ssim_authors(a, a, (8, 8)) == pytest.approx(1.0)


@pytest.mark.parametrize("shape, match", [((8, 9), "holds"), ((64,), "at least 7"), ((4, 16), "at least 7"),
                                          ((8, 0), "positive")])
def test_authors_ssim_refuses_a_shape_it_cannot_use(shape, match):
    a = np.zeros((1, 64))
    with pytest.raises(ValueError, match=match):
        ssim_authors(a, a, shape)


# ---------------------------------------------------------------- off-ink share
def test_off_ink_share_by_hand():
    X = np.array([[0, 100, 200, 50], [0, 100, 200, 50], [0, 100, 200, 50], [0, 100, 200, 50]], float)
    R = np.array([[0, 5, 5, 0], [3, 0, 0, 1], [2, 2, 0, -4], [0, 0, 0, -1]], float)
    np.testing.assert_allclose(off_ink_share(X, R), [0.0, 1.0, 0.5, np.nan])
    np.testing.assert_allclose(off_ink_share(X, R, ink_threshold=150), [0.5, 1.0, 1.0, np.nan])
    with pytest.raises(ValueError, match="shapes differ"):
        off_ink_share(X, R[:, :3])


# ---------------------------------------------------------------- the uniform threshold rule
@settings(max_examples=40, deadline=None)
@given(st.integers(2, 20), st.integers(1, 5), st.integers(1, 3), st.integers(0, 10**6))
def test_uniform_rule_draws_one_threshold_per_column_in_its_range_and_scores_as_the_mean_rule(n, q, msl, seed):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 4, size=(n, q)).astype(float)
    y = rng.uniform(size=n)
    found = _uniform_scan(Z, y, msl, np.random.default_rng(seed + 1))
    thr = np.random.default_rng(seed + 1).uniform(Z.min(axis=0), Z.max(axis=0))
    thr = np.where(thr > Z.min(axis=0), thr, Z.max(axis=0))
    assert found == _threshold_scan(Z, y, thr, msl)
    if found is None:
        return
    j, t, cost = found
    assert Z[:, j].min() < t <= Z[:, j].max()
    best = None  # the authors' impurity of every column at its drawn threshold, brute force
    for c in range(q):
        left, right = y[Z[:, c] < thr[c]], y[Z[:, c] >= thr[c]]
        if len(left) >= msl and len(right) >= msl and np.ptp(Z[:, c]) > 0:
            imp = (len(left) * np.std(left) + len(right) * np.std(right)) / n
            best = imp if best is None else min(best, imp)
    assert cost == pytest.approx(best, abs=1e-9)


def test_uniform_rule_needs_a_generator():
    Z = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="random generator"):
        projected_split(Z, Z[:, 0], Z, None, 1, "uniform")


# ---------------------------------------------------------------- the random split's threshold
@pytest.mark.parametrize("rule", ["mean", "uniform"])
def test_random_split_threshold_is_the_node_mean_or_uniform_in_the_node_range(rule):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 6))
    X[:, 2] = 1.0  # a constant feature is never chosen
    find = oblique_find_split("random", random_threshold=rule, rng=np.random.default_rng(0))
    seen = set()
    for _ in range(50):
        cand = find(X, X[:, 0], np.arange(6), 1)
        (j,) = np.flatnonzero(cand.split.weights)
        seen.add(int(j))
        t = cand.split.bias
        if rule == "mean":
            assert t == pytest.approx(X[:, j].mean())
        else:
            assert X[:, j].min() < t <= X[:, j].max()
    assert 2 not in seen and len(seen) >= 4
    with pytest.raises(ValueError, match="random_threshold"):
        oblique_find_split("random", random_threshold="median")
    with pytest.raises(ValueError, match="random_threshold"):
        ObliqueForestEmbedding(tree="random", random_threshold="median").fit(X)


# ---------------------------------------------------------------- the 2 x 2 design
def test_design_effects_recover_known_effects():
    """Cells built from known effects (split 0.3, threshold -0.1, interaction 0.05, seed noise) come back."""
    rows = []
    for seed, noise in enumerate([0.0, 0.02, -0.02]):
        for t in DESIGN_THRESHOLDS:
            for s in DESIGN_SPLITS:
                h, u = s == "hhcart", t == "uniform"
                rows.append({"seed": seed, "threshold": t, "split": s,
                             "ssim": 0.5 + noise + 0.3 * h - 0.1 * u + 0.05 * h * u + 0.01 * seed * h})
    eff = design_effects(pd.DataFrame(rows), "ssim")
    assert eff.loc["HHCART - random axis, mean threshold", "mean"] == pytest.approx(0.31)
    assert eff.loc["HHCART - random axis, uniform threshold", "mean"] == pytest.approx(0.36)
    assert eff.loc["split type (main effect)", "mean"] == pytest.approx(0.335)
    assert eff.loc["threshold rule (main effect)", "mean"] == pytest.approx(-0.075)
    assert eff.loc["interaction", "mean"] == pytest.approx(0.05)
    assert eff.loc["interaction", "sd"] == pytest.approx(0.0, abs=1e-12)
    assert eff.loc["HHCART - random axis, mean threshold", "sd"] == pytest.approx(0.01)
    assert (eff["n"] == 3).all()
    with pytest.raises(ValueError, match="lacks the cells"):
        design_effects(pd.DataFrame(rows[:3]), "ssim")


def test_design_cell_mean_hhcart_is_the_authors_forest():
    """The ("mean", "hhcart") cell is the authors' OF-AE: same codes, same decodes as that forest built directly."""
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 255, size=(30, 64))

    def data(seed):
        return base[:24], base[24:]

    design = threshold_split_design(seeds=[1], n_estimators=4, max_depth=2, shape=(8, 8), n_eval=3, data=data)
    assert len(design) == 4 and set(zip(design.threshold, design.split)) == {
        (t, s) for t in DESIGN_THRESHOLDS for s in DESIGN_SPLITS}
    assert design[["ssim", "ssim_authors", "mse", "off_ink"]].notna().all().all()
    assert ((design.off_ink >= 0) & (design.off_ink <= 1)).all()
    f = ObliqueForestEmbedding(n_estimators=4, max_depth=2, max_features=0.75, box=(0, 255), random_state=1)
    R = f.fit(base[:24]).inverse_transform(f.transform(base[24:27]))
    got = design.set_index(["threshold", "split"]).loc[("mean", "hhcart")]
    assert got["mse"] == pytest.approx(float(((base[24:27] - R) ** 2).mean()))
    with pytest.raises(ValueError, match="thresholds"):
        threshold_split_design(thresholds=["median"], data=data)
