"""Input validation shared by every estimator.

Every public estimator validates at its boundary so that bad input raises a
:class:`ValueError` that says what is wrong (and where), instead of a silent
wrong answer or a crash deep inside compiled code.
"""

from __future__ import annotations

import numbers
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval

__all__ = [
    "check_array",
    "check_X_y",
    "check_y",
    "check_classification_targets",
    "check_random_state",
    "check_feature_names",
    "validate_X",
    "check_magnitude",
    "NumberInterval",
    "int_interval",
    "real_interval",
    "RANDOM_STATE",
    "validate_fit",
    "check_X_fitted",
    "check_y_given",
    "power_of_two_scale",
]


def _rows(mask: np.ndarray, limit: int = 5) -> str:
    """Format the first few row indices where ``mask`` holds."""
    idx = np.flatnonzero(mask)
    shown = ", ".join(str(i) for i in idx[:limit])
    more = f" and {idx.size - limit} more" if idx.size > limit else ""
    return f"rows {shown}{more}"


def check_array(
    X,
    *,
    name: str = "X",
    ensure_2d: bool = True,
    allow_nan: bool = False,
    allow_inf: bool = False,
    dtype=float,
    min_samples: int = 1,
    min_features: int = 1,
) -> np.ndarray:
    """Convert ``X`` to a finite numeric array, or raise a clear ``ValueError``.

    Parameters
    ----------
    X : array-like
        The input. pandas objects are accepted; categorical or object columns are rejected
        (numbers are needed), with the column named.
    ensure_2d : bool
        Require a 2-D array (samples x features); otherwise require 1-D.
    allow_nan, allow_inf : bool
        Whether NaN / infinite entries are allowed.
    dtype : numpy dtype
        Target dtype (``float`` by default).
    min_samples, min_features : int
        Minimum number of rows / columns.
    """
    if sp.issparse(X):
        raise TypeError(f"{name} is a sparse matrix, but dense data is required; convert it with X.toarray()")
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        bad = [str(c) for c, t in zip(X.columns, X.dtypes) if not np.issubdtype(_np_dtype(t), np.number)
               and not np.issubdtype(_np_dtype(t), np.bool_)]
        if bad:
            raise ValueError(f"{name} has non-numeric columns {bad}; encode them or use an estimator "
                             "that accepts nominal features")
    raw = np.asarray(X)
    if np.iscomplexobj(raw):
        raise ValueError(f"Complex data not supported: {name} has complex values")
    try:
        arr = raw.astype(dtype, copy=False) if raw.dtype != object else np.array(raw.tolist(), dtype=dtype)
    except TypeError as exc:
        raise TypeError(f"{name} must be numeric: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if ensure_2d:
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (n_samples, n_features); got shape {arr.shape}. "
                             "Reshape your data with X.reshape(-1, 1) for one feature or X.reshape(1, -1) "
                             "for one sample")
        if arr.shape[1] < min_features:
            raise ValueError(f"{arr.shape[1]} feature(s) (shape={arr.shape}) while a minimum of {min_features} "
                             f"is required: {name} has too few features")
    elif arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got shape {arr.shape}")
    if arr.shape[0] < min_samples:
        raise ValueError(f"{arr.shape[0]} sample(s) (shape={arr.shape}) while a minimum of {min_samples} "
                         f"is required: {name} has too few samples")
    if np.issubdtype(arr.dtype, np.floating) and not (allow_nan or allow_inf) and np.isfinite(arr.sum()):
        return arr  # a finite sum has no NaN and no infinity among its terms (an overflow is checked below)
    if np.issubdtype(arr.dtype, np.floating):
        if not allow_nan:
            nan = np.isnan(arr)
            if nan.any():
                rowmask = nan.any(axis=1) if arr.ndim == 2 else nan
                raise ValueError(f"{name} contains NaN at {_rows(rowmask)}")
        if not allow_inf:
            inf = np.isinf(arr)
            if inf.any():
                rowmask = inf.any(axis=1) if arr.ndim == 2 else inf
                raise ValueError(f"{name} contains infinite values at {_rows(rowmask)}")
    return arr


def _np_dtype(t):
    """numpy dtype of a pandas dtype (categoricals and strings map to object)."""
    try:
        return np.dtype(t)
    except TypeError:
        return np.dtype(object)


