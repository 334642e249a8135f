"""Unsupervised oblique forests and the OF-AE encoder/decoder (Alecsa et al., OF-AE)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from treebook.oblique.decode import SOLVERS, decode_forest, report_infeasible
from treebook.oblique.grow import DIRECTIONS, HOUSEHOLDER, RANDOM_THRESHOLDS, grow_oblique_tree
from treebook.oblique.splits import SPLIT_RULES
from treebook.tree.cart import GROWTH_CONSTRAINTS, BaseTree
from treebook.tree.routing import apply_hyperplanes, pack_hyperplane_forest
from treebook.validation import (
    RANDOM_STATE,
    check_array,
    check_magnitude,
    check_random_state,
    check_y,
    int_interval,
    real_interval,
    validate_X,
)

__all__ = ["HHCARTRegressor", "ObliqueForestEmbedding", "RandCARTRegressor", "check_box"]

#: largest ``|x|`` an oblique tree accepts: HHCART squares the node data (Gram matrix of its direction),
#: RandCART and the encoder sum products of the features; axis-parallel trees only compare values and draw
#: thresholds between a node's extremes, whose difference must stay finite
_X_LIMIT = {"hhcart": 1e150, "randcart": 1e150, "axis": 1e300, "random": 1e300}
#: the squared-error split search squares sums of up to ``n`` targets: ``|y|`` must stay below this / n
_Y_SUM_LIMIT = 1e150


def _check_X(estimator, X, kind, *, reset, **kwargs):
    """The validation of every ``X`` the oblique estimators receive: a finite float array
    (:func:`~treebook.validation.validate_X`: ``feature_names_in_`` and ``n_features_in_`` recorded at fit,
    ``reset=True``, and checked afterwards) whose magnitude the trees of ``kind`` support."""
    X = validate_X(estimator, X, reset=reset, **kwargs)
    check_magnitude(X, _X_LIMIT[kind], name="X",
                    reason="sums of squares and projections" if kind in ("hhcart", "randcart")
                    else "differences of extremes")
    return X


def check_box(box, n_features):
    """``box`` = None or ``(lo, hi)`` (scalars or length-``n_features`` arrays) -> (lo, hi) arrays."""
    if box is None:
        return np.full(n_features, -np.inf), np.full(n_features, np.inf)
    if isinstance(box, str):
        raise TypeError(f"box must be None or a pair (lo, hi), got {box!r}")
    try:
        lo, hi = box
    except (TypeError, ValueError):
        raise ValueError(f"box must be None or a pair (lo, hi), got {box!r}") from None
    ends = []
    for end, v in (("lo", lo), ("hi", hi)):
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"box {end} must be a number or an array of numbers, got {v!r}") from None
        if a.ndim > 1 or (a.ndim == 1 and a.shape[0] != n_features):
            raise ValueError(f"box {end} must be a scalar or have {n_features} entries (one per feature), "
                             f"got shape {a.shape}")
        ends.append(np.broadcast_to(a, (n_features,)).copy())
    lo, hi = ends
    if np.isnan(lo).any() or np.isnan(hi).any():
        raise ValueError("box contains NaN")
    if (lo > hi).any():
        raise ValueError(f"box has lo > hi at features {np.flatnonzero(lo > hi)[:10].tolist()}")
    return lo, hi


class ObliqueForestEmbedding(TransformerMixin, BaseEstimator):
    """OF-AE: an unsupervised bagged forest of oblique trees used as an autoencoder.

    Each tree is an HHCART or RandCART regression tree fitted, on a bootstrap sample (``max_samples``) of a
    random feature subset (``max_features``), to a uniform random target — the paper's unsupervised
    BaggingRegressor. ``transform`` encodes a sample by its leaf id in every tree; ``inverse_transform`` is
    the OF-AE decoder: the path of every leaf is a set of half-spaces ``s_j <w_j, x> >= s_j b_j`` (paper, the
    system ``A x >= b``), and the decoded point solves the l1 problem ``min ||x||_1  s.t.  A x >= b,
    lo <= x <= hi`` (paper, the decoding problem) as a linear program.

    The defaults are the OF-AE authors' algorithm as their public code runs it (``misc/models.py`` and
    ``modules/`` of their repository): ``split_rule="mean"`` (their ``MeanSegmentor``), ``target="shared"``
    (one target ``y = uniform(size=n)`` drawn in their ``BaggingRegressorEmbedding.fit`` and indexed by each
    tree's bootstrap rows), ``rotation="per_node"`` (their RandCART) and ``householder="farthest"`` (their
    HHCART); feature and sample counts are rounded down as scikit-learn's bagging does. The other values
    are our variants (``"best"``, ``"per_tree"``, ``"per_tree"``, ``"largest"``), which the chapter reports as
    "ours (improved)".

    Parameters
    ----------
    tree : {"hhcart", "randcart", "axis", "random"}
        Oblique trees (HHCART, RandCART) or axis-parallel ones (CART on the random target, or
        RandomTreesEmbedding-style random splits).
    direction : {"pca", "svd", "ica", "fa", "grp"}
        HHCART's 1-D direction estimator (PCA, TruncatedSVD, FastICA, FactorAnalysis, GaussianRandomProjection).
    n_estimators, max_depth, min_samples_leaf : tree/forest sizes.
    max_samples : float in (0, 1] — fraction of samples drawn per tree (with replacement if ``bootstrap``),
        ``max(2, floor(max_samples * n))`` of them.
    max_features : float in (0, 1] — fraction of features drawn (without replacement) per tree,
        ``max(1, floor(max_features * p))`` of them.
    split_rule : {"mean", "best", "uniform"} — the authors' split search (each projected column's node mean is
        its only threshold, weighted standard deviation of the targets as impurity), CART's (every midpoint,
        squared error) or ours for the chapter's threshold experiment (each column's only threshold drawn
        uniformly in its node range, scored as ``"mean"``); see :mod:`treebook.oblique.splits`. Not used by
        ``tree="random"``.
    random_threshold : {"uniform", "mean"} — the threshold of ``tree="random"``'s random feature: uniform in
        its node range (RandomTreesEmbedding's, eForest's trees) or its node mean (a variant of ours).
    target : {"shared", "per_tree"} — one uniform target for the whole ensemble (the authors') or a fresh
        one for every tree.
    rotation : {"per_node", "per_tree"} — RandCART's random rotation: a new one at every node (the
        authors') or one per tree.
    householder : {"farthest", "largest"} — HHCART's basis vector ``e_i``: ``argmax_i ||e_i - d||`` with the
        estimator's unnormalised component (the authors'), or ``argmax_i |d_i|`` of the normalised one; see
        :mod:`treebook.oblique.grow`.
    box : None or (lo, hi) — bounds added to the decoding LP (e.g. (0, 255) for 8-bit images).
    margin : float — the strict side of a split is imposed as ``w.x <= b - margin`` and the other side as
        ``w.x >= b + margin`` (scaled by ``1 + |b|``) so that a decoded point re-encodes to the same leaves
        despite the LP's feasibility tolerance; a decode that is infeasible with the margin is retried
        without it.
    solver : {"highs", "highs-lowrank", "pulp", "cvxpy"} — see :mod:`treebook.oblique.decode`
        (``"highs-lowrank"`` pays off for HHCART with ``max_features=1``).
    on_infeasible : {"warn", "raise"} — what ``inverse_transform`` does with codes that no point satisfies
        (a combination of leaves whose cells do not meet, within the box): issue an
        :class:`~treebook.oblique.decode.InfeasibleCodeWarning` naming the rows and return the box point
        nearest to 0 for them, or raise ``ValueError``. Either way ``infeasible_rows_`` lists them.
    n_jobs : int — processes used by ``inverse_transform``.
    random_state : seed.
    progress : bool — tqdm bars for fitting and decoding.

    Attributes
    ----------
    estimators_ : list of :class:`treebook.tree.Tree` — the trees, whose internal nodes hold
        :class:`~treebook.oblique.splits.ObliqueSplit` hyperplanes over all ``n_features_in_`` features
        (zero weights outside the tree's feature subset); node ids are those of the codes:
        ``estimators_[t].apply(X) == transform(X)[:, t]``.
    feature_subsets_ : list of arrays — the features each tree was grown on.
    roots_, n_nodes_, left_, right_, node_row_, is_leaf_, weights_, bias_, directions_, dir_coef_,
    path_rows_, path_signs_ : the trees packed into flat arrays for the compiled encoder and the decoders
        (:meth:`_pack`).
    """

    def __init__(self, tree="hhcart", direction="pca", n_estimators=100, max_depth=3, max_samples=1.0,
                 max_features=1.0, bootstrap=True, min_samples_leaf=1, split_rule="mean", target="shared",
                 rotation="per_node", householder="farthest", box=None, margin=1e-6, solver="highs",
                 on_infeasible="warn", n_jobs=1, random_state=None, progress=False, random_threshold="uniform"):
        self.tree = tree
        self.direction = direction
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.min_samples_leaf = min_samples_leaf
        self.split_rule = split_rule
        self.target = target
        self.rotation = rotation
        self.householder = householder
        self.box = box
        self.margin = margin
        self.solver = solver
        self.on_infeasible = on_infeasible
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.random_threshold = random_threshold

    _parameter_constraints: dict = {
        "tree": [StrOptions({"hhcart", "randcart", "axis", "random"})],
        "direction": [StrOptions(set(DIRECTIONS))],
        "n_estimators": [int_interval(1, None, closed="left")],
        "max_depth": [int_interval(1, None, closed="left"), None],
        "max_samples": [real_interval(0, 1, closed="right")],
        "max_features": [real_interval(0, 1, closed="right")],
        "bootstrap": ["boolean"],
        "min_samples_leaf": [int_interval(1, None, closed="left")],
        "split_rule": [StrOptions(set(SPLIT_RULES))],
        "target": [StrOptions({"shared", "per_tree"})],
        "rotation": [StrOptions({"per_node", "per_tree"})],
        "householder": [StrOptions(set(HOUSEHOLDER))],
        "box": ["array-like", None],
        "margin": [real_interval(0, None, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
        "on_infeasible": [StrOptions({"warn", "raise"})],
        "n_jobs": [int_interval(1, None, closed="left"), None],
        "random_state": RANDOM_STATE,
        "progress": ["boolean"],
        "random_threshold": [StrOptions(set(RANDOM_THRESHOLDS))],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the codes are integer leaf ids whatever the dtype of X
        tags.transformer_tags.preserves_dtype = []
        return tags

    # ------------------------------------------------------------------ fitting
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Grow ``n_estimators`` trees on uniform random targets (``y`` is ignored)."""
        Xa = _check_X(self, X, self.tree, reset=True, min_samples=2)
        self._box = check_box(self.box, Xa.shape[1])
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):  # small per-node linear algebra: BLAS threads only contend
            self._fit(Xa)
        return self

    def _fit(self, X):
        n, p = X.shape
        rng = check_random_state(self.random_state)
        # scikit-learn's bagging rounds the counts down (the authors' BaggingRegressor)
        n_sub = max(2, int(self.max_samples * n))
        q = max(1, int(self.max_features * p))
        shared = rng.uniform(size=n) if self.target == "shared" else None
        trees, subsets = [], []
        it = range(self.n_estimators)
        if self.progress:
            from tqdm.auto import tqdm

            it = tqdm(it, desc="fit")
        for _ in it:
            feats = np.sort(rng.choice(p, size=q, replace=False)) if q < p else np.arange(p)
            if self.bootstrap:
                rows = rng.integers(0, n, size=n_sub)
            else:
                rows = rng.choice(n, size=min(n_sub, n), replace=False)
            target = shared[rows] if shared is not None else rng.uniform(size=len(rows))
            direction = self.direction if self.tree == "hhcart" else None
            trees.append(grow_oblique_tree(X[rows], target, features=feats, kind=self.tree, direction=direction,
                                           max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf,
                                           split_rule=self.split_rule,
                                           rotation=getattr(self, "rotation", "per_node"),
                                           householder=getattr(self, "householder", "farthest"), rng=rng,
                                           random_threshold=getattr(self, "random_threshold", "uniform")))
            subsets.append(feats)
        self.estimators_ = trees
        self.feature_subsets_ = subsets
        self._pack()

    def _pack(self):
        """The trees of ``estimators_`` as the flat arrays of the compiled encoder and of the decoders
        (:func:`treebook.tree.routing.pack_hyperplane_forest`: ``roots_``, ``n_nodes_``, ``left_``, ``right_``,
        ``node_row_``, ``weights_``, ``bias_``, ``path_rows_``, ``path_signs_``), with HHCART's direction and
        its coefficient per internal node (``directions_``, ``dir_coef_``: zero for other splits)."""
        packed = pack_hyperplane_forest(self.estimators_, self.n_features_in_)
        self.roots_, self.n_nodes_ = packed.roots, packed.n_nodes
        self.left_, self.right_, self.node_row_ = packed.left, packed.right, packed.node_row
        self.weights_, self.bias_ = packed.weights, packed.bias
        self.path_rows_, self.path_signs_ = packed.path_rows, packed.path_signs
        self.is_leaf_ = packed.left < 0
        Dir = np.zeros_like(packed.weights)
        coef = np.zeros(packed.weights.shape[0])
        for t, r in zip(self.estimators_, packed.roots):
            for nd in np.flatnonzero(~t.is_leaf):
                split = t.splits[nd]
                if getattr(split, "direction", None) is not None:
                    Dir[packed.node_row[nd + r]] = split.direction
                    coef[packed.node_row[nd + r]] = split.dir_coef
        self.directions_, self.dir_coef_ = Dir, coef

    # ------------------------------------------------------------------ encoding
    def transform(self, X):
        """Leaf id (node index within each tree) of every sample in every tree: (n_samples, n_estimators)."""
        check_is_fitted(self, "estimators_")
        X = _check_X(self, X, self.tree, reset=False)
        return apply_hyperplanes(X, self.weights_, self.bias_, self.left_, self.right_, self.node_row_, self.roots_)

    def fit_transform(self, X, y=None):
        return self.fit(X).transform(X)

    def check_codes(self, codes):
        """Validate a code matrix: integer leaf ids of shape (n, n_estimators) -> global node ids."""
        check_is_fitted(self, "estimators_")
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.roots_) or codes.shape[0] == 0:
            raise ValueError(f"codes must have shape (n_samples, {len(self.roots_)}) with n_samples >= 1 (one "
                             f"leaf id per tree of this model), got {codes.shape}: codes of another model?")
        if codes.dtype.kind not in "iuf":
            raise TypeError(f"codes must be integer leaf ids, got dtype {codes.dtype}")
        if codes.dtype.kind == "f" and not (np.isfinite(codes).all() and np.all(codes == np.round(codes))):
            raise ValueError("codes must be integer leaf ids")
        out = (codes < 0) | (codes >= self.n_nodes_[None, :])
        if out.any():
            bad = np.argwhere(out)[:5]
            raise ValueError(f"codes contain node ids outside their tree at (sample, tree) = {bad.tolist()}: "
                             "codes of another model?")
        g = codes.astype(np.int64) + self.roots_[None, :]
        if not self.is_leaf_[g].all():
            bad = np.argwhere(~self.is_leaf_[g])[:5]
            raise ValueError(f"codes contain ids that are not leaves of this model at (sample, tree) = "
                             f"{bad.tolist()}: codes of another model?")
        return g

    def path_system(self, codes_row):
        """The decoding system of one code row: ``(A, b)`` with every path constraint as ``A x >= b``
        (no margin). Right branch: ``w.x >= t``; left branch: ``-w.x >= -t``."""
        g = self.check_codes(np.atleast_2d(codes_row))[0]
        rows = self.path_rows_[g].ravel()
        signs = self.path_signs_[g].ravel().astype(float)
        keep = rows >= 0
        rows, signs = rows[keep], signs[keep]
        return signs[:, None] * self.weights_[rows], signs * self.bias_[rows]

    def inverse_transform(self, codes, return_info=False):
        """OF-AE decoding (l1 LP per sample); see :func:`treebook.oblique.decode.decode_forest`.

        Rows whose code no point satisfies (within the box) are listed in ``infeasible_rows_`` and
        ``info["infeasible"]``; they get the box point nearest to 0 and an
        :class:`~treebook.oblique.decode.InfeasibleCodeWarning`, or a ``ValueError`` with
        ``on_infeasible="raise"``. Codes that are not leaf ids of this model raise ``ValueError``."""

        X, info = decode_forest(self, codes, solver=self.solver, n_jobs=self.n_jobs, progress=self.progress)
        self.decode_info_ = info
        self.infeasible_rows_ = np.flatnonzero(info["infeasible"])
        report_infeasible(info, self.on_infeasible)
        return (X, info) if return_info else X


