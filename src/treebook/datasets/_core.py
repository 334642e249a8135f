"""Locating and verifying the shipped data files."""

from __future__ import annotations

import hashlib
import os
import time
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


_HEX = frozenset("0123456789abcdef")

#: a file changed less than this long (ns) before it was hashed is hashed again on its next use: its
#: time stamps may not show a write made in the same clock tick as the hash
_RECENT_NS = 2_000_000_000

#: ``path -> (stat key, sha256)`` of the files hashed in this process
_HASHES: dict[str, tuple[tuple, str]] = {}


def _checksums(root: str) -> dict[str, str]:
    """``{chapter/file: sha256}`` from ``root/SHA256SUMS`` (read anew each time: it is small).

    Each line is ``<64 hex digits> <name>`` (``sha256sum``'s format, text or binary mode); a line that is
    not raises :class:`DataError` with its number.
    """
    path = Path(root) / "SHA256SUMS"
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise DataError(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path} cannot be read: {exc}") from None
    sums: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        digest = parts[0].lower()
        name = parts[1].strip().removeprefix("*").removeprefix("./") if len(parts) == 2 else ""
        if len(digest) != 64 or not set(digest) <= _HEX or not name:
            raise DataError(f"{path}, line {number}: malformed line {line[:120]!r} "
                            f"(expected a 64-digit hex sha256, spaces, then the file's path)")
        if sums.get(name, digest) != digest:
            raise DataError(f"{path}, line {number}: {name} is listed again with another checksum")
        sums[name] = digest
    return sums


def _stat_key(st: os.stat_result) -> tuple:
    # ctime changes with every write and every change of mtime, and cannot be set back
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _hash_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _sha256(path: str) -> str:
    """sha256 of ``path``, from this process's cache while the file's device, inode, size, mtime and ctime
    are those it had when it was hashed; a file changed shortly before or while it was hashed is not
    cached (hashed again next time)."""
    before = os.stat(path)
    key = _stat_key(before)
    hit = _HASHES.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    _HASHES.pop(path, None)
    started = time.time_ns()
    digest = _hash_file(path)
    settled = max(before.st_mtime_ns, before.st_ctime_ns) < started - _RECENT_NS
    if settled and _stat_key(os.stat(path)) == key:
        _HASHES[path] = (key, digest)
    return digest


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
    digest = _sha256(str(path))
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
