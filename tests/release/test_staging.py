"""A release is written into a staging sibling and renamed into place
(release/files.py). The staging directories are named with the writer's PID
and locked (common/scratch.py), so those a SIGKILLed build left are removed
by the next write of the same release, and only those."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from trunchbull.release.files import ReleaseFiles

FILES = {"release.json": b"{}\n", "evals/a.json": b"[1]\n"}
GONE = 999999999  # above any PID Linux gives (2^22)


def siblings(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name != "release")


def read_only_tree(path: Path) -> None:
    (path / "evals").mkdir(parents=True)
    (path / "evals" / "a.json").write_bytes(b"[0]\n")
    for p in (path / "evals" / "a.json", path / "evals", path):
        p.chmod(0o444 if p.is_file() else 0o555)


def test_the_next_write_removes_what_a_killed_one_left_and_only_that(tmp_path):
    parent = tmp_path / "dist"
    out = parent / "release"
    ReleaseFiles(dict(FILES)).write(out)
    assert siblings(parent) == []  # nothing beside the release once it is in place

    read_only_tree(parent / f".release.{GONE}-abcd1234")  # a staging killed while being filled
    (parent / f".release.{GONE}-abcd1234.lock").write_bytes(b"")
    (parent / f".release.old.{GONE}-efgh5678.lock").write_bytes(b"")  # killed between its two removals
    live = parent / f".release.{os.getpid()}-live0001"  # a write still going on, in this process
    live.mkdir()
    hidden = parent / f".release.old.{GONE}-hidden01"  # a PID not visible here, its lock held
    hidden.mkdir()
    fd = os.open(parent / (hidden.name + ".lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    other = parent / f".other.{GONE}-abcd1234"  # another release's: not this one's to remove
    other.mkdir()
    try:
        ReleaseFiles({**FILES, "evals/a.json": b"[2]\n"}).write(out)
    finally:
        os.close(fd)
    assert (out / "evals" / "a.json").read_bytes() == b"[2]\n"
    assert siblings(parent) == sorted([live.name, hidden.name, hidden.name + ".lock", other.name])
