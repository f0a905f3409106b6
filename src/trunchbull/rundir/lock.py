"""One writer per run directory (SPEC §8.4): `run`, `run --resume` and
`grade --run-dir` hold an exclusive `flock` on RUN_DIR/.lock for as long as
they write there; a second one is a usage error naming the holder's PID.

The kernel releases a flock when its holder dies, however it dies, so a lock
left by a SIGKILLed run never blocks a resume: the file may remain, the lock
does not. The holder removes the file before it lets go; a process that
locked a file which was meanwhile removed (or replaced) tries again on the
file now at the path, so two processes never hold locks on two different
files of the same directory."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from trunchbull.common.diagnostics import UsageError
from trunchbull.rundir.layout import LOCK

PID_WAIT_S = 0.5  # how long a refused process waits for the holder to write its PID


@contextmanager
def run_dir_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run directory's lock for the block, making the directory
    (and its missing parents) first; those made here are removed again if
    the block leaves them empty (a usage error found later writes nothing)."""
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"{run_dir} exists and is not a directory")
    made = _make_dirs(run_dir)
    try:
        fd = _acquire(run_dir / LOCK, run_dir)
    except BaseException:
        _remove_empty(made)
        raise
    try:
        yield
    finally:
        try:
            os.unlink(run_dir / LOCK)  # while still holding it: see the module's docstring
        except OSError:
            pass
        os.close(fd)
        _remove_empty(made)


def _make_dirs(run_dir: Path) -> list[Path]:
    """Make `run_dir` and its missing parents; the ones made, deepest first."""
    missing = []
    path = run_dir.absolute()
    while not path.exists():
        missing.append(path)
        path = path.parent
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot make the run directory {run_dir}: {err.strerror or err}") from None
    return missing


def _remove_empty(made: list[Path]) -> None:
    for path in made:
        try:
            path.rmdir()
        except OSError:  # not empty (the run wrote there), or gone
            return


def _acquire(path: Path, run_dir: Path) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as err:
            raise UsageError(f"cannot lock the run directory {run_dir}: {err.strerror or err}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            holder = _holder(fd)
            os.close(fd)
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise UsageError(f"cannot lock the run directory {run_dir}: {err.strerror or err}") from None
            raise UsageError(_in_use(run_dir, holder)) from None
        if _same_file(fd, path):
            break
        os.close(fd)  # the holder removed it as we locked it: lock the one there now
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _same_file(fd: int, path: Path) -> bool:
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


def _holder(fd: int) -> int | None:
    """The PID the holder wrote (it writes it just after locking)."""
    deadline = time.monotonic() + PID_WAIT_S
    while True:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return int(text)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def _in_use(run_dir: Path, holder: int | None) -> str:
    who = f"another trunchbull (PID {holder})" if holder is not None else "another trunchbull"
    return (
        f"{run_dir} is in use: {who} is writing to it, and one process at a time writes to a run "
        "directory. Wait for it to finish (or stop it), then run again; a run stopped by a signal "
        "or killed is continued with --resume"
    )
