"""scikit-learn's estimator checks on the chapter 3 and 4 estimators, with the smallest settings.

Every check of ``parametrize_with_checks`` runs; a check that cannot apply to an estimator would be
listed in ``WAIVED`` with its reason (scikit-learn's expected-failure mechanism, strict: a waived check
that passes fails the test). None is needed: the leaf-id codes of the embeddings are integers whatever
the input dtype, which their tags state (``preserves_dtype = []``), so the dtype-preservation check
does not apply to them.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from treebook.oblique import EForestEmbedding, HHCARTRegressor, ObliqueForestEmbedding, RandCARTRegressor
from treebook.shape import ShapeCARTClassifier

ESTIMATORS = [
    HHCARTRegressor(max_depth=2),
    HHCARTRegressor(direction="grp", max_depth=2, split_rule="best", householder="largest"),
    RandCARTRegressor(max_depth=4),
    RandCARTRegressor(max_depth=3, rotation="per_tree", split_rule="best"),
    ObliqueForestEmbedding(n_estimators=3, max_depth=2),
    ObliqueForestEmbedding(tree="randcart", n_estimators=2, max_depth=2, max_features=0.5),
    ObliqueForestEmbedding(n_estimators=2, max_depth=2, split_rule="best", target="per_tree",
                           householder="largest"),
    EForestEmbedding(n_estimators=3, max_depth=2),
    EForestEmbedding(tree="axis", n_estimators=2, max_depth=2, point="l1"),
    EForestEmbedding(n_estimators=2, max_depth=2, point="mid", target="per_tree"),
    ShapeCARTClassifier(max_depth=2, n_intervals=4),
]

#: estimator class name -> {check name: reason}; empty: every check applies and passes
WAIVED: dict[str, dict[str, str]] = {}


def waived_checks(estimator):
    return WAIVED.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=waived_checks, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_every_parameter_is_declared_and_validated(estimator):
    # every constructor parameter has a constraint, and a value of the wrong type is refused at fit
    check_param_validation(type(estimator).__name__, estimator)


def test_eforest_params_are_complete_and_survive_clone():
    e = EForestEmbedding(n_estimators=2, max_depth=2, margin=0.25, split_rule="mean", tree="axis")
    assert {"margin", "split_rule"} <= set(e.get_params())
    assert not {"direction", "solver", "n_jobs", "rotation", "householder"} & set(e.get_params())  # MCR: none
    c = clone(e.set_params(margin=0.5))
    assert c.get_params()["margin"] == 0.5 and c.get_params()["split_rule"] == "mean"
    X = np.random.default_rng(0).normal(size=(20, 3))
    info = c.fit(X).inverse_transform(c.transform(X[:2]), return_info=True)[1]
    assert info["lower"].shape == info["upper"].shape == (2, 3)
    with pytest.raises(ValueError, match="direction"):
        e.set_params(direction="pca")


def test_margin_of_eforest_moves_the_mcr_box():
    X = np.random.default_rng(1).normal(size=(30, 3))
    a = EForestEmbedding(n_estimators=3, max_depth=3, margin=0.0, random_state=0).fit(X)
    b = clone(a).set_params(margin=0.1).fit(X)
    codes = a.transform(X[:5])
    la = a.inverse_transform(codes, return_info=True)[1]["lower"]
    lb = b.inverse_transform(codes, return_info=True)[1]["lower"]
    finite = np.isfinite(la)
    assert finite.any() and np.all(lb[finite] > la[finite])
