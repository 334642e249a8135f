"""Chapter 4: oblique forest autoencoders (OF-AE) and the eForest baseline.

* :class:`ObliqueForestEmbedding` — unsupervised bagged HHCART / RandCART forest; ``transform`` gives leaf
  ids, ``inverse_transform`` solves the l1 decoding LP per sample.
* :class:`EForestEmbedding` — axis-parallel unsupervised forest decoded by the Maximum Compatibility Rule.
* :class:`HHCARTRegressor`, :class:`RandCARTRegressor` — the single oblique regression trees.
* :func:`ssim_images` (ours) and :func:`ssim_authors` (the OF-AE authors' definition), :func:`off_ink_share`,
  :func:`mse_rows` — the reconstruction measures.
"""

from treebook.oblique.decode import (
    InfeasibleCodeWarning,
    decode_forest,
    l1_decode_cvxpy,
    l1_decode_highs,
    l1_decode_pulp,
)
from treebook.oblique.eforest import EForestEmbedding, mcr_bounds
from treebook.oblique.forest import HHCARTRegressor, ObliqueForestEmbedding, RandCARTRegressor
from treebook.oblique.grow import DIRECTIONS, grow_oblique_tree, node_direction, random_rotation
from treebook.oblique.metrics import (
    mse_rows,
    off_ink_share,
    pca_reconstruct,
    skimage019_data_range,
    ssim_authors,
    ssim_images,
)
from treebook.oblique.splits import SPLIT_RULES, ObliqueSplit

__all__ = [
    "DIRECTIONS", "EForestEmbedding", "InfeasibleCodeWarning", "HHCARTRegressor", "ObliqueForestEmbedding",
    "ObliqueSplit", "RandCARTRegressor", "SPLIT_RULES", "decode_forest", "grow_oblique_tree", "l1_decode_cvxpy",
    "l1_decode_highs", "l1_decode_pulp", "mcr_bounds", "mse_rows", "node_direction", "off_ink_share", "pca_reconstruct",
    "random_rotation", "skimage019_data_range", "ssim_authors", "ssim_images",
]