def check_X_y(X, y, *, y_numeric: bool = False, multi_output: bool = False, **kwargs):
    """Validate a design matrix and its targets together (same number of rows)."""
    X = check_array(X, **kwargs)
    return X, check_y(y, X.shape[0], y_numeric=y_numeric, multi_output=multi_output)


def check_y(y, n_samples: int, *, y_numeric: bool = False, multi_output: bool = False):
    """Validate the targets of a design matrix of ``n_samples`` rows that was validated already.

    ``y`` must be given and have ``n_samples`` entries. With ``y_numeric`` it becomes a finite float array
    (2-D when ``multi_output``, else 1-D); otherwise it stays as given, 1-D (a column vector is flattened,
    with scikit-learn's ``DataConversionWarning``), without NaN, infinity or missing values.
    """
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    if y_numeric:
        y = check_array(y, name="y", ensure_2d=multi_output, min_samples=1)
    else:
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            from sklearn.exceptions import DataConversionWarning

            warnings.warn("A column-vector y was passed when a 1d array was expected; it was flattened to shape "
                          "(n_samples,)", DataConversionWarning,
                          stacklevel=3)
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}")
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise ValueError(f"y contains NaN or infinite values at {_rows(~np.isfinite(y))}")
        if y.dtype.kind == "O" and any(v is None or (isinstance(v, float) and np.isnan(v)) for v in y):
            raise ValueError("y contains missing values")
    if len(y) != n_samples:
        raise ValueError(f"X has {n_samples} samples but y has {len(y)}")
    return y


def check_classification_targets(y, *, min_classes: int = 2):
    """Encode class labels as ``0..k-1``; raise if fewer than ``min_classes`` classes occur.

    Returns ``(classes, y_encoded)`` with ``classes`` sorted as :func:`numpy.unique` sorts them.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError(f"y contains NaN or infinite values at {_rows(~np.isfinite(y))}")
        if not np.all(y == np.round(y)):
            raise ValueError("y looks continuous (non-integer floats); a classifier needs class labels")
    classes, encoded = np.unique(y, return_inverse=True)
    if classes.size < min_classes:
        raise ValueError(f"y has {classes.size} class(es) {classes.tolist()}; at least {min_classes} are needed")
    return classes, encoded.astype(np.intp)


def check_random_state(seed) -> np.random.Generator:
    """Turn ``None``, an int, a ``RandomState`` or a ``Generator`` into a numpy ``Generator``."""
    if seed is None or isinstance(seed, (numbers.Integral, np.integer)):
        return np.random.default_rng(seed)
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    raise ValueError(f"random_state must be None, an int or a numpy Generator; got {seed!r}")


def _is_frame(X) -> bool:
    """Whether ``X`` is DataFrame-like (columns and dtypes): always 2-D, its column names readable."""
    return hasattr(X, "columns") and hasattr(X, "dtypes")


def check_feature_names(estimator, X, *, reset: bool, name: str = "X") -> None:
    """Record (``reset=True``, at fit) or check (``reset=False``, at predict/transform) the feature names
    and the number of features of the raw input ``X``, as scikit-learn does.

    At fit, ``feature_names_in_`` is set when ``X`` is a DataFrame with string column names (and removed
    otherwise) and ``n_features_in_`` is set. Later, a DataFrame whose columns differ from those seen at
    fit (other names or another order) raises a ``ValueError`` naming ``X``, as does another number of
    features. Call it after :func:`check_array` accepted ``X``, with the original object (a DataFrame
    keeps its column names only there).
    """
    from sklearn.utils.validation import validate_data

    try:
        validate_data(estimator, X=X, reset=reset, skip_check_array=True)
    except ValueError as exc:
        msg = str(exc)
        if msg.startswith(f"{name} "):
            raise
        raise ValueError(f"{name}: {msg}") from None


def validate_X(estimator, X, *, reset: bool, name: str = "X", **kwargs) -> np.ndarray:
    """:func:`check_array` of ``X`` and :func:`check_feature_names`; returns the array.

    ``reset=True`` at fit (records ``n_features_in_`` and ``feature_names_in_``), ``reset=False`` when a
    fitted estimator receives new data. As in scikit-learn, a DataFrame's column names are checked before
    its values (a frame is always 2-D), any other input's number of features after :func:`check_array`
    has made it an array. ``kwargs`` go to :func:`check_array`.
    """
    if _is_frame(X):
        check_feature_names(estimator, X, reset=reset, name=name)
        return check_array(X, name=name, **kwargs)
    arr = check_array(X, name=name, **kwargs)
    check_feature_names(estimator, X, reset=reset, name=name)
    return arr


def check_magnitude(arr: np.ndarray, limit: float, *, name: str = "X", reason: str = "") -> None:
    """Raise a ``ValueError`` naming ``name`` when a finite entry of ``arr`` exceeds ``limit`` in magnitude.

    For computations that square or sum the values (variances, Gram matrices, projections): beyond the
    limit they would overflow to inf and give a silently wrong model. ``reason`` says which computation.
    """
    if arr.size == 0:
        return
    peak = float(np.max(np.abs(arr)))
    if peak > limit:
        why = f" ({reason})" if reason else ""
        raise ValueError(f"{name} has values of magnitude up to {peak:.3g}, beyond the {limit:.3g} supported{why}; "
                         f"rescale {name}, e.g. divide it by its largest magnitude")
# ------------------------------------------------------------------------------------------------------
# declarative parameter constraints (scikit-learn's ``_parameter_constraints``) and fit/predict helpers


class NumberInterval(Interval):
    """scikit-learn's :class:`~sklearn.utils._param_validation.Interval` that refuses booleans.

    ``True`` is an ``int`` to Python, so a plain ``Interval(Integral, 1, None)`` lets ``max_depth=True``
    through; a hyper-parameter of treebook that takes a number never takes a bool.
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


