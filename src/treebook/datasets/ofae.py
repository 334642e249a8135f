"""Data of the OF-AE chapter: the MNIST test set (IDX files) and scikit-learn's bundled sets."""

from __future__ import annotations

import gzip

import numpy as np

__all__ = ["first_of_each_class", "load_mnist_test", "read_idx", "rgb_patches"]


def read_idx(path):
    """Decode a gzipped IDX file (unsigned-byte data) into an ndarray."""
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
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


def load_mnist_test(n=None, flatten=True):
    """The 10,000 MNIST test images (uint8, 28x28, flattened to 784 columns if ``flatten``) and labels.

    ``n`` keeps the first ``n`` images. Files are checked against the repository's checksums.
    """
    from treebook.datasets import data_file

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
    """Index of the first sample of every class (in class order), skipping indices in ``exclude``."""
    labels = np.asarray(labels)
    mask = np.ones(len(labels), dtype=bool)
    if exclude is not None:
        mask[np.asarray(exclude, dtype=int)] = False
    return np.array([np.flatnonzero(mask & (labels == c))[0] for c in np.unique(labels)])


def rgb_patches(size=32, stride=16, images=("astronaut", "coffee", "chelsea", "rocket")):
    """An RGB substitute for CIFAR-10: ``size x size`` patches cut from scikit-image's bundled photographs,
    downscaled so a patch shows an object part at CIFAR-like scale. Returns (n, size, size, 3) uint8 and
    the source image index of every patch."""
    from skimage import data as skdata
    from skimage.transform import rescale

    out, src = [], []
    for k, name in enumerate(images):
        img = getattr(skdata, name)()
        img = rescale(img, 0.25, channel_axis=-1, anti_aliasing=True)
        img = np.clip(np.round(img * 255), 0, 255).astype(np.uint8)
        h, w = img.shape[:2]
        for i in range(0, h - size + 1, stride):
            for j in range(0, w - size + 1, stride):
                out.append(img[i:i + size, j:j + size])
                src.append(k)
    return np.stack(out), np.array(src)
