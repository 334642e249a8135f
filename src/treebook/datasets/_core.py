"""Locating and verifying the shipped data files."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

__all__ = ["DataError", "data_dir", "data_file", "verify_all"]

_ENV = "TREEBOOK_DATA"


class DataError(FileNotFoundError):
    """A shipped data file is missing, unknown or does not match its checksum."""


def data_dir() -> Path:
    """The ``data/`` folder: ``$TREEBOOK_DATA`` if set, else the one beside ``src/`` in the checkout."""
    env = os.environ.get(_ENV)
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "data" / "SHA256SUMS").is_file():
            return parent / "data"
    cwd = Path.cwd()
    for parent in (cwd, *cwd.parents):
        if (parent / "data" / "SHA256SUMS").is_file():
            return parent / "data"
    raise DataError(f"cannot find the data/ folder (with SHA256SUMS); set {_ENV} to its path")


@cache
def _checksums(root: str) -> dict[str, str]:
    sums = {}
    for line in (Path(root) / "SHA256SUMS").read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            sums[name.strip().removeprefix("./")] = digest
    return sums


@cache
def _sha256(path: str, mtime: float, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def data_file(chapter: str, filename: str) -> Path:
    """Path of ``data/<chapter>/<filename>`` after checking its sha256 against ``data/SHA256SUMS``.

    Raises
    ------
    DataError
        If the file is not listed, is missing, or its content does not match the checksum.
    """
    root = data_dir()
    rel = f"{chapter}/{filename}"
    sums = _checksums(str(root))
    if rel not in sums:
        raise DataError(f"data file {rel!r} is not listed in {root / 'SHA256SUMS'}")
    path = root / rel
    if not path.is_file():
        raise DataError(f"data file {path} is missing (restore it from the repository)")
    st = path.stat()
    digest = _sha256(str(path), st.st_mtime, st.st_size)
    if digest != sums[rel]:
        raise DataError(f"data file {path} is corrupted: sha256 {digest[:16]}... does not match "
                        f"the recorded {sums[rel][:16]}...")
    return path


def verify_all() -> list[str]:
    """Verify every listed file; return the list of relative paths checked."""
    root = data_dir()
    names = sorted(_checksums(str(root)))
    for rel in names:
        chapter, filename = rel.split("/", 1)
        data_file(chapter, filename)
    return names
