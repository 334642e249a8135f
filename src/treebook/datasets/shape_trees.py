"""The continuous-feature benchmark sets of chapter 3 (shape generalized trees).

Plain text, space separated, no header; column 0 is the integer class label, the other columns the
features (min-max scaled to [0, 1] by the collection's authors).  See ``data/shape_trees/SOURCE.md``.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import validate_params

from ..validation import int_interval, real_interval
from ._core import data_file

__all__ = ["FOLD_SEEDS", "SHAPE_DATASETS", "load_shape_dataset", "paper_split"]

#: name -> file of the shipped sets (``bean`` is only the 80 % training part of the original)
SHAPE_DATASETS = {
    "avila": "avila.txt", "bank": "bank.txt", "bean": "bean_train80.txt", "bidding": "bidding.txt",
    "eeg": "eeg.txt", "fault": "fault.txt", "htru": "htru.txt", "magic": "magic.txt",
    "occupancy": "occupancy.txt", "page": "page.txt", "raisin": "raisin.txt", "rice": "rice.txt",
    "room": "room.txt", "segment": "segment.txt", "wilt": "wilt.txt",
}

#: the five fold seeds of the paper's protocol
FOLD_SEEDS = (42, 63, 84, 56, 33)


def load_shape_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(X, y)`` (float features, integer labels) of one shipped data set."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, one of {sorted(SHAPE_DATASETS)}; got {type(name).__name__}")
    if name not in SHAPE_DATASETS:
        raise ValueError(f"unknown shape_trees data set name {name!r}; choose one of {sorted(SHAPE_DATASETS)}")
    data = np.loadtxt(data_file("shape_trees", SHAPE_DATASETS[name]), dtype=float, ndmin=2)
    if data.shape[1] < 2:
        raise ValueError(f"{name}: expected a label column and at least one feature column")
    y = data[:, 0]
    if not np.all(y == np.round(y)):
        raise ValueError(f"{name}: column 0 must hold integer class labels")
    return np.ascontiguousarray(data[:, 1:]), y.astype(np.int64)


@validate_params(
    {"y": ["array-like"], "seed": [int_interval(0, 2**32 - 1, closed="both")],
     "val": [real_interval(0, 1, closed="neither")], "test": [real_interval(0, 1, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def paper_split(y, seed: int, val: float = 0.1, test: float = 0.2):
    """Stratified train/validation/test indices (70/10/20 by default) for one fold seed."""
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y must be a non-empty 1-D array of class labels, got shape {y.shape}")
    if val + test >= 1:
        raise ValueError(f"val + test must be below 1 (something must be left to train on), got {val} + {test}")
    idx = np.arange(y.size)
    rest, te = train_test_split(idx, test_size=test, stratify=y, random_state=seed)
    tr, va = train_test_split(rest, test_size=val / (1.0 - test), stratify=y[rest], random_state=seed)
    return np.sort(tr), np.sort(va), np.sort(te)
