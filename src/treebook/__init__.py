"""treebook: four papers on decision-tree learning, derived, implemented and reproduced.

Subpackages
-----------
tree      the tree core (nodes, split kinds, criteria, greedy growth, CART)
nominal   chapter 1: binary partitions of nominal attributes (Laber, Molinaro & Pereira 2018)
interval  chapter 2: maximum margin interval trees (Drouin, Hocking & Laviolette 2017)
shape     chapter 3: shape generalized trees and Literati's AO* search
oblique   chapter 4: oblique forest autoencoders (OF-AE) and eForest
datasets  loaders of the data shipped in ``data/`` (checksummed)
results   the JSON records notebooks write; notebooks / sweep: running notebooks and sweeps
"""

__version__ = "0.1.0"
