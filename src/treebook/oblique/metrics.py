"""Reconstruction quality: SSIM (images, scikit-image) and MSE, plus the PCA baseline."""

from __future__ import annotations

import numpy as np

__all__ = ["mse_rows", "pca_reconstruct", "ssim_images"]


def ssim_images(X, Y, shape, data_range=255.0, channel_axis=None):
    """Per-image SSIM (Wang et al. 2004, scikit-image) between rows of ``X`` and ``Y`` reshaped to ``shape``."""
    from skimage.metrics import structural_similarity

    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if X.shape != Y.shape:
        raise ValueError(f"shapes differ: {X.shape} vs {Y.shape}")
    return np.array([structural_similarity(a.reshape(shape), b.reshape(shape), data_range=data_range,
                                           channel_axis=channel_axis) for a, b in zip(X, Y)])


def mse_rows(X, Y):
    """Per-row mean squared error."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if X.shape != Y.shape:
        raise ValueError(f"shapes differ: {X.shape} vs {Y.shape}")
    return ((X - Y) ** 2).mean(axis=1)


def pca_reconstruct(X_train, X_test, n_components, box=None):
    """PCA autoencoder baseline: project ``X_test`` on the first ``n_components`` principal axes of
    ``X_train`` and map back (clipped to ``box`` if given). ``n_components`` is capped at the training rank."""
    from sklearn.decomposition import PCA

    k = int(max(1, min(n_components, min(X_train.shape) - 1)))
    pca = PCA(n_components=k, svd_solver="full").fit(X_train)
    R = pca.inverse_transform(pca.transform(X_test))
    if box is not None:
        R = np.clip(R, box[0], box[1])
    return R, k
