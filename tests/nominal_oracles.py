"""Oracles shared by the nominal-partition tests: random tables (numpy and hypothesis) and the exhaustive optimum by
itertools."""

import itertools

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treebook.nominal import partition_impurity

#: hypothesis tables: 2-8 values x 2-5 classes, counts 0..12, not all zero (empty rows and columns allowed)
tables = arrays(
    np.int64,
    st.tuples(st.integers(2, 8), st.integers(2, 5)),
    elements=st.integers(0, 12),
).filter(lambda V: V.sum() > 0)


def random_tables(rng, count, n_range=(2, 9), k_range=(2, 5), high=8):
    """``count`` random tables with no empty row or column."""
    out = []
    while len(out) < count:
        n = rng.integers(*n_range, endpoint=True)
        k = rng.integers(*k_range, endpoint=True)
        V = rng.integers(0, high, size=(n, k)).astype(float)
        if (V.sum(axis=1) > 0).all() and (V.sum(axis=0) > 0).all():
            out.append(V)
    return out


def brute_force_opt(V, impurity):
    """Independent oracle: every proper subset containing value 0 on the left, itertools enumeration."""
    V = np.asarray(V, dtype=float)
    n = V.shape[0]
    best = np.inf
    for r in range(1, n):
        for rest in itertools.combinations(range(1, n), r - 1):
            mask = np.zeros(n, dtype=bool)
            mask[0] = True
            mask[list(rest)] = True
            best = min(best, partition_impurity(V, mask, impurity))
    return best
