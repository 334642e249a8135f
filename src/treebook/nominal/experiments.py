"""The experiments of chapter 1 (Laber, Molinaro & Pereira, 2018).

**Monte Carlo tables (section 5.1, Tables 1-3).** The split procedures compared on random tables. Each
contingency table has ``n`` values x ``k`` classes with entries drawn uniformly from ``{0, ..., high}``
(``high = 7`` in the paper); a table with an all-zero row or column is drawn again.  Every method splits every
table; we record the impurity of its partition and its wall-clock time, and (for small ``n``) the exact
optimum, which the paper could not report.

**Decision-tree induction (section 5.2, Table 4).** For each data set and impurity, every splitter grows a
:class:`~treebook.nominal.tree.NominalTreeClassifier` of depth at most 16 on the training part of ``n_repeats`` stratified ``n_folds``-fold cross-validations (the
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

from treebook.nominal.partitions import WIN_RTOL, at_least_as_good, best_partition
from treebook.nominal.tree import NominalTreeClassifier
from treebook.sweep import read_runs
from treebook.validation import check_random_state

__all__ = [
    "AUTHORS_METHODS",
    "EXCESS_POOL",
    "EXCESS_READINGS",
    "UNION_READINGS",
    "PAPER_METHODS",
    "TAIL_FROM",
    "excess_climb",
    "excess_readings",
    "excess_tail",
    "load_tail_sweep",
    "tail_summary",
    "load_excess_sweep",
    "replicate_ranges",
    "random_table",
    "simulate",
    "win_percentages",
    "max_relative_excess",
    "time_ratios",
    "ratio_to_optimum",
    "win_cell",
    "cross_validate_splitters",
    "paired_wins",
    "wins_losses_table",
]

#: The four procedures compared in the paper's Tables 1-3, in the paper's row order (PCext as published by
#: Coppersmith et al.).
PAPER_METHODS = ("hcc", "pcext", "sliqext", "lca")
#: The same four as the authors' experiments ran them: PCext projects the count rows (``"pcext_counts"``).
AUTHORS_METHODS = ("hcc", "pcext_counts", "sliqext", "lca")


def random_table(rng, n: int, k: int, high: int = 7, redraw: bool = True) -> np.ndarray:
    """A random ``n x k`` table, entries uniform in ``{0..high}``, redrawn until no row or column is all zero
    (the paper's rule); ``redraw=False`` keeps the first draw, all-zero rows and columns included (the
    generator of the authors' public code, ``RandomAttributeGenerator``)."""
    while True:
        V = rng.integers(0, high + 1, size=(n, k)).astype(float)
        if not redraw or ((V.sum(axis=1) > 0).all() and (V.sum(axis=0) > 0).all()):
            return V


def simulate(ns, ks, impurities=("gini", "entropy"), n_tables: int = 1000, methods=PAPER_METHODS,
             exact_max_n: int = 0, high: int = 7, random_state=None, progress: bool = False,
             redraw: bool = True) -> pd.DataFrame:
    """Run every method on ``n_tables`` random tables for each ``(impurity, n, k)`` cell.

    Returns a long DataFrame with one row per (impurity, n, k, table, method): ``impurity_value``,
    ``seconds`` (CPU time of this process, robust to other processes sharing the machine) and, when ``n <= exact_max_n``, ``opt`` (the exhaustive optimum).  The same tables are used
    for all methods (and for both impurities).

    With an integer ``random_state`` every cell draws its tables from its own generator,
    ``default_rng([random_state, n, k])``, so one cell can be recomputed alone (:func:`win_cell`)
    and gives the same tables whichever other cells are run; a ``Generator`` is drawn from in cell order.
    ``high`` and ``redraw`` are those of :func:`random_table`.
    """
    per_cell = isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
    if per_cell and random_state < 0:
        raise ValueError(f"random_state must be >= 0; got {random_state}")
    rng = None if per_cell else check_random_state(random_state)
    methods = tuple(methods)
    cells = [(n, k) for n in ns for k in ks]
    warm = random_table(np.random.default_rng(0), 6, 3, high)
    for imp in impurities:  # compile / load every kernel before timing
        for m in (*methods, "exhaustive"):
            best_partition(warm, m, imp)
    rows = []
    it = cells
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(cells, desc="Monte Carlo cells")
    for n, k in it:
        cell_rng = np.random.default_rng([int(random_state), int(n), int(k)]) if per_cell else rng
        tables = [random_table(cell_rng, int(n), int(k), high, redraw) for _ in range(int(n_tables))]
        for imp in impurities:
            vals = np.empty((len(tables), len(methods)))
            secs = np.empty_like(vals)
            opt = np.full(len(tables), np.nan)
            for t, V in enumerate(tables):
                for j, m in enumerate(methods):
                    t0 = time.process_time()
                    p = best_partition(V, m, imp)
                    secs[t, j] = time.process_time() - t0
                    vals[t, j] = p.impurity
                if n <= exact_max_n:
                    opt[t] = best_partition(V, "exhaustive", imp).impurity
            for j, m in enumerate(methods):
                rows.append(pd.DataFrame({
                    "impurity": imp, "n": int(n), "k": int(k), "table": np.arange(len(tables)), "method": m,
                    "impurity_value": vals[:, j], "seconds": secs[:, j], "opt": opt,
                }))
    return pd.concat(rows, ignore_index=True)


def win_cell(impurity: str, n: int, k: int, n_tables: int, seed: int, methods=PAPER_METHODS,
             rtol: float = WIN_RTOL) -> dict:
    """Win percentage of each method in one (impurity, n, k) cell of Tables 1-2, as :func:`simulate`
    with ``random_state=seed`` and :func:`win_percentages` compute it for the whole table."""
    df = simulate([n], [k], (impurity,), n_tables=n_tables, methods=methods, random_state=int(seed))
    w = win_percentages(df, methods, rtol)
    return {m: float(w.loc[(impurity, n, m), k]) for m in methods}


def _wide(df, value="impurity_value"):
    return df.pivot_table(index=["impurity", "n", "k", "table"], columns="method", values=value)


def win_percentages(df: pd.DataFrame, methods=PAPER_METHODS, rtol: float = WIN_RTOL) -> pd.DataFrame:
    """Percentage of tables on which each method is at least as good as every other method in ``methods``.

    "At least as good" is ``a <= b + rtol * max(|b|, 1)`` (:func:`treebook.nominal.at_least_as_good`).
    Rows: (impurity, n, method); columns: k.
    """
    w = _wide(df)[list(methods)]
    out = []
    for m in methods:
        others = w[[o for o in methods if o != m]].min(axis=1)
        win = at_least_as_good(w[m].to_numpy(), others.to_numpy(), rtol)
        s = pd.Series(win, index=w.index).groupby(level=["impurity", "n", "k"]).mean() * 100
        out.append(s.rename(m))
    res = pd.concat(out, axis=1).stack().rename("win %").reset_index().rename(columns={"level_3": "method"})
    return res.pivot_table(index=["impurity", "n", "method"], columns="k", values="win %")


def max_relative_excess(df: pd.DataFrame, methods=PAPER_METHODS, pool=None) -> pd.DataFrame:
    """Largest relative excess ``100 (I(P)/I(Q) - 1)`` of each method over the best of the others (per impurity).

    The others are ``methods`` without the method itself, or, with ``pool``, the methods of ``pool`` (which
    ``df`` must hold) without it."""
    pool = tuple(methods) if pool is None else tuple(pool)
    w = _wide(df)
    missing = [m for m in (*methods, *pool) if m not in w.columns]
    if missing:
        raise ValueError(f"df holds no results of {missing}")
    res = {}
    for m in methods:
        others = w[[o for o in pool if o != m]].min(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            exc = 100 * (w[m] / others - 1)
        exc = exc.where(others > 0, 0.0)
        res[m] = exc.groupby(level="impurity").max()
    return pd.DataFrame(res).T


#: the readings of the paper's maximum relative excess that :func:`excess_readings` runs, by name: what
#: changes from the paper's text (its cells, entries 0..7 with all-zero rows and columns redrawn, the excess
#: of a method over the best of the other three)
EXCESS_READINGS = {
    "the paper's text": "cells n in {12, 25, 50}, k in {3, 5, 7, 9}; entries 0..7; zero rows/columns redrawn",
    "entries 0..2": "the paper's additional experiments: the largest entry 2",
    "entries 0..15": "the paper's additional experiments: the largest entry 15",
    "no redraw": "the authors' public table generator: all-zero rows and columns kept",
    "small n added": "cells with n in {3, 4, 5, 6, 8, 10} added (the paper shows n >= 12 only)",
    "larger pool": "the excess over the best of seven methods (+ Twoing, one-vs-rest, Coppersmith's PCext)",
    "all the paper's tables": "the largest over the paper's text and its additional experiments (entries 0..7, "
                              "0..2 and 0..15): the maximum over every table the paper says it drew",
    "small n too": "the largest over all the paper's tables and the small n it ran but does not show: the "
                   "maximum over every table the paper says it drew or ran",
}
_PAPER_TABLES = ("the paper's text", "entries 0..2", "entries 0..15")
#: the readings that draw no tables of their own: the largest of the maxima of the readings they cover
UNION_READINGS = {"all the paper's tables": _PAPER_TABLES, "small n too": (*_PAPER_TABLES, "small n added")}
#: the extra methods of the ``"larger pool"`` reading
EXCESS_POOL = ("twoing", "one_vs_rest", "pcext")


def excess_readings(n_tables: int, random_state: int = 0, ns=(12, 25, 50), ks=(3, 5, 7, 9),
                    small_ns=(3, 4, 5, 6, 8, 10), methods=AUTHORS_METHODS, base=None, readings=None,
                    progress: bool = False) -> pd.DataFrame:
    """The largest relative excess of each of ``methods`` under each reading of :data:`EXCESS_READINGS`
    (``readings``: a subset of its names, default all), ``n_tables`` tables per cell.

    ``base``, a :func:`simulate` frame of ``methods`` on the paper's cells, is reused for the paper's
    reading (and for the small-n one, whose added cells are drawn); otherwise the cells are drawn with
    ``random_state`` (each reading from a seed of its own: ``random_state`` plus 2, 15, 3, 4 or 5). The
    readings of :data:`UNION_READINGS` draw no tables: each is the largest of the maxima of the readings it
    covers, which are run for it. Returns a DataFrame with rows ``(reading, method)`` and columns ``gini``
    and ``entropy`` (percent), the readings in the order asked for."""
    names = list(EXCESS_READINGS) if readings is None else list(readings)
    unknown = [r for r in names if r not in EXCESS_READINGS]
    if unknown:
        raise ValueError(f"unknown readings {unknown}; known: {list(EXCESS_READINGS)}")
    methods = tuple(methods)
    seed = int(random_state)
    unions = [r for r in names if r in UNION_READINGS]
    run = list(dict.fromkeys([r for r in names if r not in UNION_READINGS]
                             + [c for u in unions for c in UNION_READINGS[u]]))

    def paper_cells():
        nonlocal base
        if base is None:
            base = simulate(ns, ks, n_tables=n_tables, methods=methods, random_state=seed)
        return base

    out = {}
    it = run
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(run, desc="excess readings")
    for r in it:
        if r == "the paper's text":
            ex = max_relative_excess(paper_cells(), methods)
        elif r in ("entries 0..2", "entries 0..15"):
            high = 2 if r == "entries 0..2" else 15
            ex = max_relative_excess(simulate(ns, ks, n_tables=n_tables, methods=methods, high=high,
                                              random_state=seed + high), methods)
        elif r == "no redraw":
            ex = max_relative_excess(simulate(ns, ks, n_tables=n_tables, methods=methods, redraw=False,
                                              random_state=seed + 3), methods)
        elif r == "small n added":
            small = simulate(small_ns, ks, n_tables=n_tables, methods=methods, random_state=seed + 4)
            ex = max_relative_excess(pd.concat([paper_cells(), small], ignore_index=True), methods)
        else:  # larger pool
            pool = (*methods, *(m for m in EXCESS_POOL if m not in methods))
            ex = max_relative_excess(simulate(ns, ks, n_tables=n_tables, methods=pool, random_state=seed + 5),
                                     methods, pool=pool)
        out[r] = ex[["gini", "entropy"]]
    for u in unions:  # no tables of their own: the largest of the covered readings' maxima
        out[u] = pd.concat([out[r] for r in UNION_READINGS[u]]).groupby(level=0).max().loc[list(methods)]
    return pd.concat({r: out[r] for r in names}, names=["reading", "method"])


def time_ratios(df: pd.DataFrame, methods=PAPER_METHODS, base: str = "lca", stat: str = "median") -> pd.DataFrame:
    """Running time of each method divided by that of ``base`` (Table 3). Rows (n, method); columns k.

    ``stat`` aggregates the per-table times of a cell: ``"median"`` (robust on a shared machine) or ``"mean"``
    (the paper's choice)."""
    if stat not in ("median", "mean"):
        raise ValueError(f"stat must be 'median' or 'mean', got {stat!r}")
    t = df.groupby(["n", "k", "method"])["seconds"].agg(stat).unstack("method")
    ratios = t[list(methods)].div(t[base], axis=0)
    return ratios.stack().rename("ratio").reset_index().pivot_table(index=["n", "method"], columns="k",
                                                                    values="ratio")


def ratio_to_optimum(df: pd.DataFrame) -> pd.DataFrame:
    """Per table and method, ``I(method) / OPT`` (rows with a computed optimum only; OPT = 0 gives ratio 1)."""
    d = df.dropna(subset=["opt"]).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        d["ratio"] = np.where(d["opt"] > 0, d["impurity_value"] / d["opt"], 1.0)
    return d


def load_excess_sweep(folder, n_tables: int) -> pd.DataFrame:
    """The replicate maxima of a ``treebook sweep`` of ``notebooks/sweeps/01-excess-point.ipynb`` in
    ``folder`` (the run folders a sweep commits), at ``n_tables`` tables per cell: a DataFrame with columns
    ``seed``, ``reading``, ``method``, ``gini`` and ``entropy`` (percent). Unfinished points are left out;
    a sweep with no finished point at ``n_tables`` is refused, naming the numbers of tables it has."""
    runs = [r for r in read_runs(folder, "sweeps/01-excess-point") if r.record is not None]
    match = [r for r in runs if int(r.params["n_tables"]) == int(n_tables)]
    if not match:
        have = sorted({int(r.params["n_tables"]) for r in runs})
        raise ValueError(f"no finished point of the excess sweep in {folder} at n_tables = {n_tables} "
                         f"(finished points have n_tables in {have})")
    rows = [{"seed": int(r.params["seed"]), **row} for r in match for row in r.record["results"]["rows"]]
    out = pd.DataFrame(rows, columns=["seed", "reading", "method", "gini", "entropy"])
    unknown = sorted(set(out["reading"]) - set(EXCESS_READINGS))
    if unknown:
        raise ValueError(f"unknown readings {unknown} in the excess sweep in {folder}")
    # a union reading the points did not save is the largest, per seed, of the covered readings they did
    parts = [out]
    for u, covered in UNION_READINGS.items():
        have = out[out["reading"].isin(covered)]
        if u not in set(out["reading"]) and set(covered) <= set(out["reading"]):
            parts.append(have.groupby(["seed", "method"], as_index=False, sort=False)[["gini", "entropy"]].max()
                         .assign(reading=u))
    out = pd.concat(parts, ignore_index=True)[["seed", "reading", "method", "gini", "entropy"]]
    out.attrs["seconds"] = float(np.nansum([r.seconds for r in match]))
    order = {r: i for i, r in enumerate(EXCESS_READINGS)}
    return out.sort_values(["reading", "method", "seed"], key=lambda c: c.map(order) if c.name == "reading" else c,
                           ignore_index=True)


def replicate_ranges(replicates: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """For each (reading, method, impurity) of ``replicates`` (as :func:`load_excess_sweep` returns), the
    smallest and largest replicate maximum, the number of replicates, the paper's value (``paper``: rows
    methods, columns impurities) and ``inside``: whether the paper's value lies in ``[low, high]``. With R
    replicates, a further draw of the same reading falls inside their range with probability (R - 1) / (R + 1);
    a paper value outside it is unlikely under that reading."""
    long = replicates.melt(id_vars=["seed", "reading", "method"], value_vars=["gini", "entropy"],
                           var_name="impurity", value_name="excess")
    g = long.groupby(["reading", "method", "impurity"], sort=False)["excess"]
    out = pd.DataFrame({"low": g.min(), "high": g.max(), "replicates": g.size()})
    out["paper"] = [float(paper.loc[m, imp]) if m in paper.index else np.nan for _, m, imp in out.index]
    out["inside"] = (out["low"] <= out["paper"]) & (out["paper"] <= out["high"])
    return out


#: the excess (percent) above which :func:`excess_tail` keeps every table's excess
TAIL_FROM = 5.0


def _excess_of(V, method, others, impurity):
    """``100 (I(method)/min I(others) - 1)`` on table ``V`` (0 when the best of the others is pure)."""
    q = min(best_partition(V, o, impurity).impurity for o in others)
    if q <= 0:
        return 0.0
    return 100.0 * (best_partition(V, method, impurity).impurity / q - 1.0)


def _check_tail_args(n, k, high, method, others):
    if int(n) < 2 or int(k) < 2 or int(high) < 1:
        raise ValueError(f"need n >= 2 values, k >= 2 classes and a largest entry >= 1; got n={n}, k={k}, "
                         f"high={high}")
    if method in others or not others:
        raise ValueError(f"others must be a non-empty set of methods without {method!r}; got {others!r}")


def excess_tail(n: int, k: int, n_tables: int, high: int = 2, seed: int = 0, method: str = "pcext_counts",
                others=("hcc", "sliqext", "lca"), impurity: str = "entropy", block: int = 10_000) -> dict:
    """The tail of one method's relative excess over the best of ``others`` on ``n_tables`` random tables of
    one cell (``n`` values, ``k`` classes, entries uniform in ``{0..high}``, all-zero rows and columns
    redrawn: :func:`random_table`), drawn from ``default_rng([seed, n, k, high])``.

    A maximum over a paper-sized draw is an extreme of this tail; the tail itself says how often a draw of a
    given size reaches a given excess. Returns a dict: the cell and draw (``n``, ``k``, ``high``, ``seed``,
    ``n_tables``, ``block``, ``method``, ``impurity``); ``tail``, every excess of at least :data:`TAIL_FROM`
    percent, sorted (so the number of tables above any larger threshold can be counted later);
    ``block_maxima``, the largest excess in each consecutive block of ``block`` tables (one paper-sized draw of
    the cell when ``block`` is the paper's 10,000); ``largest`` and ``largest_table``, the largest excess and
    its table."""
    _check_tail_args(n, k, high, method, others)
    n_tables, block = int(n_tables), int(block)
    if n_tables < 1 or block < 1 or n_tables % block:
        raise ValueError(f"n_tables must be a positive multiple of block; got n_tables={n_tables}, block={block}")
    rng = np.random.default_rng([int(seed), int(n), int(k), int(high)])
    ex = np.empty(n_tables)
    best, best_table = -np.inf, None
    for t in range(n_tables):
        V = random_table(rng, int(n), int(k), int(high))
        ex[t] = _excess_of(V, method, others, impurity)
        if ex[t] > best:
            best, best_table = float(ex[t]), V
    return {"n": int(n), "k": int(k), "high": int(high), "seed": int(seed), "n_tables": n_tables, "block": block,
            "method": method, "impurity": impurity, "others": list(others),
            "tail": np.sort(ex[ex >= TAIL_FROM]).round(6).tolist(),
            "block_maxima": ex.reshape(-1, block).max(axis=1).round(6).tolist(),
            "largest": best, "largest_table": best_table.astype(int).tolist()}


def excess_climb(table, steps: int = 5000, high: int = 2, seed: int = 0, method: str = "pcext_counts",
                 others=("hcc", "sliqext", "lca"), impurity: str = "entropy", temperature: float = 1.0):
    """A local search for a table of the same cell (shape, entries in ``{0..high}``, no all-zero row or
    column) on which ``method``'s relative excess over the best of ``others`` is large: simulated annealing
    from ``table``, each step redrawing one or two entries; a worse table is accepted with probability
    ``exp(-drop / T)``, ``T`` falling from ``temperature`` by 0.05 % a step to 0.02. It shows which excesses
    tables of the cell can reach at all, not how often a random table does. Returns ``(excess, table)``, the
    largest excess met and its table."""
    V = np.array(table, dtype=float)
    if V.ndim != 2 or not np.isfinite(V).all() or (V < 0).any() or (V > high).any() or (V != np.round(V)).any():
        raise ValueError(f"table must be a 2-d array of integers in 0..{high}")
    n, k = V.shape
    _check_tail_args(n, k, high, method, others)
    if (V.sum(axis=1) == 0).any() or (V.sum(axis=0) == 0).any():
        raise ValueError("table has an all-zero row or column")
    rng = np.random.default_rng(int(seed))
    e = _excess_of(V, method, others, impurity)
    best, best_table, T = e, V.copy(), float(temperature)
    for _ in range(int(steps)):
        W = V.copy()
        for _ in range(int(rng.integers(1, 3))):
            W[rng.integers(n), rng.integers(k)] = rng.integers(0, high + 1)
        if (W.sum(axis=1) == 0).any() or (W.sum(axis=0) == 0).any():
            continue
        f = _excess_of(W, method, others, impurity)
        if f >= e or rng.random() < np.exp((f - e) / T):
            V, e = W, f
            if e > best:
                best, best_table = e, V.copy()
        T = max(0.02, T * 0.9995)
    return float(best), best_table.astype(int)


def load_tail_sweep(folder) -> list[dict]:
    """The finished points of a ``treebook sweep`` of ``notebooks/sweeps/01-tail-point.ipynb`` in ``folder``:
    one :func:`excess_tail` dict per point, in run order (unfinished points are left out)."""
    return [r.record["results"]["tail"] for r in read_runs(folder, "sweeps/01-tail-point") if r.record is not None]


def tail_summary(points, threshold: float, block: int = 10_000) -> pd.DataFrame:
    """Per cell (``n``, ``k``, ``high``) of :func:`excess_tail` dicts ``points`` (different seeds of a cell are
    pooled; a cell's points must share method, impurity and block): the tables drawn, how many reached
    ``threshold`` percent, the per-table rate with its 95 % upper bound (exact Poisson; about 3 divided by the
    number of tables when none did), the paper-sized draws (blocks of ``block`` tables) and how many of their maxima
    reached the threshold, and the largest excess. ``threshold`` must be at least :data:`TAIL_FROM`."""
    if threshold < TAIL_FROM:
        raise ValueError(f"threshold must be >= {TAIL_FROM} (smaller excesses are not kept); got {threshold}")
    if not points:
        raise ValueError("no tail points")
    rows = {}
    for p in points:
        if int(p["block"]) != int(block):
            raise ValueError(f"a point has blocks of {p['block']} tables, not {block}")
        key = (p["n"], p["k"], p["high"])
        r = rows.setdefault(key, {"method": p["method"], "impurity": p["impurity"], "tables": 0, "reached": 0,
                                  "draws": 0, "draws_reached": 0, "largest": -np.inf, "seeds": set()})
        if (r["method"], r["impurity"]) != (p["method"], p["impurity"]):
            raise ValueError(f"cell {key} mixes methods or impurities")
        if p["seed"] in r["seeds"]:
            raise ValueError(f"cell {key} has seed {p['seed']} twice")
        r["seeds"].add(p["seed"])
        r["tables"] += int(p["n_tables"])
        r["reached"] += int(np.sum(np.asarray(p["tail"]) >= threshold))
        r["draws"] += len(p["block_maxima"])
        r["draws_reached"] += int(np.sum(np.asarray(p["block_maxima"]) >= threshold))
        r["largest"] = max(r["largest"], float(p["largest"]))
    out = pd.DataFrame.from_dict(rows, orient="index").drop(columns="seeds")
    out.index = pd.MultiIndex.from_tuples(out.index, names=["n", "k", "high"])
    out["rate"] = out["reached"] / out["tables"]
    out["rate_upper95"] = stats.chi2.ppf(0.95, 2 * (out["reached"] + 1)) / 2 / out["tables"]
    return out.sort_index()


# ----------------------------------------------------------------------------------------------
# decision-tree induction on real data (Table 4)



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
