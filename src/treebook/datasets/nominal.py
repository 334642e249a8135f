"""Loaders of the data sets of chapter 1 (nominal splits; Laber, Molinaro & Pereira, ICML 2018, section 5.2).

Each loader returns ``(X, y)``: ``X`` a :class:`pandas.DataFrame` whose nominal columns are pandas
categoricals (categories sorted) and whose numeric columns are floats, ``y`` a categorical Series of class
labels.  Files are read through :func:`treebook.datasets.data_file` (sha256-verified; nothing is downloaded).

Eight of the paper's eleven data sets are shipped (Cover Type, KDD98 and San Francisco Crime are not).
Rows with the missing-value marker ``?`` are dropped for Adult and Mushroom, as in the authors' runs
(30,162 and 5,644 rows remain).  Leading/trailing blanks are stripped from every field; an empty nominal
field is kept as the category ``"(empty)"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._core import data_file

__all__ = ["NOMINAL_DATASETS", "PAPER_DATASETS", "NominalDataset", "load_nominal", "nominal_summary"]

CHAPTER = "nominal_splits"


@dataclass(frozen=True)
class NominalDataset:
    """Description of one shipped file: its class column, numeric columns and missing-value handling."""

    name: str
    filename: str
    target: str
    numeric: tuple[str, ...] = ()
    drop_missing: bool = False
    paper_name: str = ""


NOMINAL_DATASETS: dict[str, NominalDataset] = {
    d.name: d
    for d in [
        NominalDataset("adult", "adult.csv", "income",
                       ("age", "fnlwgt", "education.num", "capital.gain", "capital.loss", "hours.per.week"),
                       drop_missing=True, paper_name="Adult"),
        NominalDataset("mushroom", "mushroom.csv", "class", drop_missing=True, paper_name="Mushroom"),
        NominalDataset("cars", "cars_with_aggreg.csv", "class", paper_name="Cars (with aggregation)"),
        NominalDataset("contraceptive", "contraceptive_with_aggreg.csv", "class", ("wifes_age", "num_children"),
                       paper_name="Contraceptive (with aggregation)"),
        NominalDataset("nursery", "nursery_with_aggreg.csv", "class", paper_name="Nursery (with aggregation)"),
        NominalDataset("poker_hand", "poker_hand.csv", "Classe", paper_name="Poker Hand"),
        NominalDataset("reuters_phonemes", "reuters_phonemes_10000_15classes.csv", "class",
                       paper_name="Reuters phonemes (15 classes)"),
        NominalDataset("shelter_animal_outcomes", "shelter_animal_outcomes_15classes.csv", "Outcome",
                       ("AgeUponOutcome",), paper_name="Shelter Animal Outcome (15 classes)"),
        NominalDataset("cars_original", "cars_original.csv", "condition", paper_name="Cars (original UCI)"),
        NominalDataset("contraceptive_original", "contraceptive_original.csv", "contraceptive_method_used",
                       ("Wife_age", "Unnamed: 3"), paper_name="Contraceptive (original UCI)"),
        NominalDataset("nursery_original", "nursery_original.csv", "status", paper_name="Nursery (original UCI)"),
    ]
}

#: The shipped data sets of the paper's Table 4, in the paper's versions (with the aggregated attributes).
PAPER_DATASETS = ("adult", "mushroom", "cars", "contraceptive", "nursery", "poker_hand", "reuters_phonemes",
                  "shelter_animal_outcomes")


def load_nominal(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """Load a chapter-1 data set by name (see :data:`NOMINAL_DATASETS`); returns ``(X, y)``."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, one of {sorted(NOMINAL_DATASETS)}; got {type(name).__name__}")
    if name not in NOMINAL_DATASETS:
        raise ValueError(f"unknown data set name {name!r}; choose one of {sorted(NOMINAL_DATASETS)}")
    spec = NOMINAL_DATASETS[name]
    raw = pd.read_csv(data_file(CHAPTER, spec.filename), dtype=str, keep_default_na=False)
    raw = raw.apply(lambda c: c.str.strip())
    if spec.drop_missing:
        raw = raw[~(raw == "?").any(axis=1)].reset_index(drop=True)
    y = pd.Series(pd.Categorical(raw[spec.target].replace("", "(empty)")), name=spec.target)
    cols = {}
    for c in raw.columns:
        if c == spec.target:
            continue
        if c in spec.numeric:
            vals = pd.to_numeric(raw[c], errors="coerce").astype(float)
            if vals.isna().any():
                vals = vals.fillna(float(np.nanmedian(vals)))
            cols[c] = vals
        else:
            s = raw[c].replace("", "(empty)")
            cols[c] = pd.Categorical(s, categories=sorted(s.unique()))
    X = pd.DataFrame(cols)
    return X, y


def nominal_summary(names=None) -> pd.DataFrame:
    """One row per data set: rows, classes, nominal/numeric attribute counts and the largest arity.

    ``names`` is a list of data set names (None: the paper's eight)."""
    if isinstance(names, str) or not (names is None or isinstance(names, (list, tuple))):
        raise TypeError(f"names must be None or a list of data set names, got {names!r}")
    if names is not None:
        unknown = [n for n in names if not isinstance(n, str) or n not in NOMINAL_DATASETS]
        if unknown or not names:
            raise ValueError(f"names must list data sets of {sorted(NOMINAL_DATASETS)}; unknown: {unknown}")
    rows = []
    for name in names or PAPER_DATASETS:
        X, y = load_nominal(name)
        nom = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
        rows.append({
            "data set": name,
            "rows": len(X),
            "classes": int(y.nunique()),
            "nominal attrs": len(nom),
            "numeric attrs": X.shape[1] - len(nom),
            "max arity": max((int(X[c].nunique()) for c in nom), default=0),
            "largest class %": round(100 * y.value_counts(normalize=True).iloc[0], 1),
        })
    return pd.DataFrame(rows).set_index("data set")
