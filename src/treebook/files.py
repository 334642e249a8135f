"""Files of the checkout: where it is (:func:`project_root`) and how records are written
(:func:`write_atomic`). Shared by the records, the notebook runner and the sweeps."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["project_root", "write_atomic"]


def project_root() -> Path:
    """The checkout's root (the folder holding ``_toc.yml`` and ``notebooks/``)."""
    here = Path(__file__).resolve()
    for parent in (*here.parents, Path.cwd(), *Path.cwd().parents):
        if (parent / "_toc.yml").is_file() and (parent / "notebooks").is_dir():
            return parent
    raise FileNotFoundError("cannot find the treebook checkout (a folder with _toc.yml and notebooks/)")


def write_atomic(path, data) -> None:
    """Write ``data`` (text or bytes) to ``path`` so that readers see the old file or the whole new one.

    The content goes to a temporary file in the same folder, is flushed to disk, and replaces ``path``
    in one rename; a failure (or a kill) before the rename leaves ``path`` as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = data.encode() if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
