"""Data sets shipped in the repository's ``data/`` folder, verified by sha256 before use.

Each chapter's loaders live in a module of this package (``nominal``, ``mmit``,
``shape_trees``, ``ofae``); all of them read files through :func:`data_file`, which checks the
file against ``data/SHA256SUMS`` so that a missing or corrupted file fails loudly, naming it.
Nothing is ever downloaded.
"""

from ._core import DataError, data_dir, data_file, verify_all

__all__ = ["DataError", "data_dir", "data_file", "verify_all"]
