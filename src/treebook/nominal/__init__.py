"""Binary partitions of nominal attributes with approximate minimum impurity (Laber, Molinaro & Pereira, 2018)."""

from treebook.nominal.impurity import (
    IMPURITIES,
    partition_impurity,
    split_directions_impurity,
    weighted_impurity,
)
from treebook.nominal.partitions import (
    MAX_EXHAUSTIVE_VALUES,
    METHODS,
    WIN_RTOL,
    Partition,
    a_d,
    at_least_as_good,
    b_d,
    best_partition,
    candidate_count,
    check_table,
    collapse,
    hypercube_directions,
    most_balanced_direction,
    theorem_3_2_bound,
)
from treebook.nominal.tree import AUTHORS_TREE_RULES, NominalTreeClassifier

__all__ = [
    "AUTHORS_TREE_RULES",
    "IMPURITIES",
    "MAX_EXHAUSTIVE_VALUES",
    "METHODS",
    "NominalTreeClassifier",
    "WIN_RTOL",
    "Partition",
    "a_d",
    "at_least_as_good",
    "b_d",
    "best_partition",
    "candidate_count",
    "check_table",
    "collapse",
    "hypercube_directions",
    "most_balanced_direction",
    "partition_impurity",
    "split_directions_impurity",
    "theorem_3_2_bound",
    "weighted_impurity",
]
