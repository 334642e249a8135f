"""The tree core: one array-based binary tree, pluggable split kinds and criteria, one greedy growth loop
with a pluggable splitter,
weakest-link pruning.

Every chapter's trees are :class:`Tree` objects; they differ in what a node tests (a
:class:`Split` subclass) and in what a leaf predicts and costs.
"""

from . import criteria, prune
from .cart import BaseTree, CARTClassifier, CARTRegressor, ccp_node_costs
from .compare import compare_with_sklearn
from .export import export_text, plot_tree
from .grow import FEATURE_THRESHOLD, Candidate, NodeSplitter, Splitter, best_threshold_split, grow, grow_tree
from .prune import (
    PruningPath,
    check_ccp_alpha,
    collapse_alphas,
    node_costs,
    prune_tree,
    pruning_alphas,
    pruning_path,
)
from .splits import HyperplaneSplit, ShapeSplit, Split, SubsetSplit, ThresholdSplit
from .structure import LEAF, Tree, TreeBuilder

__all__ = [
    "BaseTree", "CARTClassifier", "CARTRegressor", "Candidate", "FEATURE_THRESHOLD", "HyperplaneSplit",
    "LEAF", "NodeSplitter", "PruningPath", "ShapeSplit", "Split", "Splitter", "SubsetSplit", "ThresholdSplit", "Tree", "TreeBuilder",
    "best_threshold_split", "ccp_node_costs", "check_ccp_alpha", "collapse_alphas",
    "compare_with_sklearn", "criteria", "export_text", "grow", "grow_tree", "node_costs", "plot_tree", "prune",
    "prune_tree", "pruning_alphas", "pruning_path",
]
