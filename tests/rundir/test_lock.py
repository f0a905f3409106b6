"""The run directory's lock (rundir/lock.py) in one process: a flock on an
open file conflicts with another open of the same file, so a second holder in
the same process is refused as another process would be."""

from __future__ import annotations

import os

import pytest

from trunchbull.common.diagnostics import UsageError
from trunchbull.rundir.layout import LOCK, is_non_empty_dir
from trunchbull.rundir.lock import run_dir_lock


def test_a_second_holder_is_refused_naming_the_first_ones_pid(tmp_path):
    run_dir = tmp_path / "runs" / "a"
    with run_dir_lock(run_dir):
        assert (run_dir / LOCK).read_text() == f"{os.getpid()}\n"
        assert not is_non_empty_dir(run_dir)  # the lock is not part of the run
        with pytest.raises(UsageError, match=rf"is in use: another trunchbull \(PID {os.getpid()}\)"):
            with run_dir_lock(run_dir):
                pass
        (run_dir / "run.json").write_text("{}")
    assert [p.name for p in run_dir.iterdir()] == ["run.json"]  # the lock file goes with the lock
    with run_dir_lock(run_dir):  # free again
        pass


def test_directories_made_for_the_lock_are_removed_when_left_empty(tmp_path):
    run_dir = tmp_path / "runs" / "a" / "b"
    with pytest.raises(UsageError, match="later"):
        with run_dir_lock(run_dir):
            assert run_dir.is_dir()
            raise UsageError("a usage error found later")
    assert list(tmp_path.iterdir()) == []
    existing = tmp_path / "kept"
    existing.mkdir()
    with run_dir_lock(existing):
        pass
    assert existing.is_dir() and list(existing.iterdir()) == []


def test_a_lock_file_left_behind_does_not_block(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / LOCK).write_text("999999999\n")  # a holder that died (its flock died with it)
    with run_dir_lock(run_dir):
        assert (run_dir / LOCK).read_text() == f"{os.getpid()}\n"


def test_a_file_in_the_way_is_a_usage_error(tmp_path):
    path = tmp_path / "run"
    path.write_text("not a directory")
    with pytest.raises(UsageError, match="exists and is not a directory"):
        with run_dir_lock(path):
            pass
