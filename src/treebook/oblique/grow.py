"""Growing one oblique regression tree: HHCART (Householder reflections) and RandCART (random rotations).

A grown tree is a core :class:`~treebook.tree.Tree` grown by :func:`treebook.tree.grow.grow_tree`; every
internal node holds an :class:`~treebook.oblique.splits.ObliqueSplit`, a hyperplane ``w . x >= b`` (True =
right child) in the coordinates of the samples the tree was given (a tree grown on a subset of the
features has zero weights on the others).

HHCART (Wickramarachchi et al. 2016, regression variant): at a node with samples ``X_n`` a 1-D direction
``d`` is estimated from ``X_n`` (``direction=``), and a Householder matrix ``H = I - 2 u u^T`` with
``u = (e_i - d) / ||e_i - d||`` reflects the data; the best axis-parallel split of ``X_n`` competes with the
best axis-parallel split of the reflected data ``X_n H`` (the reflected one wins only if strictly better,
but for ``split_rule="best"`` on a tie the cut with fewer samples on the left wins, whichever its column).
A split on column ``j`` of ``X_n H`` is the hyperplane with normal ``H e_j = e_j - 2 u_j u``: a unit vector,
a multiple of ``e_i`` and a multiple of ``d``.

The basis vector ``e_i`` (``householder=``):

* ``"farthest"`` — the OF-AE authors' choice (``modules/HHCART.py`` of their code): ``i = argmax_i
  ||e_i - d||``, with ``d`` the estimator's component as scikit-learn returns it (unit length for PCA and
  TruncatedSVD; *not* normalised for FastICA, FactorAnalysis and the Gaussian random projection, whose
  components have the data's or the projection's scale), and no reflection when every ``||e_i - d||`` is
  at most ``tau = 1e-4``. For a unit ``d`` this is ``argmin_i d_i``, so ``H e_i = d``; for a non-unit ``d``
  the reflection is still orthogonal but maps ``e_i`` onto ``d`` only up to scale and angle. The sign of a
  PCA/SVD component follows scikit-learn 1.1 (the authors' version): the sample with the largest
  ``|score|`` has a positive score.
* ``"largest"`` — our earlier choice: ``d`` normalised, ``i = argmax_i |d_i|`` with the sign of ``d`` fixed
  so that ``d_i > 0``; then ``H e_i = d`` as well.

RandCART (Blaser & Fryzlewicz 2016): a random orthogonal matrix ``Q`` (QR of a Gaussian matrix, signs
fixed by ``diag(R)`` so ``Q`` is Haar distributed); CART on ``X Q``; a split on column ``j`` is the
hyperplane with normal ``Q e_j``. ``rotation="per_node"`` draws a new ``Q`` at every node, as the OF-AE
authors' ``modules/RandCART.py`` does; ``"per_tree"`` draws one per tree (Blaser & Fryzlewicz's
random-rotation ensembles). The authors' RandCART also turns a node into a leaf when a child of its split
would hold at most ``min_samples = 2`` samples; that check is not reproduced here (``min_samples_leaf``
bounds the children instead, before the split is chosen).

Every kind but ``"random"`` searches its candidate columns with the split rule of
:mod:`treebook.oblique.splits` (``split_rule="mean"``, the authors'; ``"best"``, CART's; or ``"uniform"``,
a uniform threshold per column, our variant). The ``"random"`` kind (RandomTreesEmbedding's, eForest's trees)
does not search: it splits a random non-constant feature at a threshold drawn uniformly in the feature's node
range (``random_threshold="uniform"``) or, as a variant of ours, at the feature's node mean
(``random_threshold="mean"``, the authors' threshold rule without their search).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from treebook.oblique.splits import SPLIT_RULES, ObliqueSplit, hyperplane_candidate, projected_split
from treebook.tree.grow import grow_tree

__all__ = ["DIRECTIONS", "HOUSEHOLDER", "RANDOM_THRESHOLDS", "grow_oblique_tree", "node_direction", "oblique_find_split",
           "random_rotation"]

DIRECTIONS = ("pca", "svd", "ica", "fa", "grp")


def random_rotation(q, rng):
    """Haar-random orthogonal ``q x q`` matrix: QR of a standard Gaussian matrix with sign fix."""
    M = rng.standard_normal((q, q))
    Q, R = np.linalg.qr(M)
    s = np.sign(np.diag(R))
    s[s == 0] = 1.0
    return Q * s


def _top_right_singular(A):
    """Leading right singular vector of ``A`` (via the smaller Gram matrix)."""
    from scipy.linalg import eigh

    n, q = A.shape
    if n < q:
        G = A @ A.T
        _, vec = eigh(G, subset_by_index=[n - 1, n - 1])
        v = A.T @ vec[:, 0]
    else:
        _, vec = eigh(A.T @ A, subset_by_index=[q - 1, q - 1])
        v = vec[:, 0]
    return v


def _svd_sign(v, A):
    """``v`` with the sign scikit-learn 1.1's ``svd_flip`` gives a component: the row of ``A`` (the data
    the component was computed from, centred for PCA) with the largest ``|A v|`` has a positive score."""
    scores = A @ v
    k = int(np.argmax(np.abs(scores)))
    return -v if scores[k] < 0 else v


def node_direction(Xn, direction, rng, normalise=True):
    """1-D direction of the node's data (``n_components = 1``), or None if degenerate.

    ``pca``: first principal axis; ``svd``: TruncatedSVD (no centring); ``ica``: FastICA unmixing row;
    ``fa``: FactorAnalysis loading; ``grp``: Gaussian random projection row (i.i.d. N(0, 1) entries, as
    scikit-learn's with one component). With ``normalise=False`` the vector keeps the scale of
    scikit-learn's ``components_[0]`` (unit for PCA and SVD), as the OF-AE authors use it; the signs of PCA
    and SVD components follow scikit-learn 1.1 (see :func:`_svd_sign`).
    """
    if direction == "pca":
        Xc = Xn - Xn.mean(axis=0)
        v = _svd_sign(_top_right_singular(Xc), Xc)
    elif direction == "svd":
        v = _svd_sign(_top_right_singular(Xn), Xn)
    elif direction == "grp":
        v = rng.standard_normal(Xn.shape[1])
    elif direction in ("ica", "fa"):
        import warnings

        from sklearn.decomposition import FactorAnalysis, FastICA

        seed = int(rng.integers(2**31 - 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if direction == "ica":
                m = FastICA(n_components=1, random_state=seed, max_iter=200, whiten="arbitrary-variance")
            else:
                m = FactorAnalysis(n_components=1, random_state=seed)
            try:
                m.fit(Xn)
            except (ValueError, np.linalg.LinAlgError):
                return None
        v = np.asarray(m.components_[0], dtype=float)
    else:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    nv = np.linalg.norm(v)
    if not np.isfinite(nv) or nv < 1e-12:
        return None
    return v / nv if normalise else v


#: the authors' ``tau``: no reflection when every ``||e_i - d||`` is at most this
HOUSEHOLDER_TAU = 1e-4
HOUSEHOLDER = ("farthest", "largest")
#: the thresholds of the ``"random"`` kind: uniform in the feature's node range, or its node mean
RANDOM_THRESHOLDS = ("uniform", "mean")


def _householder_u(d, rule="largest"):
    """``(u, d, i)`` with ``H = I - 2uu^T`` and basis index ``i`` (see the module docstring), or
    ``(None, d, -1)`` when no reflection is made. ``"largest"`` flips ``d`` so that ``d_i > 0``."""
    if rule == "farthest":
        dist = np.sqrt(np.maximum(2.0 - 2.0 * d + d @ d - 1.0, 0.0))  # ||e_i - d||, every i
        if not (dist > HOUSEHOLDER_TAU).any():
            return None, d, -1
        i = int(np.argmax(dist))
    elif rule == "largest":
        i = int(np.argmax(np.abs(d)))
        if d[i] < 0:
            d = -d
    else:
        raise ValueError(f"householder must be one of {HOUSEHOLDER}, got {rule!r}")
    v = -d.copy()
    v[i] += 1.0
    nv = np.linalg.norm(v)
    if nv < 1e-12:
        return None, d, -1
    return v / nv, d, i



def _axis_split(q, j, thr):
    """The split ``x_j >= thr`` of samples with ``q`` features."""
    w = np.zeros(q)
    w[j] = 1.0
    return ObliqueSplit(w, thr)


def _reflected_split(u, d, i_basis, q, j, thr):
    """The split on column ``j`` of ``[X, X H]`` (HHCART's candidates): ``x_j >= thr`` for ``j < q``, else
    the reflected column ``jj = j - q``, the hyperplane with normal ``H e_jj``, with the direction ``d`` and
    its coefficient in that normal."""
    if j < q:
        return _axis_split(q, j, thr)
    jj = j - q
    w = -2.0 * u[jj] * u
    w[jj] += 1.0
    # H e_jj = e_jj - 2 u_jj (e_i - d) / ||e_i - d||: the coefficient of d is 2 u_jj / ||e_i - d||
    e_minus_d = -d.copy()
    e_minus_d[i_basis] += 1.0
    beta = 2.0 * u[jj] / max(float(np.linalg.norm(e_minus_d)), 1e-300)
    return ObliqueSplit(w, thr, d, beta)


def _rotated_split(rot, j, thr):
    """The split on column ``j`` of ``X Q``: the hyperplane with normal ``Q e_j``."""
    return ObliqueSplit(rot[:, j].copy(), thr)


def oblique_find_split(kind="hhcart", direction="pca", split_rule="mean", rotation="per_node",
                       householder="farthest", rng=None, n_features=None, random_threshold="uniform"):
    """The split search of one oblique tree as a ``find_split`` for :func:`treebook.tree.grow.grow_tree`:
    ``find_split(X_node, y_node, features, min_samples_leaf)`` returns a
    :class:`~treebook.tree.grow.Candidate` whose split is an :class:`~treebook.oblique.splits.ObliqueSplit`
    and whose cost is the children's total squared error (the core's units), or None. ``kind``,
    ``direction``, ``split_rule``, ``rotation`` and ``householder`` are those of :func:`grow_oblique_tree`;
    ``rotation`` may also be a ``q x q`` orthogonal matrix (one rotation for the whole tree), and
    ``"per_tree"`` needs ``n_features``. ``random_threshold`` is the threshold of the ``"random"`` kind."""
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    if kind not in ("hhcart", "randcart", "axis", "random"):
        raise ValueError(f"kind must be 'hhcart', 'randcart', 'axis' or 'random', got {kind!r}")
    if split_rule not in SPLIT_RULES:
        raise ValueError(f"split_rule must be one of {SPLIT_RULES}, got {split_rule!r}")
    if random_threshold not in RANDOM_THRESHOLDS:
        raise ValueError(f"random_threshold must be one of {RANDOM_THRESHOLDS}, got {random_threshold!r}")
    per_node = isinstance(rotation, str) and rotation == "per_node"
    if kind == "randcart" and isinstance(rotation, str):
        if rotation not in ("per_node", "per_tree"):
            raise ValueError(f"rotation must be 'per_node', 'per_tree' or a matrix, got {rotation!r}")
        rotation = None if per_node else random_rotation(n_features, rng)

    def find_split(Xn, yn, features, min_samples_leaf):
        q = Xn.shape[1]
        if kind == "random":  # RandomTreesEmbedding-style: random feature, uniform threshold in its range
            mn, mx = Xn.min(axis=0), Xn.max(axis=0)
            cand = np.flatnonzero(mx > mn)
            if len(cand) == 0:
                return None
            j = int(rng.choice(cand))
            if random_threshold == "mean":
                thr = float(Xn[:, j].mean())
            else:
                thr = float(rng.uniform(mn[j], mx[j]))
            if not thr > mn[j]:
                thr = float(mx[j])
            return hyperplane_candidate(Xn, yn, _axis_split(q, j, thr))
        if kind == "randcart":
            rot = random_rotation(q, rng) if per_node else rotation
            return projected_split(Xn, yn, Xn @ rot, partial(_rotated_split, rot), min_samples_leaf, split_rule,
                                   rng)
        if kind == "hhcart":
            d = node_direction(Xn, direction, rng, normalise=householder != "farthest")
            if d is not None:
                u, d, i_basis = _householder_u(d, householder)
                if u is not None:
                    Z = np.hstack([Xn, Xn - 2.0 * np.outer(Xn @ u, u)])
                    return projected_split(Xn, yn, Z, partial(_reflected_split, u, d, i_basis, q),
                                           min_samples_leaf, split_rule, rng)
        # CART, and HHCART at a node without a direction or a reflection
        return projected_split(Xn, yn, Xn, partial(_axis_split, q), min_samples_leaf, split_rule, rng)

    return find_split


def grow_oblique_tree(X, y, *, features=None, kind="hhcart", direction="pca", max_depth=3, min_samples_leaf=1,
                      split_rule="mean", rotation="per_node", householder="farthest", rng=None,
                      random_threshold="uniform"):
    """Grow one regression tree with oblique splits (see the module docstring) through the core's
    :func:`~treebook.tree.grow.grow_tree` (depth first, leaf value the mean, impurity the variance) with
    :func:`oblique_find_split`; returns the core :class:`~treebook.tree.Tree`.

    ``features`` (indices of columns of ``X``; None for all) are the columns the tree is grown on; its
    splits read ``X``'s columns all the same (weights and directions zero outside ``features``), so that
    the tree routes the samples of ``X``. ``kind`` is ``"hhcart"``, ``"randcart"``, ``"axis"`` (CART) or
    ``"random"`` (a random feature and a uniform threshold in the node's range, as RandomTreesEmbedding).
    ``split_rule`` is the split search of :mod:`treebook.oblique.splits` (``"mean"``: the OF-AE authors';
    ``"best"``: CART's; ``"uniform"``: a uniform threshold per column, ours). For RandCART, ``rotation`` is ``"per_node"`` (a new random rotation at every node,
    the authors'), ``"per_tree"`` (one drawn for the tree) or a ``q x q`` orthogonal matrix used for the
    whole tree (``q`` the number of ``features``). ``householder`` picks HHCART's basis vector
    (``"farthest"``: the authors'; ``"largest"``). ``random_threshold`` is the threshold of the ``"random"``
    kind (``"uniform"`` in the feature's node range, RandomTreesEmbedding's; ``"mean"``, the node mean).
    """

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    Xg = X if features is None else np.ascontiguousarray(X[:, features])
    find_split = oblique_find_split(kind, direction, split_rule, rotation, householder, rng, Xg.shape[1],
                                    random_threshold)
    tree = grow_tree(Xg, y, find_split=find_split, leaf_value=lambda t: np.array([t.mean()]),
                     node_impurity=lambda t: float(t.var()), max_depth=max_depth, min_samples_split=2,
                     min_samples_leaf=min_samples_leaf)
    if features is not None:
        tree.splits = [None if s is None else s.in_features(features, X.shape[1]) for s in tree.splits]
    return tree
