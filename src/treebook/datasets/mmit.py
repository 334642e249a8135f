"""The neuroblastoma changepoint interval-regression data (Hocking et al. 2013), chapter 2.

3,418 labelled DNA copy-number profiles (one per patient and chromosome) with 117 features; the
target is an interval of log(penalty) values for which a changepoint model makes no label error.
Every row has exactly one finite limit. Source: the R package ``penaltyLearning``
(``neuroblastomaProcessed``), converted to CSV; see ``data/mmit/SOURCE.md``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._core import data_file

__all__ = ["load_neuroblastoma", "r_sample_folds", "neuroblastoma_authors_folds"]


def load_neuroblastoma(as_frame: bool = False):
    """Load the neuroblastoma interval-regression data.

    Returns
    -------
    X : ndarray (3418, 117) or DataFrame (indexed by ``signal.name``, named feature columns)
    y : ndarray (3418, 2) of ``[lower, upper]`` limits of log(penalty), with ``-inf`` / ``+inf``
        (a DataFrame with columns ``lower``, ``upper`` when ``as_frame``)
    """
    if not isinstance(as_frame, (bool, np.bool_)):
        raise TypeError(f"as_frame must be True or False, got {as_frame!r}")
    feats = pd.read_csv(data_file("mmit", "neuroblastomaProcessed_features.csv"), index_col=0)
    targ = pd.read_csv(data_file("mmit", "neuroblastomaProcessed_targets.csv"), index_col=0)
    if not feats.index.equals(targ.index):
        raise ValueError("neuroblastoma features and targets are not aligned by signal.name")
    targ = targ.rename(columns={"min.L": "lower", "max.L": "upper"}).astype(float)
    if as_frame:
        return feats.astype(float), targ
    return feats.to_numpy(dtype=np.float64), targ.to_numpy(dtype=np.float64)


def _r_mersenne_twister(seed: int) -> np.random.Generator:
    """numpy's MT19937 in the state that R's ``set.seed(seed)`` gives its default generator.

    R (``RNG.c``) scrambles the seed with 50 rounds of ``seed = 69069 * seed + 1`` (mod 2^32), then
    fills its 625 seed words with 625 more rounds: the first word is the position (set to 624, so the
    first draw regenerates the block) and the other 624 are the Mersenne-Twister state.
    """
    s = int(seed) & 0xFFFFFFFF
    for _ in range(50):
        s = (69069 * s + 1) & 0xFFFFFFFF
    words = np.empty(625, dtype=np.uint32)
    for j in range(625):
        s = (69069 * s + 1) & 0xFFFFFFFF
        words[j] = s
    bits = np.random.MT19937(0)
    bits.state = {"bit_generator": "MT19937", "state": {"key": words[1:], "pos": 624}}
    return bits


def r_sample_folds(n: int, n_folds: int = 5, seed: int = 1) -> np.ndarray:
    """Fold ids ``1..n_folds`` exactly as R (before 3.6.0) draws ``set.seed(seed); sample(rep(1:n_folds, l=n))``.

    R's ``unif_rand`` is the tempered 32-bit Mersenne-Twister output times 2^-32 (moved off 0), and
    ``sample`` without replacement takes, for ``i = 0 .. n-1``, the index ``j = floor(m * u)`` of the
    ``m = n - i`` values left and replaces it by the last of them (the "Rounding" sampler that R used
    until 3.6.0, when the "Rejection" sampler became the default). ``make.data.sets.R`` of the
    authors' experiment repository draws the neuroblastoma folds this way (2017, R 3.4).
    """
    n, n_folds = int(n), int(n_folds)
    if n < 1 or n_folds < 1:
        raise ValueError(f"n and n_folds must be positive; got n={n}, n_folds={n_folds}")
    raw = _r_mersenne_twister(seed).random_raw(n).astype(np.float64) * 2.3283064365386963e-10
    u = np.where(raw <= 0.0, 0.5 * 2.328306437080797e-10, raw)
    u = np.where(1.0 - u <= 0.0, 1.0 - 0.5 * 2.328306437080797e-10, u)
    values = np.arange(n) % n_folds + 1  # rep(1:n_folds, length.out = n)
    left = np.arange(n)
    order = np.empty(n, dtype=np.int64)
    m = n
    for i in range(n):
        j = int(m * u[i])
        order[i] = left[j]
        m -= 1
        left[j] = left[m]
    return values[order]


def neuroblastoma_authors_folds() -> np.ndarray:
    """The authors' fixed outer folds of the neuroblastoma data (one id in 1..5 per row of
    :func:`load_neuroblastoma`): ``makeData`` of ``make.data.sets.R`` keeps the rows with a finite
    limit (all 3,418) and draws ``set.seed(1); sample(rep(1:5, l=n))`` (:func:`r_sample_folds`)."""
    _, y = load_neuroblastoma()
    keep = np.isfinite(y).any(axis=1)
    if not keep.all():
        raise ValueError("every neuroblastoma row has a finite limit; the data file has changed")
    return r_sample_folds(len(y), 5, seed=1)
