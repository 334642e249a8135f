"""The chapter-4 data loaders: MNIST test IDX files and the RGB patch substitute."""

import gzip

import numpy as np
import pytest

from treebook.datasets.ofae import first_of_each_class, load_mnist_test, read_idx, rgb_patches


def test_mnist_test_set_matches_its_source_notes():
    X, y = load_mnist_test()
    assert X.shape == (10000, 784) and X.dtype == np.uint8
    assert y[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]
    assert np.bincount(y).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert X.mean() / 255 == pytest.approx(0.13251, abs=1e-5)


def test_first_of_each_class():
    y = np.array([3, 1, 1, 0, 3, 2, 0])
    assert first_of_each_class(y).tolist() == [3, 1, 5, 0]
    assert first_of_each_class(y, exclude=[0, 1, 3]).tolist() == [6, 2, 5, 4]


def test_read_idx_rejects_garbage(tmp_path):
    p = tmp_path / "bad.gz"
    with gzip.open(p, "wb") as fh:
        fh.write(b"\x01\x02\x08\x01\x00\x00\x00\x05abc")
    with pytest.raises(ValueError, match="IDX"):
        read_idx(p)
    with gzip.open(p, "wb") as fh:
        fh.write(b"\x00\x00\x08\x01\x00\x00\x00\x05abc")
    with pytest.raises(ValueError, match="expected 5"):
        read_idx(p)


def test_rgb_patches_shape():
    P, src = rgb_patches(size=16, stride=16, images=("astronaut",))
    assert P.ndim == 4 and P.shape[1:] == (16, 16, 3) and P.dtype == np.uint8
    assert len(P) == len(src) and (src == 0).all()


def test_paper_mnist_split_is_the_authors_ten_images_and_a_stratified_training_draw():
    from treebook.datasets.ofae import PAPER_MNIST_TEST, mnist_split, paper_mnist_indices

    _, y = load_mnist_test()
    train, test = paper_mnist_indices(100, 10, random_state=0)
    assert test.tolist() == [3, 2, 1, 18, 4, 8, 11, 0, 61, 7] == list(PAPER_MNIST_TEST)
    assert y[test].tolist() == list(range(10))
    assert len(train) == 100 and not set(train) & set(test)
    counts = np.bincount(y[train], minlength=10)
    share = np.bincount(y, minlength=10) / len(y) * 100
    assert np.all(np.abs(counts - share) <= 1)  # stratified: each class within one image of its share
    other, _ = paper_mnist_indices(100, 10, random_state=1)
    assert not np.array_equal(train, other)
    train20, test20 = paper_mnist_indices(100, 20, random_state=0)
    assert test20[:10].tolist() == test.tolist() and not set(train20) & set(test20)
    Xtr, Xte, ytr, yte = mnist_split(100, 10)
    X, _ = load_mnist_test()
    assert np.array_equal(Xte, X[test]) and np.array_equal(Xtr, X[train]) and Xtr.dtype == float
