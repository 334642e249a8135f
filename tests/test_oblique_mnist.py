"""Chapter 4's MNIST comparison as sweep points (treebook.oblique.experiments): the book defaults' points are
the grid file's and are committed, a committed record is that of this code (its cheap methods recomputed), and
bad requests are refused."""

import ast

import numpy as np
import pytest

from treebook.datasets.ofae import mnist_split
from treebook.notebooks import notebook_parameters, project_root
from treebook.oblique.experiments import (
    MNIST_AUTHORS,
    MNIST_EF,
    MNIST_EF_FULL,
    MNIST_NOTEBOOK,
    MNIST_OURS,
    compare_methods,
    decode_images,
    mnist_comparison,
    mnist_methods,
    mnist_points,
)
from treebook.sweep import load_grid, point_id, read_runs

ROOT = project_root()
BOOK_MNIST = ROOT / "results" / "sweeps" / "04-book-mnist"
#: the decodes the chapter keeps to draw (the authors' OF-AE of the first seed is fitted again instead)
SHOWN = [MNIST_OURS, MNIST_EF, MNIST_EF_FULL, "PCA (same bits)"]


def _book_points():
    p = {k: ast.literal_eval(v) for k, v in notebook_parameters("04-forest-autoencoders").items()}
    assert p["mnist_cache"] == "results/sweeps/04-book-mnist"
    return mnist_points(p["mnist_seeds"], keep=SHOWN, n_train=p["n_train"], n_test=p["n_test"],
                        ink_threshold=p["ink_threshold"], n_estimators=p["n_estimators"], max_depth=p["max_depth"],
                        max_samples=p["max_samples"], max_features=p["max_features"], n_jobs=p["n_jobs"],
                        ablations=p["ablations"])


def test_the_book_grid_holds_the_book_defaults_points_and_every_one_is_committed():
    points = _book_points()
    assert load_grid(ROOT / "notebooks" / "sweeps" / "04-book-mnist.yml")["points"] == points
    assert points[0]["keep"] == SHOWN and all(q["keep"] == [] for q in points[1:])
    runs = {r.name: r for r in read_runs(BOOK_MNIST, MNIST_NOTEBOOK) if r.record is not None}
    assert {point_id(q) for q in points} <= set(runs), f"points without a committed record in {BOOK_MNIST}"
    first = runs[point_id(points[0])].record["results"]
    assert sorted(first["decodes"]) == sorted(SHOWN)
    assert decode_images(first["decodes"][MNIST_OURS]).shape == (points[0]["n_test"], 784)
    assert {r["method"] for r in first["runs"]} >= {MNIST_AUTHORS, *SHOWN}


def test_a_committed_record_is_this_codes():
    """eForest at the same depth and PCA (cheap to fit) recompute to the committed seed's per-image SSIM, MSE
    and off-ink share, and to its 8-bit decodes (one grey level allowed where a value rounds at .5)."""
    point = _book_points()[0]
    rec = {r.name: r for r in read_runs(BOOK_MNIST, MNIST_NOTEBOOK)}[point_id(point)].record["results"]
    forest = {k: point[k] for k in ("n_estimators", "max_depth", "max_samples", "max_features", "n_jobs",
                                    "ablations")}
    methods = mnist_methods(point["seed"], **forest)
    Xtr, Xte, _, _ = mnist_split(point["n_train"], point["n_test"], random_state=point["seed"])
    names = [MNIST_EF, "PCA (same bits)"]
    per_sample, _, recon = compare_methods(Xtr, Xte, {k: methods[k] for k in names}, shape=(28, 28),
                                           data_range=255, box=(0, 255), ink_threshold=point["ink_threshold"])
    for name in names:
        stored = [r for r in rec["samples"] if r["method"] == name]
        fresh = per_sample[per_sample.method == name]
        for col in ("ssim", "ssim_authors", "mse", "off_ink"):
            assert np.allclose(fresh[col], [float(r[col]) for r in stored], rtol=1e-9, atol=1e-9), (name, col)
        assert np.abs(np.clip(np.rint(recon[name]), 0, 255) - decode_images(rec["decodes"][name])).max() <= 1, name


def test_unknown_methods_to_keep_are_refused():
    with pytest.raises(ValueError, match="not compared"):
        mnist_comparison(0, n_train=20, n_test=2, keep=["OF-AE (nobody's)"], n_estimators=2)