class _ObliqueTreeRegressor(RegressorMixin, BaseTree):
    """A single oblique regression tree on the tree core: ``tree_`` is a :class:`~treebook.tree.Tree` of
    :class:`~treebook.oblique.splits.ObliqueSplit` nodes, and :class:`~treebook.tree.BaseTree` gives
    ``apply``, ``decision_path``, ``get_depth``, ``get_n_leaves``, ``export_text`` (an oblique split shows its
    largest weights) and ``plot``. ``X`` is validated as the forests validate it (:func:`_check_X`)."""

    _kind = "hhcart"

    _parameter_constraints: dict = {
        "max_depth": GROWTH_CONSTRAINTS["max_depth"],
        "min_samples_leaf": GROWTH_CONSTRAINTS["min_samples_leaf"],
        "split_rule": [StrOptions(set(SPLIT_RULES))],
        # scikit-learn's seeds (None, an int, a RandomState), as the forests take them
        "random_state": RANDOM_STATE,
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the tree on ``X`` and the targets ``y`` (n,)."""
        Xa = _check_X(self, X, self._kind, reset=True)
        y = check_array(check_y(y, Xa.shape[0]), name="y", ensure_2d=False)
        check_magnitude(y, _Y_SUM_LIMIT / len(y), name="y", reason="squares of sums of the targets")
        self.tree_ = grow_oblique_tree(
            Xa, y, kind=self._kind, direction=getattr(self, "direction", "pca"), max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf, split_rule=self.split_rule,
            rotation=getattr(self, "rotation", "per_node"), householder=getattr(self, "householder", "farthest"),
            rng=check_random_state(self.random_state))
        return self

    def _validate_X_predict(self, X):
        check_is_fitted(self, "tree_")
        return _check_X(self, X, self._kind, reset=False)

    def predict(self, X):
        """The mean training target of the leaf each row of ``X`` reaches."""
        X = self._validate_X_predict(X)
        return self.tree_.value[:, 0][self.tree_.apply(X)]


class HHCARTRegressor(_ObliqueTreeRegressor):
    """HHCART regression tree: axis splits compete with axis splits of the Householder-reflected node data,
    ``H = I - 2uu^T`` with ``u`` built from the node's 1-D ``direction`` (see :mod:`treebook.oblique.grow`).

    The defaults are the OF-AE authors' HHCART (``modules/HHCART.py``): the mean split search
    (``split_rule="mean"``) and the basis vector farthest from the direction (``householder="farthest"``);
    ``split_rule="best"`` searches every midpoint by squared error (CART) and ``householder="largest"`` picks
    the direction's largest entry.
    """

    _kind = "hhcart"
    _parameter_constraints: dict = {
        **_ObliqueTreeRegressor._parameter_constraints,
        "direction": [StrOptions(set(DIRECTIONS))],
        "householder": [StrOptions(set(HOUSEHOLDER))],
    }

    def __init__(self, direction="pca", max_depth=None, min_samples_leaf=1, split_rule="mean",
                 householder="farthest", random_state=None):
        self.direction = direction
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.split_rule = split_rule
        self.householder = householder
        self.random_state = random_state


class RandCARTRegressor(_ObliqueTreeRegressor):
    """RandCART regression tree: axis splits of the node data in a random orthogonal basis ``Q`` (QR of a
    Gaussian matrix).

    The defaults are the OF-AE authors' RandCART (``modules/RandCART.py``): a new rotation at every node
    (``rotation="per_node"``) and the mean split search (``split_rule="mean"``); ``rotation="per_tree"``
    rotates once for the whole tree and ``split_rule="best"`` searches every midpoint by squared error.
    """

    _kind = "randcart"
    _parameter_constraints: dict = {
        **_ObliqueTreeRegressor._parameter_constraints,
        "rotation": [StrOptions({"per_node", "per_tree"})],
    }

    def __init__(self, max_depth=None, min_samples_leaf=1, split_rule="mean", rotation="per_node",
                 random_state=None):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.split_rule = split_rule
        self.rotation = rotation
        self.random_state = random_state