def int_interval(left, right=None, closed="left") -> NumberInterval:
    """Constraint: an int (not a bool) in the interval; ``None`` bounds are unbounded."""
    return NumberInterval(Integral, left, right, closed=closed)


def real_interval(left, right=None, closed="left") -> NumberInterval:
    """Constraint: a finite real number (not a bool, not NaN) in the interval; with an unbounded side,
    ``closed="left"`` or ``"right"`` also refuses the infinity of that side."""
    return NumberInterval(Real, left, right, closed=closed)


def validate_fit(estimator, X, y, check=None, **kwargs):
    """The input checks of a ``fit``: ``check(X, y, **kwargs)`` (:func:`check_X_y` by default) and
    :func:`check_feature_names` with ``reset=True`` on the raw ``X`` (``n_features_in_`` and, for a
    DataFrame with string column names, ``feature_names_in_``), in :func:`validate_X`'s order. Returns
    the checked ``(X, y)``."""
    if _is_frame(X):
        check_feature_names(estimator, X, reset=True)
        return (check or check_X_y)(X, y, **kwargs)
    Xa, ya = (check or check_X_y)(X, y, **kwargs)
    check_feature_names(estimator, X, reset=True)
    return Xa, ya


#: The constraint of every ``random_state`` parameter: what :func:`check_random_state` accepts.
RANDOM_STATE = [None, int_interval(0), np.random.RandomState, np.random.Generator]


def check_X_fitted(est, X, fitted: str) -> np.ndarray:
    """The checks of a fitted estimator's ``predict`` (``transform``, ``apply`` ...): fitted
    (``NotFittedError`` unless attribute ``fitted`` is set), then ``X`` by :func:`validate_X`
    (``reset=False``: the array, the column names and the number of features seen at fit)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est, fitted)
    return validate_X(est, X, reset=False)


def check_y_given(y, estimator: str = "this estimator") -> None:
    """Raise the ``ValueError`` scikit-learn expects of a supervised estimator called with ``y=None``."""
    if y is None:
        raise ValueError(f"{estimator} requires y to be passed, but the target y is None")


def power_of_two_scale(max_abs: float, limit: float, factor: float = 1.0) -> float:
    """A power of two ``s`` with ``factor * max_abs / s <= limit``, or 1.0 when that holds for ``s = 1``.

    Dividing by a power of two is exact in floating point (away from the subnormal range), so an estimator
    that rescales overflow-prone data by ``s`` computes, up to that exact factor, what it computes on data
    of ordinary size, and ``s == 1`` leaves ordinary data untouched. ``factor`` (e.g. the number of terms of
    a sum) multiplies ``max_abs`` in the logarithm, so that the product may exceed the float range.
    """
    max_abs = float(max_abs)
    if not np.isfinite(max_abs) or max_abs <= 0 or factor <= 0:
        return 1.0
    log_size = np.log2(max_abs) + np.log2(float(factor))
    if log_size <= np.log2(limit):
        return 1.0
    return float(2.0 ** (np.ceil(log_size) - np.floor(np.log2(limit))))
