"""Scratch directories that never outlive their process for long.

lifetime.py removes a command's scratch directories on every way out it
sees (a return, an exception, SIGINT, SIGTERM); a SIGKILL leaves them. So each
is named with its process's PID (`trunchbull-run-<pid>-<random>`) and has a
lock file beside it (`….lock`, an flock held for the directory's life), and
making one first removes those of processes that are gone: the PID no longer
runs, and nobody holds the lock (the kernel drops it with its holder, which
also covers a process whose PID this one cannot see, in another PID
namespace sharing the same /tmp). Only this user's are touched."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from pathlib import Path

# the prefixes lifetime.scratch_dir gives (`trunchbull-run-`, `trunchbull-grade-`, …), as a pattern
SCRATCH = r"trunchbull-[a-z-]+?-"


def _names(prefixes: str) -> re.Pattern[str]:
    """What make() names: a prefix, the PID, mkdtemp's random part (and `.lock`, the lock file)."""
    return re.compile(rf"^(?:{prefixes})(\d+)-[A-Za-z0-9_]+(\.lock)?$")


def make(prefix: str, parent: Path | None, stale: str = SCRATCH) -> tuple[Path, int]:
    """A new scratch directory and the descriptor holding its lock, after
    removing the stale ones in the same place whose prefix matches `stale`."""
    where = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    remove_stale(where, stale)
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=where))
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a new file: nobody else holds it
    return path, fd


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def release(path: Path, fd: int | None, remove: bool = True) -> None:
    """Remove the directory (unless it was renamed into place: not `remove`),
    then its lock file, then let go of the lock."""
    if remove:
        remove_tree(path)
    try:
        os.unlink(lock_path(path))
    except OSError:
        pass
    if fd is not None:
        os.close(fd)


def remove_tree(path: Path) -> None:
    """Remove a tree, read-only parts included (a release being staged is 0o555)."""
    for directory, _, _ in os.walk(path):
        try:
            if not os.lstat(directory).st_mode & 0o200:
                os.chmod(directory, 0o700)
        except OSError:
            pass

    def writable(func, target, _exc):
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=writable)


def remove_stale(where: Path, stale: str = SCRATCH) -> None:
    names = _names(stale)
    uid = os.getuid()
    try:
        entries = list(os.scandir(where))
    except OSError:
        return
    for entry in entries:
        match = names.match(entry.name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        if _runs(int(match.group(1))):
            continue
        path = Path(entry.path)
        if match.group(2):  # a lock file whose directory is gone already
            if not path.with_name(entry.name[: -len(".lock")]).exists():
                _remove_if_unheld(path, None)
        elif entry.is_dir(follow_symlinks=False):
            _remove_if_unheld(lock_path(path), path)


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove_if_unheld(lock: Path, directory: Path | None) -> None:
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        fd = None  # made before its lock file, or by a version without one: the PID alone decides
    except OSError:
        return
    try:
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return  # held: its process runs, out of this one's sight
        if directory is not None:
            remove_tree(directory)
        if fd is not None:
            os.unlink(lock)
    except OSError:
        pass
    finally:
        if fd is not None:
            os.close(fd)
