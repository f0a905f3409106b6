"""Files a benchmark (or a command line) names: probed and read so that
nothing can block or escape as an OS error.

Only regular files are ever opened. Opening a named pipe with no writer
blocks forever and a device can be read without end, so a file is opened
with O_NONBLOCK (which makes even a FIFO open return at once) and checked
with fstat before a byte is read: there is no window between the check and
the read. Every OS error (a name too long, a symlink loop, a permission,
too many open files, a file that vanished) becomes a FileProblem: a
sentence about the path and whether it is the benchmark's fault (exit 1) or
the environment's (unreadable: exit 2, SPEC §3.9)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

# Linux limits: PATH_MAX counts the terminating NUL, NAME_MAX one component.
PATH_MAX_BYTES = 4095
NAME_MAX_BYTES = 255

MISSING, NOT_REGULAR, INVALID, UNREADABLE = "missing", "not-regular", "invalid", "unreadable"
UNREADABLE_CODE = "path-unreadable"  # the diagnostic of an unreadable path; the CLI exits 2 for it
NOT_REGULAR_CODE = "not-regular-file"  # a file found (discovered, imported, beside the config) that is not regular


@dataclass(frozen=True)
class FileProblem(Exception):
    """Why a path cannot be read as a file: `kind` is one of MISSING,
    NOT_REGULAR, INVALID (a name no file can have) or UNREADABLE; `reason`
    completes a sentence about the path ("is a named pipe (FIFO), not a
    regular file")."""

    kind: str
    reason: str

    def __str__(self) -> str:
        return self.reason


def name_problem(text: str) -> str | None:
    """Why `text` cannot name a file at all (checked before touching the disk)."""
    if "\0" in text:
        return "contains a NUL character"
    try:
        encoded = os.fsencode(text)
    except UnicodeError:
        return "is not valid Unicode text"
    if len(encoded) > PATH_MAX_BYTES:
        return f"is too long for a path ({len(encoded):,} bytes; the limit is {PATH_MAX_BYTES:,})"
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > NAME_MAX_BYTES:
        return f"has a file name too long for the file system ({len(longest):,} bytes; the limit is {NAME_MAX_BYTES})"
    return None


def kind_name(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _not_regular(mode: int) -> FileProblem:
    what = kind_name(mode)
    return FileProblem(
        NOT_REGULAR, f"is {what}, not a regular file" if what.startswith("a ") else "is not a regular file"
    )


def os_problem(err: OSError | ValueError) -> FileProblem:
    """The FileProblem of an OS error raised for a path."""
    if isinstance(err, ValueError):  # an embedded NUL
        return FileProblem(INVALID, "contains a NUL character")
    code = err.errno
    if code == errno.ENOENT:
        return FileProblem(MISSING, "does not exist")
    if code == errno.ENOTDIR:
        return FileProblem(MISSING, "does not exist (a part of the path is a file, not a directory)")
    if code == errno.EISDIR:
        return FileProblem(NOT_REGULAR, "is a directory, not a regular file")
    if code == errno.ELOOP:
        return FileProblem(INVALID, "is a symlink loop (too many levels of symbolic links)")
    if code == errno.ENAMETOOLONG:
        return FileProblem(INVALID, "is too long for the file system")
    if code in (errno.EACCES, errno.EPERM):
        return FileProblem(UNREADABLE, "cannot be read: permission denied")
    if code in (errno.EMFILE, errno.ENFILE):
        return FileProblem(UNREADABLE, "cannot be opened: too many open files")
    return FileProblem(UNREADABLE, f"cannot be read: {err.strerror or err}")


def probe(path: Path | str) -> tuple[os.stat_result | None, FileProblem | None]:
    """stat (following symlinks) without opening: the result when `path` is
    a regular file, else why it is not one."""
    text = os.fspath(path)
    problem = name_problem(text)
    if problem:
        return None, FileProblem(INVALID, problem)
    try:
        result = os.stat(text)
    except (OSError, ValueError) as err:
        return None, os_problem(err)
    if not stat.S_ISREG(result.st_mode):
        return None, _not_regular(result.st_mode)
    return result, None


def exists(path: Path | str) -> bool:
    """Whether anything is at `path` (lstat), never raising."""
    try:
        os.lstat(path)
        return True
    except (OSError, ValueError):
        return False


def real_path(path: Path) -> Path:
    """The path with symlinks resolved as far as they go (a loop or an
    unreadable part stops there), never raising."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.abspath(path))


def open_file(path: Path | str) -> BinaryIO:
    """The regular file at `path`, open for reading (raises FileProblem)."""
    text = os.fspath(path)
    _, problem = probe(text)  # a device is not even opened (opening some has effects)
    if problem:
        raise problem
    try:
        fd = os.open(text, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError) as err:
        raise os_problem(err) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_file(path: Path | str) -> bytes:
    """The bytes of the regular file at `path` (raises FileProblem)."""
    with open_file(path) as handle:
        try:
            return handle.read()
        except OSError as err:
            raise os_problem(err) from None


def display(text: str, limit: int = 120) -> str:
    """A user-supplied path or name for a message: quoted, any byte that is
    not UTF-8 shown escaped, and cut when very long."""
    try:
        text = os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > limit:
        return repr(text[:limit]) + f"… ({len(text):,} characters)"
    return repr(text)


def printable(text: str) -> str:
    """`text` with bytes that are not UTF-8 escaped (for diagnostics' file fields)."""
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
