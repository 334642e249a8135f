"""Shape generalized trees: ShapeCART (greedy) and Literati (anytime optimal AO* search)."""

from .candidates import all_candidates, best_shape_1d, cart_candidates, interval_counts
from .exhaustive import exhaustive_optimum
from .literati import DEFAULT_CART_LEAVES, LiteratiClassifier, LiteratiSearch, spec_objective, spec_to_tree
from .shapecart import ShapeCARTClassifier, shape_coordinate_descent

__all__ = [
    "DEFAULT_CART_LEAVES", "LiteratiClassifier", "LiteratiSearch", "ShapeCARTClassifier", "all_candidates", "best_shape_1d",
    "cart_candidates", "exhaustive_optimum", "interval_counts", "shape_coordinate_descent", "spec_objective",
    "spec_to_tree",
]
