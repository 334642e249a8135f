"""Data of the OF-AE chapter: the MNIST test set (IDX files) and scikit-learn's bundled sets."""

from __future__ import annotations

import gzip
import os

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import validate_params

from ..validation import int_interval
from ._core import data_file

__all__ = ["PAPER_MNIST_TEST", "first_of_each_class", "load_mnist_test", "mnist_split", "paper_mnist_indices",
           "read_idx", "rgb_patches"]


def read_idx(path):
    """Decode a gzipped IDX file (unsigned-byte data) into an ndarray."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or a path, got {type(path).__name__}")
    try:
        with gzip.open(path, "rb") as fh:
            raw = fh.read()
    except (gzip.BadGzipFile, EOFError) as exc:
        raise ValueError(f"path {path} is not a gzipped IDX file: {exc}") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path} is not an IDX file")
    if raw[2] != 0x08:
        raise ValueError(f"{path}: only unsigned-byte IDX data are supported (type 0x{raw[2]:02x})")
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">u4", count=ndim, offset=4).astype(int)
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: expected {int(np.prod(dims))} values, found {data.size}")
    return data.reshape(dims)


@validate_params(
    {"n": [int_interval(1, 10000, closed="both"), None], "flatten": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_mnist_test(n=None, flatten=True):
    """The 10,000 MNIST test images (uint8, 28x28, flattened to 784 columns if ``flatten``) and labels.

    ``n`` (1 to 10,000, or None for all) keeps the first ``n`` images. Files are checked against the
    repository's checksums.
    """

    images = read_idx(data_file("ofae", "t10k-images-idx3-ubyte.gz"))
    labels = read_idx(data_file("ofae", "t10k-labels-idx1-ubyte.gz"))
    if images.shape != (10000, 28, 28) or labels.shape != (10000,):
        raise ValueError(f"unexpected MNIST shapes {images.shape}, {labels.shape}")
    if n is not None:
        images, labels = images[:n], labels[:n]
    if flatten:
        images = images.reshape(len(images), -1)
    return images, labels


def first_of_each_class(labels, exclude=None):
    """Index of the first sample of every class (in class order), skipping indices in ``exclude``
    (integer indices; negative ones count from the end, as in numpy)."""
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("labels contain NaN")
    mask = np.ones(len(labels), dtype=bool)
    if exclude is not None:
        ex = np.asarray(exclude)
        if ex.size and (ex.dtype.kind not in "iu" or ex.ndim != 1):
            raise TypeError(f"exclude must be a 1-D list of integer indices, got {exclude!r}")
        ex = ex.astype(np.int64)
        if ex.size and ((ex < -len(labels)) | (ex >= len(labels))).any():
            raise ValueError(f"exclude holds indices outside 0..{len(labels) - 1}")
        mask[ex] = False
    first = []
    for c in np.unique(labels):
        hit = np.flatnonzero(mask & (labels == c))
        if hit.size == 0:
            raise ValueError(f"exclude removes every sample of class {c}")
        first.append(hit[0])
    return np.array(first)


@validate_params(
    {"size": [int_interval(1, None, closed="left")], "stride": [int_interval(1, None, closed="left")],
     "images": [tuple, list]},
    prefer_skip_nested_validation=True,
)
def rgb_patches(size=32, stride=16, images=("astronaut", "coffee", "chelsea", "rocket")):
    """An RGB substitute for CIFAR-10: ``size x size`` patches cut from scikit-image's bundled photographs,
    downscaled so a patch shows an object part at CIFAR-like scale. Returns (n, size, size, 3) uint8 and
    the source image index of every patch. ``images`` names RGB images of ``skimage.data``."""
    from skimage import data as skdata
    from skimage.transform import rescale

    if not images:
        raise ValueError("images must name at least one image")
    for name in images:
        if not isinstance(name, str) or name.startswith("_") or not callable(getattr(skdata, name, None)):
            raise ValueError(f"images: {name!r} is not an image of skimage.data")
    out, src = [], []
    for k, name in enumerate(images):
        img = getattr(skdata, name)()
        if img.ndim != 3 or img.shape[2] != 3:
            raise ValueError(f"images: {name!r} is not an RGB image (shape {img.shape})")
        img = rescale(img, 0.25, channel_axis=-1, anti_aliasing=True)
        img = np.clip(np.round(img * 255), 0, 255).astype(np.uint8)
        h, w = img.shape[:2]
        for i in range(0, h - size + 1, stride):
            for j in range(0, w - size + 1, stride):
                out.append(img[i:i + size, j:j + size])
                src.append(k)
    if not out:
        raise ValueError(f"size {size} is larger than every downscaled image: no patch fits")
    return np.stack(out), np.array(src)


#: the OF-AE authors' MNIST test images: the first image of each digit 0..9 of the MNIST test set
#: (``misc/datasets.py`` of their code), as indices of the test set
PAPER_MNIST_TEST = (3, 2, 1, 18, 4, 8, 11, 0, 61, 7)


def paper_mnist_indices(n_train=100, n_test=10, random_state=0):
    """``(train, test)`` indices into the MNIST test set for the paper's MNIST experiment.

    ``test`` starts with the authors' 10 images (:data:`PAPER_MNIST_TEST`, the first of each digit) and
    continues, past 10, with further images in order. The authors train on ``n_train`` images drawn
    class-stratified (scikit-learn's ``train_test_split(..., stratify=y)``) from the MNIST *training*
    set, which is not shipped; we draw them the same way from the test-set images that are not test
    images, with ``random_state``.
    """
    _, y = load_mnist_test()
    first = first_of_each_class(y)
    rest = np.setdiff1d(np.arange(len(y)), first)
    extra = max(0, n_test - len(first))
    test = np.concatenate([first, rest[:extra]])[:n_test]
    pool = np.setdiff1d(np.arange(len(y)), test)
    train, _ = train_test_split(pool, train_size=n_train, stratify=y[pool], random_state=random_state)
    return np.sort(train), test


def mnist_split(n_train=100, n_test=10, resize=None, random_state=0):
    """The paper's MNIST experiment (:func:`paper_mnist_indices`): ``n_train`` class-stratified training
    images and the ``n_test`` held-out ones, the paper's 10 first. Pixels as floats in [0, 255];
    ``resize`` rescales the images to ``resize x resize``. Returns ``Xtr, Xte, ytr, yte``."""

    X, y = load_mnist_test()
    X = X.astype(float)
    train, test = paper_mnist_indices(n_train, n_test, random_state)
    if resize is not None and resize != 28:
        from skimage.transform import resize as sk_resize

        X = np.stack([sk_resize(im.reshape(28, 28), (resize, resize), preserve_range=True, anti_aliasing=True)
                      .ravel() for im in X[np.concatenate([train, test])]])
        X = np.clip(X, 0.0, 255.0)  # the anti-aliasing filter overshoots a little: keep the pixels in the box
        return X[:n_train], X[n_train:], y[train], y[test]
    return X[train], X[test], y[train], y[test]
