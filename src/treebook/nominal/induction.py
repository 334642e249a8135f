"""Decision-tree induction experiment (section 5.2 and Table 4 of Laber, Molinaro & Pereira, 2018).

For each data set and impurity, every splitter grows a :class:`~treebook.nominal.tree.NominalTreeClassifier`
of depth at most 16 on the training part of ``n_repeats`` stratified ``n_folds``-fold cross-validations (the
same folds for all splitters).  Two splitters are compared by a one-tailed paired t-test at level ``alpha``
on the per-repetition accuracies (mean over the folds of a repetition); "+w -l" counts the data sets on which
the first splitter is significantly better / worse.

``tree_params`` passes further options to every tree, e.g. :data:`~treebook.nominal.tree.AUTHORS_TREE_RULES`
for the pre-pruning and unseen-value rules of the authors' Table 4 runs.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.model_selection import StratifiedKFold

from treebook.nominal.tree import NominalTreeClassifier
from treebook.validation import check_random_state

__all__ = ["cross_validate_splitters", "paired_wins", "wins_losses_table"]


def cross_validate_splitters(X, y, splitters=("hcc", "lca", "pcext", "sliqext"), criterion="gini",
                             n_repeats: int = 20, n_folds: int = 3, max_depth: int = 16, max_rows=None,
                             random_state=None, progress: bool = False, tree_params=None) -> pd.DataFrame:
    """Accuracy of each splitter on each fold of ``n_repeats`` stratified ``n_folds``-fold CVs.

    ``max_rows`` (optional) first draws a stratified subsample of that many rows (to keep book-scale runs
    short; ``None`` uses every row, as the paper does).  ``tree_params`` (optional dict) holds further
    :class:`~treebook.nominal.tree.NominalTreeClassifier` parameters (not ``splitter``, ``criterion`` or
    ``max_depth``, which are arguments here).  Returns one row per (repeat, fold, splitter) with the test
    ``accuracy``, the ``fit_seconds`` and the number of ``leaves``.
    """
    tree_params = dict(tree_params or {})
    clash = sorted(set(tree_params) & {"splitter", "criterion", "max_depth"})
    if clash:
        raise ValueError(f"tree_params must not set {clash}; pass them as arguments")
    NominalTreeClassifier(**tree_params)  # unknown parameter names fail here, before any fit
    rng = check_random_state(random_state)
    y = np.asarray(y)
    if max_rows is not None and len(y) > max_rows:
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(np.arange(len(y)), train_size=int(max_rows), stratify=y,
                                   random_state=int(rng.integers(2**31 - 1)))
        keep = np.sort(keep)
        X = X.iloc[keep] if hasattr(X, "iloc") else np.asarray(X)[keep]
        y = y[keep]
    rows = []
    reps = range(n_repeats)
    if progress:
        from tqdm.auto import tqdm

        reps = tqdm(reps, desc="CV repetitions")
    for r in reps:
        skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=int(rng.integers(2**31 - 1)))
        with warnings.catch_warnings():  # classes rarer than n_folds are spread as well as possible
            warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
            folds = list(skf.split(np.zeros(len(y)), y))
        for f, (tr, te) in enumerate(folds):
            Xtr = X.iloc[tr] if hasattr(X, "iloc") else X[tr]
            Xte = X.iloc[te] if hasattr(X, "iloc") else X[te]
            for s in splitters:
                clf = NominalTreeClassifier(splitter=s, criterion=criterion, max_depth=max_depth, **tree_params)
                t0 = time.perf_counter()
                clf.fit(Xtr, y[tr])
                secs = time.perf_counter() - t0
                acc = float(np.mean(clf.predict(Xte) == y[te]))
                rows.append({"repeat": r, "fold": f, "splitter": s, "accuracy": acc, "fit_seconds": secs,
                             "leaves": clf.tree_.n_leaves})
    return pd.DataFrame(rows)


def paired_wins(cv: pd.DataFrame, a: str, b: str, alpha: float = 0.05) -> int:
    """+1 if ``a`` is significantly more accurate than ``b`` (one-tailed paired t-test over the repetitions'
    mean accuracies at level ``alpha``), -1 if significantly less accurate, else 0."""
    acc = cv.groupby(["repeat", "splitter"])["accuracy"].mean().unstack("splitter")
    x, z = acc[a].to_numpy(), acc[b].to_numpy()
    d = x - z
    if len(d) < 2 or np.allclose(d, d[0]):
        # identical or constant differences: the t statistic is undefined; decide by the sign if non-zero
        if len(d) >= 2 and d[0] != 0:
            return 1 if d[0] > 0 else -1
        return 0
    if stats.ttest_rel(x, z, alternative="greater").pvalue < alpha:
        return 1
    if stats.ttest_rel(x, z, alternative="less").pvalue < alpha:
        return -1
    return 0


def wins_losses_table(results: dict, reference: str, others, alpha: float = 0.05) -> pd.DataFrame:
    """Table 4: for each impurity (rows) and competitor (columns), "+wins -losses" of ``reference`` over the
    data sets.  ``results[(dataset, impurity)]`` is a :func:`cross_validate_splitters` frame."""
    table = {}
    for imp in sorted({i for _, i in results}, key=["gini", "entropy"].index):
        row = {}
        for o in others:
            outcomes = [paired_wins(cv, reference, o, alpha) for (ds, i), cv in results.items() if i == imp]
            row[o] = f"+{sum(x > 0 for x in outcomes)} -{sum(x < 0 for x in outcomes)}"
        table[imp] = row
    return pd.DataFrame(table).T
