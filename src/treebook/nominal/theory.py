"""Small constructions that illustrate the statements of Laber, Molinaro & Pereira (2018).

* :func:`separating_hyperplane` - Lemma 2.5 (hyperplanes lemma) and Proposition 3.1: a hyperplane that
  separates the class-probability vectors ``pi(v)`` of the two sides of a partition, and its normal moved
  into the box ``[0, 1]^k``.
* :func:`section_4_1_instance` - the instance ``{(x,0,0), (0,x,0), (c,0,c)}`` on which ``A_{e_i*}`` has ratio
  close to 2 for Gini.
* :func:`partition_instance` - the reduction from PARTITION behind Theorem 4.6 (NP-hardness for Entropy).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from treebook.nominal.impurity import weighted_impurity

__all__ = ["separating_hyperplane", "to_unit_box", "section_4_1_instance", "partition_instance",
           "partition_threshold"]


def separating_hyperplane(V, left):
    """Largest-margin ``(d, C, margin)`` with ``d·pi(v) <= C - margin`` on the left and ``>= C + margin`` on
    the right, ``|d_i| <= 1`` (a linear programme).  The sides are strictly separable iff ``margin > 0``."""
    V = np.asarray(V, dtype=float)
    left = np.asarray(left, dtype=bool)
    keep = V.sum(axis=1) > 0
    P = V[keep] / V[keep].sum(axis=1, keepdims=True)
    side = np.where(left[keep], 1.0, -1.0)  # +1: left must be below C
    n, k = P.shape
    # variables: d (k), C, t ; maximise t
    A = np.hstack([side[:, None] * P, -side[:, None], np.ones((n, 1))])
    b = np.zeros(n)
    c = np.zeros(k + 2)
    c[-1] = -1.0
    bounds = [(-1, 1)] * k + [(None, None), (None, 1.0)]
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if res.status != 0:
        raise ValueError(f"separation LP failed: {res.message}")
    return res.x[:k], float(res.x[k]), float(res.x[k + 1])


def to_unit_box(d, C):
    """Proposition 3.1: ``d' = (d - min(d) 1) / s`` and ``C' = (C - min(d)) / s`` (``s`` = the range of ``d``)
    define the same split of probability vectors (``pi(v)·1 = 1``) with ``d'`` in ``[0, 1]^k``."""
    d = np.asarray(d, dtype=float)
    m = d.min()
    s = d.max() - m
    if s <= 0:
        raise ValueError("a constant direction separates nothing")
    return (d - m) / s, (C - m) / s


def section_4_1_instance(x: float, c: float = 1.0, eps: float = 0.0) -> np.ndarray:
    """``V = {(x,0,0), (0,x,0), (c,0,c+eps)}`` of section 4.1 (``eps > 0`` breaks the tie of ``A_{e_1}``)."""
    return np.array([[x, 0.0, 0.0], [0.0, x, 0.0], [c, 0.0, c + eps]])


def partition_instance(a) -> np.ndarray:
    """Theorem 4.6: the integers ``a_1..a_k`` become ``k`` pure values ``a_i e_i`` (one per class).

    Every binary partition then costs ``I(u∘d) + I(u∘(1-d)) = ||u|| (H(u/||u||) - h(d·u/||u||))`` (entropy in
    bits, ``h`` the binary entropy), which is minimal - equal to :func:`partition_threshold` - iff the
    integers split into two halves of equal sum."""
    a = np.asarray(a, dtype=float)
    if a.ndim != 1 or a.size < 2 or np.any(a <= 0):
        raise ValueError("a PARTITION instance is at least two positive integers")
    return np.diag(a)


def partition_threshold(a) -> float:
    """Entropy impurity of a perfectly balanced split of the instance of :func:`partition_instance`."""
    a = np.asarray(a, dtype=float)
    T = a.sum()
    return float(weighted_impurity(a, "entropy") - T)
