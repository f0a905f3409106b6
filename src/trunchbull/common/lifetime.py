"""Nothing a command starts outlives it: every child process and scratch
directory is registered here, and shutdown() (run by the CLI before it
returns, also after SIGINT/SIGTERM) ends and reaps every child and removes
every scratch directory.

Each child leads its own process group, so one signal reaches whatever it
started (the Node helper's esbuild service). Most children are stopped with
SIGKILL: their answers are in by then, and a killed process costs nothing to
tear down. A child spawned `graceful` (the helper) is instead let to exit by
itself once its input ends, so that it can stop and wait for its own
children; it is sent SIGTERM when the command is interrupted, and SIGKILL if
it has not exited after a grace period."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from trunchbull.common import scratch

GRACE_S = 5.0  # how long a graceful child may take to exit at shutdown

_lock = threading.RLock()  # re-entrant: the signal handler runs on the main thread, which may hold it
_children: list[subprocess.Popen] = []
_graceful: set[int] = set()  # pids of children that exit by themselves
_shared_group: set[int] = set()  # pids of children left in the CLI's own process group
_reaps_child: set[int] = set()  # pids of children that wait for one inner process (see stop())
REAP_S = 1.0
_scratch: dict[Path, int] = {}  # scratch directory → the descriptor holding its lock
_interrupted: list[int] = []  # the signal that interrupted the command, if any
_deferring: list[bool] = []  # blocks that a signal must not cut in two (signals_deferred)


class Interrupted(KeyboardInterrupt):
    """The command was interrupted by a signal (SIGINT or SIGTERM); a
    KeyboardInterrupt, so code that stops in order on Ctrl-C does so on both."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def spawn(
    cmd: list[str], *, graceful: bool = False, own_group: bool = True, reaps_child: bool = False, **popen_kwargs
) -> subprocess.Popen:
    """subprocess.Popen, registered; in a new session (its own process group)
    unless `own_group` is False: a child that must die with the CLI even when
    the CLI's group is killed at once (a run's workers) stays in it.
    `reaps_child`: see stop()."""
    # Started and registered as one step, so that shutdown() (which takes the list under the same
    # lock) either sees the child or runs before it starts: a child started on another thread while
    # an interrupt is being handled would otherwise be missed and outlive the command. On the main
    # thread, where the signal handler runs, a signal meanwhile is raised once the child is
    # registered.
    on_main = threading.current_thread() is threading.main_thread()
    if on_main:
        _deferring.append(True)
    try:
        with _lock:
            if _interrupted:  # a late start on another thread while the command is being stopped
                raise Interrupted(_interrupted[0])
            proc = subprocess.Popen(cmd, start_new_session=own_group, **popen_kwargs)
            _children[:] = [p for p in _children if p.returncode is None]  # forget the reaped
            _children.append(proc)
            for flag, pids in ((graceful, _graceful), (not own_group, _shared_group), (reaps_child, _reaps_child)):
                (pids.add if flag else pids.discard)(proc.pid)  # a pid may be a reaped child's again
    finally:
        if on_main:
            _deferring.pop()
    if on_main and _interrupted and not _deferring:
        raise Interrupted(_interrupted[0])
    return proc


def run(cmd: list[str], **popen_kwargs) -> subprocess.CompletedProcess:
    """Like subprocess.run(cmd, capture_output=True, text=True), as a
    registered child: interrupted, it is killed with all it started."""
    proc = spawn(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen_kwargs
    )
    try:
        stdout, stderr = proc.communicate()
    except BaseException:
        stop(proc)
        proc.wait()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def signal_group(proc: subprocess.Popen, signum: int) -> None:
    """Send `signum` to the child's process group, or to the child alone when
    it shares the CLI's (nothing if it was reaped)."""
    if proc.returncode is not None:
        return
    try:
        if proc.pid in _shared_group:
            os.kill(proc.pid, signum)
        else:
            os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def stop(proc: subprocess.Popen) -> None:
    """Kill the child and everything in its group now; shutdown() reaps it
    if nobody else does. A child spawned `reaps_child` (`unshare -f`, which
    waits for the one process it started in new namespaces) has that process
    killed first and is given a moment to reap it and exit: killed together,
    the inner process would be left a zombie for init."""
    if proc.pid in _reaps_child and proc.returncode is None:
        inner = _direct_children(proc.pid)
        for pid in inner:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if inner:
            try:
                proc.wait(timeout=REAP_S)
                return
            except subprocess.TimeoutExpired:
                pass
    signal_group(proc, signal.SIGKILL)


def _direct_children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    return found


def reap_in_background(proc: subprocess.Popen) -> None:
    """Wait for a stopped child on another thread (its exit can take tens of
    milliseconds); shutdown() waits for it too if it is still going."""
    threading.Thread(target=proc.wait, daemon=True).start()


@contextmanager
def scratch_dir(prefix: str, parent: Path | None = None) -> Iterator[Path]:
    """A temporary directory, removed on leaving the block, or by shutdown()
    if the command is interrupted before (and, after a SIGKILL, by the next
    command that makes one: scratch.py)."""
    path, fd = scratch.make(prefix, parent)
    with _lock:
        _scratch[path] = fd
    try:
        yield path
    finally:
        with _lock:
            held = _scratch.pop(path, None)
        if held is not None:
            scratch.release(path, held)


def interrupted() -> int | None:
    """The signal that interrupted the command, if one did."""
    return _interrupted[0] if _interrupted else None


@contextmanager
def signals_deferred() -> Iterator[None]:
    """A block that a signal must not cut in two (swapping a release into
    place): a signal meanwhile is raised only after the block."""
    _deferring.append(True)
    try:
        yield
    finally:
        _deferring.pop()
    if _interrupted and not _deferring:
        raise Interrupted(_interrupted[0])


def _on_signal(signum: int, _frame) -> None:
    if not _interrupted:
        _interrupted.append(signum)
        if not _deferring:
            raise Interrupted(signum)


def handle_signals() -> None:
    """SIGINT and SIGTERM raise Interrupted in the main thread, so that
    blocks unwind; shutdown() then stops every child and cleans up."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)


def shutdown() -> None:
    """End and reap every child (graceful ones get GRACE_S to exit by
    themselves), then remove every scratch directory. Idempotent."""
    with _lock:
        children, _children[:] = list(_children), []
        graceful = set(_graceful)
        _graceful.clear()
    for proc in children:
        if proc.pid not in graceful:
            stop(proc)
        elif _interrupted:
            signal_group(proc, signal.SIGTERM)
    for proc in children:
        try:
            proc.wait(timeout=GRACE_S if proc.pid in graceful else None)
        except subprocess.TimeoutExpired:
            stop(proc)
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass
    with _lock:
        left = dict(_scratch)
        _scratch.clear()
    for path, fd in left.items():
        scratch.release(path, fd)
