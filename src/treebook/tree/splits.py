"""Split kinds: what an internal node tests.

Every split kind routes a whole matrix at once: ``route(X)`` returns a boolean array that is
``True`` for the samples that go to the **right** child. The four kinds of the book are

* :class:`ThresholdSplit` — ``x_j > t`` goes right (CART; chapter 0 and 2);
* :class:`SubsetSplit` — a subset of the values of a nominal attribute goes left (chapter 1);
* :class:`ShapeSplit` — a piecewise-constant function of one feature with at most K breakpoints
  decides the side (chapter 3);
* :class:`HyperplaneSplit` — ``w · x >= b`` goes right (chapter 4).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Split", "ThresholdSplit", "SubsetSplit", "ShapeSplit", "HyperplaneSplit"]


def _fname(feature_names, j: int) -> str:
    if feature_names is None:
        return f"x[{j}]"
    return str(feature_names[j])


class Split:
    """Base class of the split kinds.

    Subclasses implement :meth:`route`, :meth:`describe` and the :attr:`features` property.
    """

    def route(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """Boolean array, ``True`` where a row of ``X`` goes to the right child."""
        raise TypeError(f"{type(self).__name__} does not define route()")

    def describe(self, feature_names=None, decimals: int = 3) -> str:  # pragma: no cover - interface
        """Text of the condition that sends a sample to the LEFT child."""
        raise TypeError(f"{type(self).__name__} does not define describe()")

    @property
    def features(self) -> tuple[int, ...]:  # pragma: no cover - interface
        """Indices of the features the split reads."""
        raise TypeError(f"{type(self).__name__} does not define features")

    def unseen_rows(self, X: np.ndarray) -> np.ndarray | None:
        """Boolean array, ``True`` where a row of ``X`` holds a value the node never saw at fit time
        (``None``: the split kind sees every value). A traversal with ``stop_unseen`` halts such rows at
        the node."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


class ThresholdSplit(Split):
    """Axis-aligned split: ``X[:, feature] > threshold`` goes right (as scikit-learn's ``<=`` goes left)."""

    __slots__ = ("feature", "threshold")

    def __init__(self, feature: int, threshold: float):
        self.feature = int(feature)
        self.threshold = float(threshold)

    def route(self, X):
        return np.asarray(X)[:, self.feature] > self.threshold

    def describe(self, feature_names=None, decimals=3):
        return f"{_fname(feature_names, self.feature)} <= {self.threshold:.{decimals}f}"

    @property
    def features(self):
        return (self.feature,)

    def __getstate__(self):
        return (self.feature, self.threshold)

    def __setstate__(self, state):
        self.feature, self.threshold = state


class SubsetSplit(Split):
    """Nominal split: rows whose category code is in ``left_values`` go left.

    ``X[:, feature]`` holds integer category codes (as floats). ``seen_values`` are the codes that
    reached the node at fit time; a code outside it (a category unseen at this node, or never seen,
    or NaN) goes to the ``unseen`` side, ``"left"`` or ``"right"``. ``labels`` optionally maps codes
    to category names for the text export.
    """

    def __init__(self, feature: int, left_values, seen_values=None, unseen: str = "left", labels=None):
        if unseen not in ("left", "right"):
            raise ValueError(f"unseen must be 'left' or 'right'; got {unseen!r}")
        self.feature = int(feature)
        self.left_values = np.unique(np.asarray(left_values, dtype=float))
        self.seen_values = None if seen_values is None else np.unique(np.asarray(seen_values, dtype=float))
        self.unseen = unseen
        self.labels = None if labels is None else list(labels)

    def route(self, X):
        codes = np.asarray(X, dtype=float)[:, self.feature]
        right = ~np.isin(codes, self.left_values)
        if self.seen_values is not None:
            unseen = ~np.isin(codes, self.seen_values)
            right[unseen] = self.unseen == "right"
        else:
            right[np.isnan(codes)] = self.unseen == "right"
        return right

    def unseen_rows(self, X):
        if self.seen_values is None:
            return None
        return ~np.isin(np.asarray(X, dtype=float)[:, self.feature], self.seen_values)

    def describe(self, feature_names=None, decimals=3):
        vals = [int(v) for v in self.left_values]
        if self.labels is not None:
            shown = [str(self.labels[v]) if 0 <= v < len(self.labels) else str(v) for v in vals]
        else:
            shown = [str(v) for v in vals]
        if len(shown) > 6:
            shown = shown[:6] + [f"... ({len(vals)} values)"]
        return f"{_fname(feature_names, self.feature)} in {{{', '.join(shown)}}}"

    @property
    def features(self):
        return (self.feature,)


class ShapeSplit(Split):
    """Shape-function split on one feature.

    ``breakpoints`` b_1 < ... < b_K cut the line into K+1 pieces (-inf, b_1], (b_1, b_2], ...,
    (b_K, inf); ``sides[i]`` is ``True`` when piece ``i`` goes right. With K = 1 and
    ``sides = [False, True]`` this is the threshold split ``x <= b_1``.
    """

    def __init__(self, feature: int, breakpoints, sides):
        b = np.asarray(breakpoints, dtype=float).ravel()
        s = np.asarray(sides, dtype=bool).ravel()
        if b.size == 0:
            raise ValueError("a shape split needs at least one breakpoint")
        if np.any(np.diff(b) <= 0):
            raise ValueError(f"breakpoints must be strictly increasing; got {b}")
        if s.size != b.size + 1:
            raise ValueError(f"sides must have K+1 = {b.size + 1} entries; got {s.size}")
        self.feature = int(feature)
        self.breakpoints = b
        self.sides = s

    def route(self, X):
        x = np.asarray(X, dtype=float)[:, self.feature]
        return self.sides[np.searchsorted(self.breakpoints, x, side="left")]

    def describe(self, feature_names=None, decimals=3):
        edges = np.concatenate(([-np.inf], self.breakpoints, [np.inf]))
        parts = []
        for i in np.flatnonzero(~self.sides):
            lo, hi = edges[i], edges[i + 1]
            lo_s = "-inf" if np.isinf(lo) else f"{lo:.{decimals}f}"
            hi_s = "inf)" if np.isinf(hi) else f"{hi:.{decimals}f}]"
            parts.append(f"({lo_s}, {hi_s}")
        where = " U ".join(parts) if parts else "{}"
        return f"{_fname(feature_names, self.feature)} in {where}"

    @property
    def features(self):
        return (self.feature,)

    @property
    def n_breakpoints(self) -> int:
        return int(self.breakpoints.size)


class HyperplaneSplit(Split):
    """Oblique split: ``X @ weights >= bias`` goes right."""

    def __init__(self, weights, bias: float):
        w = np.asarray(weights, dtype=float).ravel()
        if not np.all(np.isfinite(w)) or not np.isfinite(bias):
            raise ValueError("hyperplane weights and bias must be finite")
        self.weights = w
        self.bias = float(bias)

    def route(self, X):
        return np.asarray(X, dtype=float) @ self.weights >= self.bias

    def describe(self, feature_names=None, decimals=3, max_terms: int = 4):
        nz = np.flatnonzero(self.weights)
        order = nz[np.argsort(-np.abs(self.weights[nz]), kind="stable")]
        terms = [f"{self.weights[j]:+.{decimals}f}*{_fname(feature_names, j)}" for j in order[:max_terms]]
        if order.size > max_terms:
            terms.append(f"... ({order.size} terms)")
        return f"{' '.join(terms) or '0'} < {self.bias:.{decimals}f}"

    @property
    def features(self):
        return tuple(int(j) for j in np.flatnonzero(self.weights))
