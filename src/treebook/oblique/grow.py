"""Growing one oblique regression tree: HHCART (Householder reflections) and RandCART (random rotation).

A grown tree is returned as plain arrays (:class:`TreeArrays`); every internal node holds a hyperplane
``w . x >= b`` (True = right child), in the coordinates the tree was grown in.

HHCART (Wickramarachchi et al. 2016, regression variant with the MSE criterion): at a node with
samples ``X_n`` a unit direction ``d`` is estimated from ``X_n`` (``direction=``), the Householder matrix
``H = I - 2 u u^T`` with ``u = (e_k - d) / ||e_k - d||`` maps ``e_k`` onto ``d``; the best axis-parallel split
of ``X_n`` competes with the best axis-parallel split of the reflected data ``X_n H``. A split on column ``j``
of ``X_n H`` is the hyperplane with normal ``H e_j = e_j - 2 u_j u``: a unit vector plus a multiple of ``d``.

RandCART (Blaser & Fryzlewicz 2016): one random orthogonal matrix ``Q`` per tree (QR of a Gaussian
matrix, signs fixed by ``diag(R)`` so ``Q`` is Haar distributed); CART on ``X Q``; a split on column ``j`` is the
hyperplane with normal ``Q e_j``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from treebook.oblique.splits import best_column_split

__all__ = ["DIRECTIONS", "TreeArrays", "grow_oblique_tree", "node_direction", "random_rotation"]

DIRECTIONS = ("pca", "svd", "ica", "fa", "grp")


@dataclass
class TreeArrays:
    """One grown tree as arrays (node 0 is the root; ``left == -1`` at leaves)."""

    left: np.ndarray
    right: np.ndarray
    weights: np.ndarray  # (n_nodes, n_features); zero rows at leaves
    bias: np.ndarray
    value: np.ndarray
    n_samples: np.ndarray
    impurity: np.ndarray
    depth: np.ndarray
    direction: np.ndarray = field(default=None)  # (n_nodes, n_features): HHCART direction d (zeros if axis)
    dir_coef: np.ndarray = field(default=None)  # coefficient beta of d in the node's normal (0 if none)

    @property
    def n_nodes(self):
        return len(self.left)

    def is_leaf(self):
        return self.left < 0

    def apply(self, X):
        """Leaf id of every row of ``X`` (vectorised over samples, loop over depth)."""
        X = np.asarray(X, dtype=float)
        node = np.zeros(len(X), dtype=np.int64)
        active = self.left[node] >= 0
        while active.any():
            idx = np.flatnonzero(active)
            nd = node[idx]
            go_right = np.einsum("ij,ij->i", X[idx], self.weights[nd]) >= self.bias[nd]
            node[idx] = np.where(go_right, self.right[nd], self.left[nd])
            active = self.left[node] >= 0
        return node


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


def node_direction(Xn, direction, rng):
    """Unit 1-D direction of the node's data (``n_components = 1``), or None if degenerate.

    ``pca``: first principal axis; ``svd``: TruncatedSVD (no centring); ``ica``: FastICA unmixing row;
    ``fa``: FactorAnalysis loading; ``grp``: Gaussian random projection row.
    """
    if direction == "pca":
        v = _top_right_singular(Xn - Xn.mean(axis=0))
    elif direction == "svd":
        v = _top_right_singular(Xn)
    elif direction == "grp":
        v = rng.standard_normal(Xn.shape[1])
    elif direction in ("ica", "fa"):
        import warnings

        from sklearn.decomposition import FactorAnalysis, FastICA

        seed = int(rng.integers(2**31 - 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if direction == "ica":
                m = FastICA(n_components=1, random_state=seed, max_iter=200, whiten="unit-variance")
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
    return v / nv


def _householder_u(d):
    """``u`` with ``(I - 2uu^T) e_k = d`` for ``k = argmax |d|`` (sign of ``d`` fixed so ``d_k > 0``)."""
    k = int(np.argmax(np.abs(d)))
    if d[k] < 0:
        d = -d
    v = -d.copy()
    v[k] += 1.0
    nv = np.linalg.norm(v)
    if nv < 1e-12:
        return None, d
    return v / nv, d


def grow_oblique_tree(X, y, *, kind="hhcart", direction="pca", max_depth=3, min_samples_leaf=1,
                      split_rule="best", rotation=None, rng=None):
    """Grow one regression tree (MSE) with oblique splits; see the module docstring.

    ``kind`` is ``"hhcart"``, ``"randcart"``, ``"axis"`` (plain CART) or ``"random"`` (a random feature
    and a uniform threshold in the node's range, as RandomTreesEmbedding). For RandCART, ``rotation`` is the
    tree's orthogonal matrix (drawn from ``rng`` if None).
    """
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, q = X.shape
    if kind == "randcart" and rotation is None:
        rotation = random_rotation(q, rng)
    max_depth = np.inf if max_depth is None else max_depth
    left, right, W, D, bias, value, nsamp, imp, depth = [], [], [], [], [], [], [], [], []
    beta = []

    def new_node(idx, dep):
        yn = y[idx]
        left.append(-1)
        right.append(-1)
        W.append(np.zeros(q))
        D.append(np.zeros(q))
        beta.append(0.0)
        bias.append(0.0)
        value.append(float(yn.mean()))
        nsamp.append(len(idx))
        imp.append(float(yn.var()))
        depth.append(dep)
        return len(left) - 1

    stack = [(new_node(np.arange(n), 0), np.arange(n), 0)]
    while stack:
        node, idx, dep = stack.pop()
        if dep >= max_depth or len(idx) < max(2, 2 * min_samples_leaf) or imp[node] <= 1e-15:
            continue
        Xn, yn = X[idx], y[idx]
        d = None
        if kind == "random":  # RandomTreesEmbedding-style: random feature, uniform threshold in its range
            mn, mx = Xn.min(axis=0), Xn.max(axis=0)
            cand = np.flatnonzero(mx > mn)
            if len(cand) == 0:
                continue
            j = int(rng.choice(cand))
            thr = float(rng.uniform(mn[j], mx[j]))
            if not thr > mn[j]:
                thr = float(mx[j])
            Z = Xn
            found = (j, thr, 0.0)
        elif kind == "axis":
            Z = Xn
        elif kind == "randcart":
            Z = Xn @ rotation
        elif kind == "hhcart":
            d = node_direction(Xn, direction, rng)
            u = None
            if d is not None:
                u, d = _householder_u(d)
            if u is None:
                Z, d = Xn, None
            else:
                Z = np.hstack([Xn, Xn - 2.0 * np.outer(Xn @ u, u)])
        else:
            raise ValueError(f"kind must be 'hhcart', 'randcart', 'axis' or 'random', got {kind!r}")
        if kind != "random":
            found = best_column_split(Z, yn, min_samples_leaf, split_rule)
        if found is None:
            continue
        j, thr, _ = found
        if kind in ("axis", "random") or (kind == "hhcart" and j < q):
            w = np.zeros(q)
            w[j] = 1.0
            d_used = np.zeros(q)
        elif kind == "randcart":
            w = rotation[:, j].copy()
            d_used = np.zeros(q)
        else:
            jj = j - q
            w = -2.0 * u[jj] * u
            w[jj] += 1.0
            d_used = d
            # H e_jj = e_jj - 2 u_jj (e_k - d) / ||e_k - d||: the coefficient of d is 2 u_jj / ||e_k - d||
            k = int(np.argmax(np.abs(d)))
            beta[node] = 2.0 * u[jj] / np.sqrt(max(2.0 * (1.0 - d[k]), 1e-300))
        # route with the stored hyperplane itself so that training samples and apply() agree exactly
        go_right = Xn @ w >= thr
        if go_right.all() or not go_right.any():
            continue
        W[node] = w
        D[node] = d_used
        bias[node] = thr
        ri = idx[go_right]
        li = idx[~go_right]
        lnode = new_node(li, dep + 1)
        rnode = new_node(ri, dep + 1)
        left[node] = lnode
        right[node] = rnode
        stack.append((rnode, ri, dep + 1))
        stack.append((lnode, li, dep + 1))
    return TreeArrays(
        left=np.array(left, dtype=np.int64), right=np.array(right, dtype=np.int64), weights=np.array(W),
        bias=np.array(bias), value=np.array(value), n_samples=np.array(nsamp, dtype=np.int64),
        impurity=np.array(imp), depth=np.array(depth, dtype=np.int64), direction=np.array(D),
        dir_coef=np.array(beta))
