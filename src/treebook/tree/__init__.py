"""The tree core: one array-based binary tree, pluggable split kinds and criteria, a greedy grower.

Every chapter's trees are :class:`Tree` objects; they differ in what a node tests (a
:class:`Split` subclass) and in what a leaf predicts and costs.
"""

from . import criteria
from .cart import BaseTree, CARTClassifier, CARTRegressor
from .compare import compare_with_sklearn
from .export import export_text, plot_tree
from .grow import FEATURE_THRESHOLD, Candidate, best_threshold_split, grow_tree
from .splits import HyperplaneSplit, ShapeSplit, Split, SubsetSplit, ThresholdSplit
from .structure import LEAF, Tree, TreeBuilder

__all__ = [
    "BaseTree", "CARTClassifier", "CARTRegressor", "Candidate", "FEATURE_THRESHOLD", "HyperplaneSplit",
    "LEAF", "ShapeSplit", "Split", "SubsetSplit", "ThresholdSplit", "Tree", "TreeBuilder",
    "best_threshold_split", "compare_with_sklearn", "criteria", "export_text", "grow_tree", "plot_tree",
]
