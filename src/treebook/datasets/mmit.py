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

__all__ = ["load_neuroblastoma"]


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
