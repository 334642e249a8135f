"""Reconstruction quality: SSIM (images, scikit-image) and MSE, plus the PCA baseline."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

from treebook.validation import check_array, check_magnitude

__all__ = ["mse_rows", "pca_reconstruct", "ssim_images"]

#: the metrics square differences of the values: beyond this magnitude they would overflow
_LIMIT = 1e150


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
     "data_range": [Interval(Real, 0, None, closed="neither"), None], "channel_axis": [Integral, None]},
    prefer_skip_nested_validation=True,
)
def ssim_images(X, Y, shape, data_range=255.0, channel_axis=None):
    """Per-image SSIM (Wang et al. 2004, scikit-image) between rows of ``X`` and ``Y`` reshaped to ``shape``.

    ``shape`` is the image shape (e.g. ``(28, 28)`` or ``(32, 32, 3)`` with ``channel_axis=-1``); its
    product must be the number of columns, and every spatial side at least 7 pixels (SSIM's window)."""
    from skimage.metrics import structural_similarity

    X, Y = _pair(X, Y)
    if not shape or not all(isinstance(s, Integral) and not isinstance(s, bool) and s >= 1 for s in shape):
        raise ValueError(f"shape must be a tuple of positive ints, got {shape!r}")
    shape = tuple(int(s) for s in shape)
    if int(np.prod(shape)) != X.shape[1]:
        raise ValueError(f"shape {shape} holds {int(np.prod(shape))} values but X has {X.shape[1]} columns")
    spatial = list(shape)
    if channel_axis is not None:
        if not -len(shape) <= channel_axis < len(shape):
            raise ValueError(f"channel_axis {channel_axis} is outside shape {shape}")
        del spatial[channel_axis]
    if len(spatial) < 1 or min(spatial) < 7:
        raise ValueError(f"shape {shape}: SSIM needs images of at least 7 pixels on every spatial side")
    return np.array([structural_similarity(a.reshape(shape), b.reshape(shape), data_range=data_range,
                                           channel_axis=channel_axis) for a, b in zip(X, Y)])


def mse_rows(X, Y):
    """Per-row mean squared error."""
    X, Y = _pair(X, Y)
    return ((X - Y) ** 2).mean(axis=1)


@validate_params(
    {"X_train": ["array-like"], "X_test": ["array-like"], "n_components": [Interval(Integral, 1, None, closed="left")],
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
