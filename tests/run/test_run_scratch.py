"""A run's scratch directory (common/scratch.py, common/lifetime.py) is
removed on every way out: SIGINT while samples are in flight, and, after a
SIGKILL, by the next command that makes one. The run is held in flight by
the server (its replies wait for the test), not by timing."""

from __future__ import annotations

import fcntl
import os
import signal
import threading
from pathlib import Path

from tests.run.conftest import kill_group, start_cli, wait_until
from tests.run.test_run_records import args_for
from tests.support.chat_server import ChatServer, Reply

HELD = "[plain-four]"


def entries(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("trunchbull-"))


def start_held_run(release, server, out, cache_dir, tmp):
    proc = start_cli(*args_for(release, server, out, "--eval", "plain"), cache=cache_dir, env={"TMPDIR": str(tmp)})
    wait_until(lambda: len(server.received(HELD)) == 1, "the run's held request")
    return proc


def test_sigint_removes_the_scratch_directory(built, cache_dir, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    gate = threading.Event()
    with ChatServer() as server:
        server.script(HELD, [Reply(content="echo", hold=gate)])
        try:
            proc = start_held_run(built("agent"), server, tmp_path / "run", cache_dir, tmp)
            names = entries(tmp)
            prefix = f"trunchbull-run-{proc.pid}-"
            assert len(names) == 2 and names[0].startswith(prefix) and names[1] == names[0] + ".lock", names
            assert (tmp / names[0]).is_dir()
            os.killpg(proc.pid, signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            gate.set()
    assert proc.returncode == 130, stderr
    assert entries(tmp) == []


def test_the_next_run_removes_what_a_sigkilled_one_left_and_only_that(built, cli, cache_dir, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    gate = threading.Event()
    with ChatServer() as server:
        server.script(HELD, [Reply(content="echo", hold=gate)])
        try:
            proc = start_held_run(built("agent"), server, tmp_path / "killed", cache_dir, tmp)
            kill_group(proc)
        finally:
            gate.set()
    left = entries(tmp)
    assert len(left) == 2 and left[0].startswith(f"trunchbull-run-{proc.pid}-"), left  # a SIGKILL leaves them

    # a live process's directory, and one whose PID is not visible here but whose lock is held
    # (a process in another PID namespace sharing this directory): both are kept
    alive = tmp / f"trunchbull-run-{os.getpid()}-live0001"
    alive.mkdir()
    hidden = tmp / "trunchbull-grade-999999999-hidden01"  # above any PID Linux gives (2^22)
    hidden.mkdir()
    fd = os.open(tmp / (hidden.name + ".lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        run = cli("run", built("agent"), "--model", "echo", "-o", tmp_path / "next", env={"TMPDIR": str(tmp)})
        assert run.code in (0, 1), run.stderr
        assert entries(tmp) == sorted([alive.name, hidden.name, hidden.name + ".lock"])
    finally:
        os.close(fd)
    # the lock let go (its holder gone): the next command removes that one too
    run = cli("run", built("agent"), "--model", "echo", "-o", tmp_path / "third", env={"TMPDIR": str(tmp)})
    assert run.code in (0, 1), run.stderr
    assert entries(tmp) == [alive.name]
