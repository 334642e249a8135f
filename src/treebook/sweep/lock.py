"""The lock a running sweep holds on its output folder."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

#: the lock file a running sweep holds in its output folder
LOCK_NAME = "sweep.lock"


class SweepLockError(RuntimeError):
    """Another sweep holds the lock on the output folder."""


class _FolderLock:
    """An exclusive ``flock`` on ``<out>/sweep.lock`` holding the owner's pid, host and start time.

    The kernel drops the lock when its holder exits, however it exits, so the lock of a sweep that was
    killed is free: the next sweep takes it over (and reports whose it was).
    """

    def __init__(self, folder: Path):
        self.path = folder / LOCK_NAME
        self.fd: int | None = None

    def acquire(self, log) -> None:
        import fcntl

        for _ in range(20):  # only a lock released and removed between our open and flock makes us retry
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _lock_holder(fd)
                os.close(fd)
                raise SweepLockError(
                    f"another sweep is writing to {self.path.parent}: it holds the lock {self.path} "
                    f"({holder}); wait for it to finish or use another output folder") from None
            except OSError as exc:  # a file system without locks
                os.close(fd)
                log(f"cannot lock {self.path} ({exc}); running without a lock: run one sweep at a time here")
                return
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the holder removed the file as we opened it: lock the new one
                os.close(fd)
                continue
            previous = _lock_info(fd)
            if previous.get("pid") is not None:
                log(f"took over the lock {self.path} left by a sweep that no longer runs ({_describe(previous)})")
            info = {"pid": os.getpid(), "host": socket.gethostname(),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
            os.fsync(fd)
            self.fd = fd
            return
        raise SweepLockError(f"cannot take the lock {self.path}: it keeps being replaced")

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # removed while still held: a waiting opener sees it is gone
        finally:
            os.close(self.fd)
            self.fd = None


def _lock_info(fd: int) -> dict:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _describe(info: dict) -> str:
    return f"pid {info.get('pid')} on {info.get('host')}, started {info.get('started')}"


def _lock_holder(fd: int) -> str:
    info = _lock_info(fd)
    if info.get("pid") is None:
        return "pid not yet written: it is starting"
    text = _describe(info)
    if info.get("host") == socket.gethostname() and not _alive(info["pid"]):
        text += "; that process has exited, but a process it started still holds the lock"
    return text


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError, OverflowError):
        return True
    return True

