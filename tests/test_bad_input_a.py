"""Bad input to every public entry point of the tree core, chapter 1 and chapter 2.

Each case of :data:`CASES` is one call with one defect (NaN, infinity, wrong shape, no data, one class,
``lower > upper``, an unseen category, a wrong type, a negative, zero or fractional size, ...). A case either

* ``raises``: a ``ValueError`` or ``TypeError`` whose message names the argument at fault, or
* is ``valid``: documented behaviour (the docstring of the entry point says so), and the result is checked.

A property test adds random NaN / infinite entries anywhere in ``X`` for every estimator.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from treebook.interval import (
    ConstantIntervalRegressor,
    IntervalCARTRegressor,
    L1LinearIntervalRegressor,
    MMITForestRegressor,
    MMITPrunedCV,
    MMITRegressor,
    prefix_solve,
)
from treebook.interval.baselines import MinErrorConstantRegressor
from treebook.interval.selection import MMITGridSearchCV
from treebook.nominal import NominalTreeClassifier, best_partition, partition_impurity, weighted_impurity
from treebook.tree import CARTClassifier, CARTRegressor

RNG = np.random.default_rng(0)
X = RNG.normal(size=(24, 3))
Y_CLASS = np.arange(24) % 2
Y_REAL = X[:, 0] + 0.1 * RNG.normal(size=24)
Y_INT = np.column_stack([Y_REAL - 0.5, Y_REAL + 0.5])
Y_INT[::5, 1] = np.inf
FRAME = pd.DataFrame({"c": pd.Categorical(list("abcd") * 6), "x": X[:, 0]})
V = np.array([[3.0, 1.0, 0.0], [0.0, 4.0, 2.0], [2.0, 2.0, 2.0], [1.0, 0.0, 5.0]])


@dataclass
class Case:
    entry: str                      # the public entry point
    defect: str                     # what is wrong (or unusual) about the call
    call: Callable[[], Any]
    outcome: str                    # "raises" or "valid"
    names: str = ""                 # raises: regex of the argument the message must name
    check: Callable[[Any], bool] | None = None   # valid: property of the result


# estimator name -> (factory, y for fit, fitted instance maker)
CLASSIFIERS = {
    "CARTClassifier": CARTClassifier(max_depth=3),
    "NominalTreeClassifier": NominalTreeClassifier(max_depth=3),
}
REGRESSORS = {"CARTRegressor": CARTRegressor(max_depth=3)}
INTERVAL = {
    "MMITRegressor": MMITRegressor(max_depth=2),
    "MMITPrunedCV": MMITPrunedCV(cv=2, param_grid={"max_depth": [2]}, random_state=0),
    "MMITForestRegressor": MMITForestRegressor(n_estimators=2, max_depth=2, random_state=0),
    "MMITGridSearchCV": MMITGridSearchCV(cv=2, param_grid={"max_depth": [1, 2]}),
    "L1LinearIntervalRegressor": L1LinearIntervalRegressor(penalty=0.1),
    "IntervalCARTRegressor": IntervalCARTRegressor(max_depth=2),
    "ConstantIntervalRegressor": ConstantIntervalRegressor(),
    "MinErrorConstantRegressor": MinErrorConstantRegressor(),
}
ESTIMATORS = {**CLASSIFIERS, **REGRESSORS, **INTERVAL}


def _y_for(name):
    if name in CLASSIFIERS:
        return Y_CLASS
    if name in REGRESSORS:
        return Y_REAL
    return Y_INT


def _with(arr, i, j, value, dtype=float):
    out = np.array(arr, dtype=dtype)
    out[i, j] = value
    return out


FRAME_X = pd.DataFrame(X, columns=["a", "b", "c"])


@functools.cache
def _fitted(name, on_frame=False):
    est = ESTIMATORS[name]
    return type(est)(**est.get_params()).fit(FRAME_X if on_frame else X, _y_for(name))


def _x_cases(name, est):
    """Defects of X at fit, and of the call at predict, shared by every estimator."""
    y = _y_for(name)
    fit = lambda Xb, yb=y: (lambda: type(est)(**est.get_params()).fit(Xb, yb))  # noqa: E731
    frame = FRAME_X
    cases = [
        Case(name, "NaN in X", fit(_with(X, 2, 1, np.nan)), "raises", "X"),
        Case(name, "+inf in X", fit(_with(X, 3, 0, np.inf)), "raises", "X"),
        Case(name, "-inf in X", fit(_with(X, 0, 2, -np.inf)), "raises", "X"),
        Case(name, "complex X", fit(X + 1j), "raises", "X"),
        Case(name, "1-D X", fit(X[:, 0]), "raises", "X"),
        Case(name, "3-D X", fit(X[:, :, None]), "raises", "X"),
        Case(name, "X with no rows", fit(X[:0], y[:0]), "raises", "X|y"),
        Case(name, "X with no columns", fit(X[:, :0]), "raises", "X"),
        Case(name, "X and y of different lengths", fit(X[:-1]), "raises", "y"),
        Case(name, "y is None", fit(X, None), "raises", "y"),
        Case(name, "sparse X", fit(sp.csr_matrix(X)), "raises", "X"),
        Case(name, "X of strings", fit(np.full(X.shape, "a")), "raises", "X|column"),
        Case(name, "predict before fit", lambda: type(est)(**est.get_params()).predict(X), "raises", name),
        Case(name, "predict: too few features", lambda: _fitted(name).predict(X[:, :2]), "raises", "X"),
        Case(name, "predict: NaN in X", lambda: _fitted(name).predict(_with(X, 1, 1, np.nan)), "raises", "X"),
        Case(name, "predict: 1-D X", lambda: _fitted(name).predict(X[0]), "raises", "X"),
        Case(name, "predict: reordered DataFrame columns",
             lambda: _fitted(name, True).predict(frame[["b", "a", "c"]]), "raises", "feature names|features"),
        Case(name, "predict: DataFrame with renamed columns",
             lambda: _fitted(name, True).predict(frame.rename(columns={"a": "z"})), "raises", "feature names|features"),
        Case(name, "predict: ndarray after a DataFrame fit (taken by position)",
             lambda: _fitted(name, True).predict(X), "valid",
             check=lambda p: np.allclose(p, _fitted(name, True).predict(frame))),
    ]
    if name != "NominalTreeClassifier":
        # the nominal tree reads a column of strings as categories only in a DataFrame; elsewhere X is numeric
        cases.append(Case(name, "object X of numbers", fit(X.astype(object)), "valid",
                          check=lambda e: np.allclose(e.predict(X), _fitted(name).predict(X))))
    return cases


def _param_cases(name, est):
    """Negative, zero, fractional and wrongly typed hyper-parameters."""
    y = _y_for(name)
    params = est.get_params()
    bad = {
        "max_depth": [-1, 1.5, "3", True],
        "min_samples_split": [0, 1, 2.5, "2"],
        "min_samples_leaf": [0, -1, 1.5, True],
        "min_impurity_decrease": [-0.1, np.nan, "0"],
        "max_features": [0, -1, 1.5, "all"],
        "random_state": ["x", -1, 1.5],
        "margin": [-1.0, np.nan, np.inf, "0.5"],
        "loss": ["abs", 1],
        "criterion": ["mae", None],
        "ccp_alpha": [-0.1, np.nan],
        "n_estimators": [0, 2.5],
        "bootstrap": ["no", 1],
        "cv": [1, 0, 2.5, "x", True],
        "param_grid": [{"margin": []}, {"depth": [1]}, {"margin": 0.5}, "margin"],
        "penalty": [-0.1, np.inf, "1"],
        "n_folds": [1, 2.5],
        "splitter": ["nope"],
        "chi2_alpha": [0.0, 1.0, np.nan],
        "unseen": ["nope"],
        "prune": ["yes"],
        "tie_break": ["last"],
    }
    cases = []
    for key, values in bad.items():
        if key not in params:
            continue
        for v in values:
            cases.append(Case(name, f"{key}={v!r}",
                              lambda key=key, v=v: type(est)(**{**params, key: v}).fit(X, y), "raises",
                              re.escape(key) if key != "param_grid" else r"param_grid|margin|depth"))
    return cases


def _target_cases():
    cases = []
    for name in CLASSIFIERS:
        est = CLASSIFIERS[name]
        fit = lambda yb, est=est: (lambda: type(est)(**est.get_params()).fit(X, yb))  # noqa: E731
        cases += [
            Case(name, "one class", fit(np.zeros(24, dtype=int)), "raises", "y|class"),
            Case(name, "NaN label", fit(np.where(Y_CLASS == 1, np.nan, 0.0)), "raises", "y|label"),
            Case(name, "continuous y", fit(Y_REAL), "raises", "y"),
            Case(name, "2-D y with two columns", fit(np.column_stack([Y_CLASS, Y_CLASS])), "raises", "y"),
            Case(name, "string labels", fit(np.array(["no", "yes"])[Y_CLASS]), "valid",
                 check=lambda e: set(e.predict(X)) <= {"no", "yes"}),
        ]
    cases += [
        Case("CARTRegressor", "NaN in y", lambda: CARTRegressor().fit(X, _with(Y_REAL[:, None], 0, 0, np.nan)[:, 0]),
             "raises", "y"),
        Case("CARTRegressor", "y near 1e300 (sums of squares overflow)", lambda: CARTRegressor().fit(X, Y_REAL * 1e300),
             "raises", "y"),
    ]
    for name, est in INTERVAL.items():
        fit = lambda yb, est=est: (lambda: type(est)(**est.get_params()).fit(X, yb))  # noqa: E731
        cases += [
            Case(name, "lower > upper", fit(Y_INT[:, ::-1] + np.array([0.0, 0.0])), "raises", "y"),
            Case(name, "NaN limit", fit(_with(Y_INT, 4, 0, np.nan)), "raises", "y"),
            Case(name, "both limits infinite", fit(_with(_with(Y_INT, 4, 0, -np.inf), 4, 1, np.inf)), "raises", "y"),
            Case(name, "lower limit +inf", fit(_with(Y_INT, 4, 0, np.inf)), "raises", "y"),
            Case(name, "1-D y", fit(Y_REAL), "raises", "y"),
            Case(name, "y with three columns", fit(np.column_stack([Y_INT, Y_REAL])), "raises", "y"),
            Case(name, "complex y", fit(Y_INT + 0j), "raises", "y"),
            Case(name, "y of strings", fit(np.full((24, 2), "a")), "raises", "y"),
            Case(name, "open intervals (-inf lower limits)", fit(_with(Y_INT, 3, 0, -np.inf)), "valid",
                 check=lambda e: np.isfinite(e.predict(X)).all()),
        ]
    return cases


def _scale_cases():
    X_huge = X * 1e307
    cases = [
        Case("L1LinearIntervalRegressor", "X * 1e307 (rescaled: the same predictions)",
             lambda: L1LinearIntervalRegressor(penalty=0.1).fit(X_huge, Y_INT), "valid",
             check=lambda e: np.allclose(e.predict(X_huge), L1LinearIntervalRegressor(penalty=0.1).fit(X, Y_INT)
                                         .predict(X), rtol=1e-9, atol=1e-9)),
        Case("L1LinearIntervalRegressor", "X * 1e307 with scale=False",
             lambda: L1LinearIntervalRegressor(penalty=0.1, scale=False).fit(X_huge, Y_INT), "raises", "X|scale"),
        Case("IntervalCARTRegressor", "y * 1e300 (rescaled: the same predictions)",
             lambda: IntervalCARTRegressor(max_depth=2).fit(X, Y_INT * 1e300), "valid",
             check=lambda e: np.allclose(e.predict(X) / 1e300,
                                         IntervalCARTRegressor(max_depth=2).fit(X, Y_INT).predict(X), rtol=1e-12)),
        Case("MMITRegressor", "squared hinge on y * 1e300", lambda: MMITRegressor(loss="squared").fit(X, Y_INT * 1e300),
             "raises", "y"),
        Case("ConstantIntervalRegressor", "y * 1e300 (solver rescales)",
             lambda: ConstantIntervalRegressor().fit(X, Y_INT * 1e300), "valid",
             check=lambda e: np.isclose(e.constant_ / 1e300, ConstantIntervalRegressor().fit(X, Y_INT).constant_)),
    ]
    return cases


def _nominal_cases():
    fitted = NominalTreeClassifier(max_depth=2).fit(FRAME, Y_CLASS)
    unseen = FRAME.assign(c=pd.Categorical(["z"] * 24))
    return [
        Case("NominalTreeClassifier", "unseen category at predict (documented: parameter unseen)",
             lambda: fitted.predict(unseen), "valid", check=lambda p: set(p) <= {0, 1}),
        Case("NominalTreeClassifier", "missing category at fit", lambda: NominalTreeClassifier().fit(
            FRAME.assign(c=FRAME.c.astype(object).where(np.arange(24) != 3, None)), Y_CLASS), "raises", "column|c"),
        Case("NominalTreeClassifier", "nominal feature not a column",
             lambda: NominalTreeClassifier(nominal_features=["zz"]).fit(FRAME, Y_CLASS), "raises", "nominal"),
        Case("NominalTreeClassifier", "nominal feature index out of range",
             lambda: NominalTreeClassifier(nominal_features=[7]).fit(X, Y_CLASS), "raises", "nominal"),
        Case("NominalTreeClassifier", "NaN in a numeric column",
             lambda: NominalTreeClassifier().fit(FRAME.assign(x=np.where(np.arange(24) == 2, np.nan, 1.0)), Y_CLASS),
             "raises", "column|x"),
        Case("NominalTreeClassifier", "complex numeric column",
             lambda: NominalTreeClassifier().fit(FRAME.assign(x=FRAME.x + 1j), Y_CLASS), "raises", "X|column"),
    ]


def _partition_cases():
    big = V * 1e307
    cases = []
    for fn, call in (("best_partition", lambda t: best_partition(t)),
                     ("partition_impurity", lambda t: partition_impurity(t, np.arange(len(t)) % 2 == 0)),
                     ("weighted_impurity", lambda t: weighted_impurity(t))):
        cases += [
            Case(fn, "NaN count", lambda call=call: call(_with(V, 1, 1, np.nan)), "raises", "V|counts"),
            Case(fn, "infinite count", lambda call=call: call(_with(V, 1, 1, np.inf)), "raises", "V|counts"),
            Case(fn, "negative count", lambda call=call: call(_with(V, 1, 1, -1.0)), "raises", "V|counts"),
            Case(fn, "complex counts", lambda call=call: call(V + 1j), "raises", "V|counts"),
            Case(fn, "strings", lambda call=call: call(np.full(V.shape, "a")), "raises", "V|counts"),
            Case(fn, "counts near 1e307 (rescaled: finite impurity)", lambda call=call: call(big), "valid",
                 check=lambda r: np.all(np.isfinite(getattr(r, "impurity", r)))),
        ]
    cases += [
        Case("best_partition", "one row", lambda: best_partition(V[:1]), "raises", "V"),
        Case("best_partition", "one class (column)", lambda: best_partition(V[:, :1]), "raises", "V"),
        Case("best_partition", "1-D table", lambda: best_partition(V[0]), "raises", "V"),
        Case("best_partition", "all zeros", lambda: best_partition(np.zeros((3, 2))), "raises", "V"),
        Case("best_partition", "unknown method", lambda: best_partition(V, method="nope"), "raises", "method"),
        Case("best_partition", "unknown impurity", lambda: best_partition(V, impurity="mse"), "raises", "impurity"),
        Case("best_partition", "an empty row and an empty class (documented: dropped)",
             lambda: best_partition(np.vstack([np.column_stack([V, np.zeros(4)]), np.zeros(4)])), "valid",
             check=lambda p: not p.left[-1] and np.isclose(p.impurity, best_partition(V).impurity)),
        Case("best_partition", "one class has every example (documented: impurity 0)",
             lambda: best_partition(np.array([[3.0, 0.0], [2.0, 0.0]])), "valid", check=lambda p: p.impurity == 0),
        Case("partition_impurity", "mask of the wrong length", lambda: partition_impurity(V, [True, False]),
             "raises", "left"),
        Case("partition_impurity", "mask of floats", lambda: partition_impurity(V, [0.5, 1, 0, 0]), "raises", "left"),
        Case("partition_impurity", "1-D table", lambda: partition_impurity(V[0], [True, False, True]), "raises", "V"),
        Case("weighted_impurity", "scalar", lambda: weighted_impurity(3.0), "raises", "counts"),
        Case("weighted_impurity", "a row of zeros (documented: 0)", lambda: weighted_impurity(np.zeros(3)), "valid",
             check=lambda r: r == 0.0),
    ]
    return cases


def _solver_cases():
    return [
        Case("prefix_solve", "lower > upper", lambda: prefix_solve([1.0, 2.0], [0.0, 3.0]), "raises", "lower"),
        Case("prefix_solve", "NaN limit", lambda: prefix_solve([np.nan], [1.0]), "raises", "lower"),
        Case("prefix_solve", "lengths differ", lambda: prefix_solve([0.0, 1.0], [1.0]), "raises", "lower|upper"),
        Case("prefix_solve", "2-D limits", lambda: prefix_solve([[0.0]], [[1.0]]), "raises", "lower|upper"),
        Case("prefix_solve", "both limits infinite", lambda: prefix_solve([-np.inf], [np.inf]), "raises", "lower"),
        Case("prefix_solve", "negative margin", lambda: prefix_solve([0.0], [1.0], margin=-1), "raises", "margin"),
        Case("prefix_solve", "unknown loss", lambda: prefix_solve([0.0], [1.0], loss="abs"), "raises", "loss"),
        Case("prefix_solve", "zero weight", lambda: prefix_solve([0.0], [1.0], weights=[0.0]), "raises", "weights"),
        Case("prefix_solve", "weights of the wrong length", lambda: prefix_solve([0.0], [1.0], weights=[1.0, 2.0]),
             "raises", "weights"),
        Case("prefix_solve", "limits of 1e308 (documented: rescaled)", lambda: prefix_solve([1e308], [1e308]), "valid",
             check=lambda r: r.prediction[0] == 1e308 and r.cost[0] == 0.0),
        Case("prefix_solve", "squared hinge on limits of 1e200 (rescaled)",
             lambda: prefix_solve([1e200, 3e200], [2e200, 4e200], loss="squared"), "valid",
             check=lambda r: np.isclose(r.prediction[-1], 2.5e200) and np.isfinite(r.prediction).all()),
        Case("prefix_solve", "no intervals", lambda: prefix_solve([], []), "raises", "lower|upper"),
        Case("prefix_solve", "strings", lambda: prefix_solve(["a"], ["b"]), "raises", "lower|upper|numeric"),
    ]


CASES = [c for name, est in ESTIMATORS.items() for c in _x_cases(name, est) + _param_cases(name, est)]
CASES += _target_cases() + _scale_cases() + _nominal_cases() + _partition_cases() + _solver_cases()


def outcome_counts():
    """Cases per outcome (for the record: ``python -c "import test_bad_input_a as t; print(t.outcome_counts())"``)."""
    return Counter(c.outcome for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.entry}: {c.defect}" for c in CASES])
def test_bad_input(case):
    if case.outcome == "raises":
        with pytest.raises((ValueError, TypeError)) as info:
            case.call()
        assert re.search(case.names, str(info.value)), f"{case.entry}: {case.defect}: {info.value}"
        if "before fit" in case.defect:
            assert isinstance(info.value, NotFittedError)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # no overflow on the way
            result = case.call()
        assert case.check(result), f"{case.entry}: {case.defect}: unexpected result {result!r}"


@settings(max_examples=25)
@given(name=st.sampled_from(sorted(ESTIMATORS)), row=st.integers(0, 23), col=st.integers(0, 2),
       value=st.sampled_from([np.nan, np.inf, -np.inf]), at_predict=st.booleans())
def test_non_finite_X_is_refused_anywhere(name, row, col, value, at_predict):
    est = ESTIMATORS[name]
    y = _y_for(name)
    bad = _with(X, row, col, value)
    with pytest.raises(ValueError, match=r"\bX\b"):
        if at_predict:
            type(est)(**est.get_params()).fit(X, y).predict(bad)
        else:
            type(est)(**est.get_params()).fit(bad, y)


def test_ordinary_data_is_not_rescaled():
    """The overflow guards leave data of ordinary size untouched, so their results are the former ones."""
    assert np.all(L1LinearIntervalRegressor(penalty=0.1).fit(X * 1e100, Y_INT)._x_scale == 1.0)
    assert IntervalCARTRegressor().fit(X, Y_INT * 1e100).y_scale_ == 1.0
    a = prefix_solve(Y_INT[:, 0] * 1e100, Y_INT[:, 1] * 1e100, loss="squared")
    b = prefix_solve(Y_INT[:, 0], Y_INT[:, 1], loss="squared")
    assert np.allclose(a.prediction, b.prediction * 1e100) and np.allclose(a.cost, b.cost * 1e200)
    huge = L1LinearIntervalRegressor(penalty=0.1).fit(X * 1e307, Y_INT)
    assert np.all(huge._x_scale > 1.0) and np.isfinite(huge.mean_).all() and np.isfinite(huge.scale_).all()
