"""Resident memory of this process, for the benchmarks and the memory studies of the chapters.

Read from Linux's ``/proc/self/status``: ``VmRSS`` (now) and ``VmHWM`` (the peak of this process image:
unlike ``getrusage``'s ``ru_maxrss`` it is not inherited across ``fork``, so a forked point or worker
measures itself). Elsewhere the readings are NaN.
"""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["rss_mib", "peak_rss_mib", "reset_peak_rss"]

_STATUS = Path("/proc/self/status")


def _status_mib(field: str) -> float:
    try:
        text = _STATUS.read_text()
    except OSError:
        return math.nan
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0  # kB
    return math.nan


def rss_mib() -> float:
    """Resident memory of this process now, in MiB (NaN where ``/proc`` is unavailable)."""
    return _status_mib("VmRSS")


def peak_rss_mib() -> float:
    """Peak resident memory of this process image so far, in MiB (NaN where ``/proc`` is unavailable)."""
    return _status_mib("VmHWM")


def reset_peak_rss() -> bool:
    """Reset the peak (``VmHWM``) to the current resident memory; False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True
