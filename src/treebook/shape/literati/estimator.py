"""The scikit-learn estimator around the search."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from ...tree.cart import BaseTree
from ...validation import (
    RANDOM_STATE,
    check_classification_targets,
    int_interval,
    real_interval,
    validate_fit,
)
from .search import AND_RULES, DEFAULT_CART_LEAVES, HEURISTICS, LiteratiSearch
from .specs import cart_spec, spec_to_tree

__all__ = ["LiteratiClassifier"]

#: search settings whose compiled kernels this process has already loaded (see ``_load_compiled_code``)
_LOADED: set = set()


def _load_compiled_code(X, y_enc, n_classes, max_breakpoints, options) -> None:
    """Run the search once on a few rows of the data (at most 20 per class, depth at most 3, 10 expansions)
    so that numba has compiled its kernels or read them from its cache before a time limit starts to run:
    the first fit in a fresh process would otherwise spend part of its budget loading code. Once per
    process and setting; the throwaway search does not touch the estimator."""
    key = (max_breakpoints, options["candidates"], options["exact_depth1"], options["similarity"],
           options["heuristic"], X.dtype.str, y_enc.dtype.str)
    if key in _LOADED:
        return
    rows = np.concatenate([np.flatnonzero(y_enc == c)[:20] for c in range(n_classes)])
    small = {**options, "max_depth": min(int(options["max_depth"]), 3)}
    for k in sorted({1, int(max_breakpoints)}):
        LiteratiSearch(X[rows], y_enc[rows], n_classes, max_breakpoints=k, **small).run(
            time_limit=None, max_expansions=10)
    _LOADED.add(key)


class LiteratiClassifier(ClassifierMixin, BaseTree):
    """Anytime optimal shape generalized tree (Literati, AO* over the incremental AND/OR graph).

    Minimises ``Err(T, D) + sum_v [lam + alpha K(f_v)]`` (eq. (1)) over trees of depth <= ``max_depth``
    whose nodes are shape functions with at most ``max_breakpoints`` breakpoints drawn from the candidate
    sets; with ``max_breakpoints=1`` this is the DPDT / optimal-threshold-tree space (Proposition 3).

    Parameters
    ----------
    max_depth : int
    max_breakpoints : int
        ``K``, the maximum number of breakpoints of a node's shape function.
    lam, alpha : float
        Per-node and per-breakpoint penalties, in misclassified training samples (``0, 0`` = errors only).
    time_limit : float or None
        Seconds; the best tree found so far is returned when it expires (and on ``KeyboardInterrupt``).
        ``None``: no time limit (then ``max_expansions`` must be set). The clock starts after the compiled
        kernels are loaded: the first time-limited fit of a setting in a process first runs a 10-expansion
        search on a few rows, so that numba's compilation or cache loading is not charged to the budget.
    max_expansions : int or None
        Budget of expanded states (warm start and seeding included).  With ``time_limit=None`` the search is
        deterministic: two fits with the same parameters give the same tree on any machine.  The first
        incumbents (the greedy CART tree over every midpoint, the warm start's tree) are always inserted
        whole, so a budget smaller than the states on their paths is exceeded by those states.
    candidates : {"cart", "all"}
        Adaptive local-CART thresholds (``cart_leaves[level]`` = ``B_d``) or every midpoint; over every
        midpoint the greedy CART tree is the first incumbent (:func:`cart_spec`).
    cart_leaves : tuple of int
        Leaves of the local CART per level from the root (last entry repeated).
    heuristic : {"cart", "admissible", "impurity", "primal"}
        Secondary estimate ``V~`` for the OR choice (the paper's ablation); ``"cart"`` is Literati.
        ``"impurity"`` is the children's weighted Gini impurity, kept above a state's lower bound but not
        clamped to its upper bound (the impurity is never below the errors: clamped, it would rank the
        actions as ``"primal"`` does).
    and_rule : {"round_robin", "worst_primal", "worst_informative"}
        AND choice between the two children of a commit: alternate (Literati), the child of larger upper
        bound (``↑Vbar``, as Branches) or of larger ``V~`` (``↑V~``).
    exact_depth1 : bool
        Solve depth-1 data states exactly by the piecewise dynamic programme (same optimum, faster).
    similarity : bool
        With ``max_breakpoints=1`` and ``candidates="all"`` (and in the ``K = 1`` warm start of such a
        search): solve depth-2 data states exactly (:func:`~treebook.shape.depth2.best_depth2_all`) and bound
        the pending thresholds of a data state by those of its evaluated neighbours (similarity bounds), which
        order their materialisation by bisection.  Same optimum, far fewer states.
    cache_size : int
        Number of most recent solved states kept in the value cache (0: none).
    warm_start : float or False
        For ``max_breakpoints > 1``: share of the budgets (time and expansions) first spent on the ``K = 1``
        search, whose tree is inserted into the graph as the first incumbent (0 or ``False`` disables it).
    random_state : int, RandomState instance, Generator or None
        Seeds the local CART fits (tie breaking); a ``RandomState`` or ``Generator`` draws the seed, ``None``
        draws it from numpy's global generator.
    progress : bool
        Show a progress line (upper bound, lower bound, gap, states expanded).

    Attributes
    ----------
    tree_, objective_, lower_bound_, proved_optimal_, trace_ (array of rows ``time, upper, lower,
    expansions``), n_expanded_, fit_time_, interrupted_, train_errors_, classes_, n_features_in_,
    root_choices_ (the root splits the search's iterations went down, in the order first taken: rows
    ``feature, first threshold, iterations, states expanded when first taken``; the warm start's are not
    counted).
    """

    _parameter_constraints: dict = {
        "max_depth": [int_interval(0, None, closed="left")],
        "max_breakpoints": [int_interval(1, None, closed="left")],
        "lam": [real_interval(0, None, closed="left")],
        "alpha": [real_interval(0, None, closed="left")],
        "time_limit": [real_interval(0, None, closed="neither"), None],
        "max_expansions": [int_interval(0, None, closed="left"), None],
        "candidates": [StrOptions({"cart", "all"})],
        "cart_leaves": ["array-like"],
        "heuristic": [StrOptions(set(HEURISTICS))],
        "and_rule": [StrOptions(set(AND_RULES))],
        "exact_depth1": ["boolean"],
        "similarity": ["boolean"],
        "cache_size": [int_interval(0, None, closed="left")],
        "warm_start": [real_interval(0, 1, closed="left"), Options(bool, {False})],
        "random_state": RANDOM_STATE,
        "progress": ["boolean"],
    }

    def __init__(self, max_depth=3, max_breakpoints=3, lam=0.0, alpha=0.0, time_limit=60.0, max_expansions=None,
                 candidates="cart", cart_leaves=DEFAULT_CART_LEAVES, heuristic="cart", and_rule="round_robin",
                 exact_depth1=True, similarity=True, cache_size=10_000, warm_start=0.25, random_state=0,
                 progress=False):
        self.max_depth = max_depth
        self.max_breakpoints = max_breakpoints
        self.lam = lam
        self.alpha = alpha
        self.time_limit = time_limit
        self.max_expansions = max_expansions
        self.candidates = candidates
        self.cart_leaves = cart_leaves
        self.heuristic = heuristic
        self.and_rule = and_rule
        self.exact_depth1 = exact_depth1
        self.similarity = similarity
        self.cache_size = cache_size
        self.warm_start = warm_start
        self.random_state = random_state
        self.progress = progress

    def _check_params(self):
        self._validate_params()
        for name in ("lam", "alpha", "time_limit"):
            v = getattr(self, name)
            if v is not None and not np.isfinite(v):
                raise ValueError(f"{name} must be finite; got {v!r}")
        if self.time_limit is None and self.max_expansions is None:
            raise ValueError("set time_limit or max_expansions (or both): without a budget the search may not end")
        leaves = np.atleast_1d(np.asarray(self.cart_leaves))
        if (leaves.ndim != 1 or leaves.size == 0 or not np.issubdtype(leaves.dtype, np.integer)
                or np.any(leaves < 2)):
            raise ValueError(f"cart_leaves must be a non-empty sequence of ints >= 2; got {self.cart_leaves!r}")
        return tuple(int(b) for b in leaves)

    def _seed(self) -> int:
        rs = self.random_state
        if isinstance(rs, (Integral, np.integer)) and not isinstance(rs, bool):
            return int(rs)
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(np.iinfo(np.int32).max))
        return int(check_random_state(rs).randint(np.iinfo(np.int32).max))

    def fit(self, X, y):
        """Search (Algorithm 1) until proof, a budget (time, expansions) or interrupt; keep the best tree."""
        cart_leaves = self._check_params()
        X, y = validate_fit(self, X, y)
        self.classes_, y_enc = check_classification_targets(y)
        self.n_features_in_ = X.shape[1]
        self.n_classes_ = self.classes_.size
        options = dict(max_depth=self.max_depth, lam=self.lam, alpha=self.alpha, candidates=self.candidates,
                       cart_leaves=cart_leaves, heuristic=self.heuristic, and_rule=self.and_rule,
                       exact_depth1=self.exact_depth1, similarity=self.similarity, cache_size=self.cache_size,
                       random_state=self._seed())
        time_limit, budget = self.time_limit, self.max_expansions
        if time_limit is not None:
            _load_compiled_code(X, y_enc, self.n_classes_, self.max_breakpoints, options)
        search = LiteratiSearch(X, y_enc, self.n_classes_, max_breakpoints=self.max_breakpoints, **options)
        spent, spent_expansions, warm = 0.0, 0, None
        # over every midpoint the greedy CART tree is a K = 1 tree of the search space: the first incumbent
        seed_tree = cart_spec(X, y_enc, self.max_depth) if self.candidates == "all" and self.max_depth else None
        if self.warm_start and self.max_breakpoints > 1:
            # warm start: a K = 1 search on a share of the budgets; its tree is feasible here (Proposition 3)
            warm = LiteratiSearch(X, y_enc, self.n_classes_, max_breakpoints=1,
                                  **{**options, "lam": self.lam + self.alpha, "alpha": 0.0})
            warm.run(time_limit=None if time_limit is None else float(time_limit) * float(self.warm_start),
                     max_expansions=None if budget is None else int(budget * self.warm_start), seed_tree=seed_tree)
            seed_tree, spent, spent_expansions = warm.tree_spec(), warm.elapsed, warm.n_expanded
        remaining = None if budget is None else max(0, int(budget) - spent_expansions)
        if warm is not None and warm.interrupted:
            search.run(time_limit=spent, max_expansions=0, seed_tree=seed_tree, time_offset=spent,
                       expansion_offset=spent_expansions)
            search.interrupted = True
        else:
            search.run(time_limit=time_limit, progress=self.progress, max_expansions=remaining,
                       seed_tree=seed_tree, time_offset=spent, expansion_offset=spent_expansions)
        if warm is not None:
            lb0 = min(search.root.leaf_error, search.split_cost)  # the root's admissible V, known from the start
            head = [(t, u, min(lb0, u), e) for t, u, _, e in warm.trace]
            search.trace = [r for r in head if r[1] >= search.trace[0][1]] + search.trace
        spec = search.tree_spec()
        self.tree_ = spec_to_tree(spec, y_enc, self.n_classes_)
        self.objective_ = float(search.root.upper)
        self.lower_bound_ = float(search.root.lower)
        self.proved_optimal_ = bool(search.root.solved)
        self.trace_ = np.asarray(search.trace, dtype=float)
        self.n_expanded_ = int(spent_expansions + search.n_expanded)
        self.fit_time_ = float(search.elapsed)
        self.interrupted_ = bool(search.interrupted)
        self.root_choices_ = [(int(j), float(t), int(n), int(search.root_first_taken[(j, t)]))
                              for (j, t), n in search.root_choices.items()]
        self.train_errors_ = int(np.sum(self.predict(X) != y))
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class fractions of the training samples in the reached leaf."""
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "tree_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    @property
    def n_breakpoints_(self) -> int:
        """Total breakpoints of the fitted tree (the ``alpha`` part of the penalty)."""
        check_is_fitted(self, "tree_")
        return int(sum(s.n_breakpoints for s in self.tree_.splits if s is not None))
