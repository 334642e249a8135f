"""Impurity criteria, vectorised over many nodes or candidate splits at once.

Two scales appear in the book:

* the per-sample impurity ``i(p)`` of a class-probability vector ``p`` (what scikit-learn reports
  as a node's impurity), and
* the frequency-weighted impurity ``I(v) = ||v||_1 * i(v / ||v||_1)`` of a vector of class counts
  ``v`` (the scale of Laber et al. 2018, section 1.1), so that the cost of a partition is
  ``I(left) + I(right)``.

Entropy is measured in bits (``log2``), as scikit-learn does.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CLASSIFICATION", "REGRESSION", "check_criterion", "impurity", "one_hot", "weighted_impurity"]

CLASSIFICATION = ("gini", "entropy")
REGRESSION = ("mse",)


def check_criterion(criterion: str, allowed=CLASSIFICATION) -> str:
    """Return ``criterion`` if it is one of ``allowed``, else raise ``ValueError``."""
    if criterion not in allowed:
        raise ValueError(f"criterion must be one of {list(allowed)}; got {criterion!r}")
    return criterion


def one_hot(y_encoded, n_classes: int) -> np.ndarray:
    """Indicator matrix (n, n_classes) of class codes ``0..n_classes-1``: the statistics the
    classification criteria sum over a node."""
    y_encoded = np.asarray(y_encoded, dtype=np.intp)
    out = np.zeros((y_encoded.size, n_classes))
    out[np.arange(y_encoded.size), y_encoded] = 1.0
    return out


def impurity(p, criterion: str = "gini") -> np.ndarray:
    """Per-row impurity ``i(p)`` of class-probability rows ``p`` (last axis = classes)."""
    p = np.asarray(p, dtype=float)
    if criterion == "gini":
        return 1.0 - np.sum(p * p, axis=-1)
    if criterion == "entropy":
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(p > 0, np.log2(np.where(p > 0, p, 1.0)), 0.0)
        return -np.sum(p * logs, axis=-1)
    raise ValueError(f"criterion must be 'gini' or 'entropy'; got {criterion!r}")


def weighted_impurity(counts, criterion: str = "gini") -> np.ndarray:
    """Frequency-weighted impurity ``||v||_1 * i(v/||v||_1)`` of count rows ``v`` (rows of zeros give 0).

    Computed without forming probabilities where possible, so large batches stay cheap:
    Gini gives ``n - sum(v^2)/n`` and entropy ``n log2 n - sum v log2 v``.
    """
    v = np.asarray(counts, dtype=float)
    n = v.sum(axis=-1)
    safe = np.where(n > 0, n, 1.0)
    if criterion == "gini":
        out = n - np.sum(v * v, axis=-1) / safe
    elif criterion == "entropy":
        with np.errstate(divide="ignore", invalid="ignore"):
            vlog = np.where(v > 0, v * np.log2(np.where(v > 0, v, 1.0)), 0.0)
        out = n * np.log2(safe) - vlog.sum(axis=-1)
    else:
        raise ValueError(f"criterion must be 'gini' or 'entropy'; got {criterion!r}")
    out = np.where(n > 0, out, 0.0)
    return np.maximum(out, 0.0)


def node_impurity_classification(onehot: np.ndarray, criterion: str) -> float:
    """Per-sample impurity of a node from its one-hot (or weighted) class matrix."""
    counts = onehot.sum(axis=0)
    n = counts.sum()
    return float(impurity(counts / n, criterion)) if n > 0 else 0.0


def node_impurity_mse(y: np.ndarray) -> float:
    """Per-sample squared-error impurity (scikit-learn's ``sq_sum/n - mean^2``, averaged over outputs)."""
    y = y.reshape(len(y), -1)
    n = y.shape[0]
    if n == 0:
        return 0.0
    mean = y.sum(axis=0) / n
    return float(np.mean((y * y).sum(axis=0) / n - mean * mean))
