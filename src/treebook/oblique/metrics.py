"""Reconstruction quality: SSIM (images, scikit-image) under two definitions, MSE, the share of decoded
mass off the ink, plus the PCA baseline.

Two SSIMs are reported for the images:

* :func:`ssim_images` — ours: SSIM of every image as a 2-D picture (scikit-image's
  ``structural_similarity`` with its 7 x 7 uniform window, sample covariances and the pixel range as
  ``data_range``, 255 for 8-bit images; ``channel_axis`` for RGB);
* :func:`ssim_authors` — the OF-AE authors' (``compute_ssim`` in ``misc/utils.py`` of their code):
  ``structural_similarity(a, b, multichannel=True)`` of scikit-image 0.19 on the test image and its
  decode, reshaped to ``(28, 28)`` float arrays. ``multichannel=True`` means ``channel_axis=-1``, so each of
  the 28 *columns* of a grey image is a separate "channel": a 1-D SSIM along the column (window 7), the 28
  values averaged. No ``data_range`` is given, and scikit-image up to 0.19 then took the span of
  ``dtype_range`` of the first image's dtype — 2 for floats (``dtype_range`` is (-1, 1) for every float
  type), 255 for ``uint8`` — where scikit-image 0.20 and later refuse float input without a
  ``data_range``. :func:`skimage019_data_range` reproduces that rule, and :func:`ssim_authors` passes its
  value explicitly with ``channel_axis=-1``. On pixels in [0, 255] a range of 2 makes SSIM's
  stabilising constants ``(0.01 R)^2`` and ``(0.03 R)^2`` some 16,000 times smaller than with R = 255.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import validate_params

from treebook.validation import check_array, check_magnitude, int_interval, real_interval

__all__ = ["mse_rows", "off_ink_share", "pca_reconstruct", "skimage019_data_range", "ssim_authors",
           "ssim_images"]

#: the metrics square differences of the values: beyond this magnitude they would overflow
_LIMIT = 1e150


def _image_shape(shape, n_columns):
    """``shape`` as a tuple of ints, checked: positive sides whose product is ``n_columns``."""
    if not shape or not all(isinstance(s, Integral) and not isinstance(s, bool) and s >= 1 for s in shape):
        raise ValueError(f"shape must be a tuple of positive ints, got {shape!r}")
    shape = tuple(int(s) for s in shape)
    if int(np.prod(shape)) != n_columns:
        raise ValueError(f"shape {shape} holds {int(np.prod(shape))} values but X has {n_columns} columns")
    return shape


def _pair(X, Y, names=("X", "Y")):
    X = check_array(X, name=names[0])
    Y = check_array(Y, name=names[1])
    if X.shape != Y.shape:
        raise ValueError(f"shapes differ: {names[0]} {X.shape} vs {names[1]} {Y.shape}")
    for a, nm in ((X, names[0]), (Y, names[1])):
        check_magnitude(a, _LIMIT, name=nm, reason="squares of differences")
    return X, Y


@validate_params(
    {"X": ["array-like"], "Y": ["array-like"], "shape": [tuple, list],
     "data_range": [real_interval(0, None, closed="neither"), None], "channel_axis": [int_interval(None, None, closed="neither"), None]},
    prefer_skip_nested_validation=True,
)
def ssim_images(X, Y, shape, data_range=255.0, channel_axis=None):
    """Per-image SSIM (Wang et al. 2004, scikit-image) between rows of ``X`` and ``Y`` reshaped to ``shape``.

    ``shape`` is the image shape (e.g. ``(28, 28)`` or ``(32, 32, 3)`` with ``channel_axis=-1``); its
    product must be the number of columns, and every spatial side at least 7 pixels (SSIM's window)."""
    from skimage.metrics import structural_similarity

    X, Y = _pair(X, Y)
    shape = _image_shape(shape, X.shape[1])
    spatial = list(shape)
    if channel_axis is not None:
        if not -len(shape) <= channel_axis < len(shape):
            raise ValueError(f"channel_axis {channel_axis} is outside shape {shape}")
        del spatial[channel_axis]
    if len(spatial) < 1 or min(spatial) < 7:
        raise ValueError(f"shape {shape}: SSIM needs images of at least 7 pixels on every spatial side")
    return np.array([structural_similarity(a.reshape(shape), b.reshape(shape), data_range=data_range,
                                           channel_axis=channel_axis) for a, b in zip(X, Y)])


def skimage019_data_range(dtype) -> float:
    """The ``data_range`` scikit-image's ``structural_similarity`` took up to version 0.19 when none was given:
    ``dmax - dmin`` of ``skimage.util.dtype.dtype_range`` for the first image's dtype — 2.0 for every float
    type (its range is (-1, 1)), 1 for booleans, the full range of an integer type (255 for ``uint8``)."""
    from skimage.util.dtype import dtype_range

    dt = np.dtype(dtype)
    try:
        dmin, dmax = dtype_range[dt.type]
    except KeyError:
        raise ValueError(f"scikit-image has no default data range for dtype {dt}") from None
    return float(dmax) - float(dmin)


@validate_params(
    {"X": ["array-like"], "Y": ["array-like"], "shape": [tuple, list]},
    prefer_skip_nested_validation=True,
)
def ssim_authors(X, Y, shape=(28, 28)):
    """Per-image SSIM as the OF-AE authors compute it (see the module docstring): every row of ``X`` (the
    originals) and ``Y`` (the decodes) reshaped to ``shape`` and compared by ``structural_similarity`` with
    ``channel_axis=-1`` (the old ``multichannel=True``: the last axis — the columns of a grey image — as
    channels) and the old default ``data_range`` of ``X``'s dtype (:func:`skimage019_data_range`: 2 for
    float arrays). Every axis but the last must be at least 7 long (SSIM's window)."""
    from skimage.metrics import structural_similarity

    x_dtype = np.asarray(X).dtype
    X, Y = _pair(X, Y)
    shape = _image_shape(shape, X.shape[1])
    if len(shape) < 2 or min(shape[:-1]) < 7:
        raise ValueError(f"shape {shape}: the authors' SSIM treats the last axis as channels, and needs every "
                         "other axis at least 7 long")
    rng_ = skimage019_data_range(x_dtype)
    return np.array([structural_similarity(a.reshape(shape), b.reshape(shape), data_range=rng_, channel_axis=-1)
                     for a, b in zip(X, Y)])


@validate_params(
    {"X": ["array-like"], "R": ["array-like"], "ink_threshold": [Real]},
    prefer_skip_nested_validation=True,
)
def off_ink_share(X, R, ink_threshold=64.0):
    """Per-row share of a decode's mass that lies off the ink of the original.

    For an original ``x`` (a row of ``X``) and its decode ``r`` (a row of ``R``), the *ink* is the set of
    pixels with ``x_j > ink_threshold`` (64 on the 0..255 scale: a quarter of the range), the *background*
    the others, and the decoded mass is ``sum_j max(r_j, 0)`` (negative values, which an image box excludes,
    count as no mass). The share is ``sum_{j: x_j <= ink_threshold} max(r_j, 0) / sum_j max(r_j, 0)``: 0
    when all the decoded mass is on ink, 1 when it is all on background; NaN for a decode without mass."""
    X, R = _pair(X, R, names=("X", "R"))
    mass = np.maximum(R, 0.0)
    total = mass.sum(axis=1)
    off = np.where(X <= ink_threshold, mass, 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, off / np.where(total > 0, total, 1.0), np.nan)


def mse_rows(X, Y):
    """Per-row mean squared error."""
    X, Y = _pair(X, Y)
    return ((X - Y) ** 2).mean(axis=1)


@validate_params(
    {"X_train": ["array-like"], "X_test": ["array-like"], "n_components": [int_interval(1)],
     "box": [tuple, list, None]},
    prefer_skip_nested_validation=True,
)
def pca_reconstruct(X_train, X_test, n_components, box=None):
    """PCA autoencoder baseline: project ``X_test`` on the first ``n_components`` principal axes of
    ``X_train`` and map back (clipped to ``box`` if given). ``n_components`` is capped at the training rank."""
    from sklearn.decomposition import PCA

    X_train = check_array(X_train, name="X_train", min_samples=2)
    X_test = check_array(X_test, name="X_test")
    if X_test.shape[1] != X_train.shape[1]:
        raise ValueError(f"X_test has {X_test.shape[1]} features but X_train has {X_train.shape[1]}")
    for a, nm in ((X_train, "X_train"), (X_test, "X_test")):
        check_magnitude(a, _LIMIT, name=nm, reason="the principal axes come from sums of squares")
    if box is not None and len(box) != 2:
        raise ValueError(f"box must be None or a pair (lo, hi), got {box!r}")
    k = int(max(1, min(n_components, min(X_train.shape) - 1)))
    pca = PCA(n_components=k, svd_solver="full").fit(X_train)
    R = pca.inverse_transform(pca.transform(X_test))
    if box is not None:
        R = np.clip(R, box[0], box[1])
    return R, k
