"""Runs one command as a child subreaper, to see what it leaves behind.

    python -m tests.fuzz.reaper REPORT.json TIMEOUT -- COMMAND...

This process becomes a Linux child subreaper (prctl PR_SET_CHILD_SUBREAPER),
so every process the command starts that outlives its parent is reparented
here instead of to init. After the command exits (or is killed at TIMEOUT
seconds: a hang), whatever is still here was left behind by it: each such
process is recorded, then killed and reaped. REPORT.json gets
{ returncode, hung, seconds, leftover: [{ pid, state, cmdline }],
maxRssKiB } (the peak resident memory of the largest process of the
command's tree, itself included, that was waited for); the command's stdout
and stderr pass through."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return pids


def _describe(pid: int) -> dict:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        stat_text = Path(f"/proc/{pid}/stat").read_text()
        state = stat_text.rsplit(")", 1)[1].split()[0]
        name = stat_text[stat_text.index("(") + 1 : stat_text.rindex(")")]
    except OSError:
        cmdline, state, name = "", "?", "?"
    return {"pid": pid, "name": name, "state": state, "cmdline": cmdline[:300]}


def _kill_tree(pid: int) -> None:
    for child in _children():
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main() -> int:
    report, timeout, sep, *command = sys.argv[1:]
    assert sep == "--"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    started = time.monotonic()
    proc = subprocess.Popen(command)
    hung = False
    try:
        proc.wait(timeout=float(timeout))
    except subprocess.TimeoutExpired:
        hung = True
        _kill_tree(proc.pid)
        proc.wait()
    seconds = time.monotonic() - started
    # Anything still here now was started by the command and outlived it
    # (zombies included: an exited process nobody reaped).
    leftover = [_describe(pid) for pid in _children()]
    for entry in leftover:
        try:
            os.kill(entry["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)
    Path(report).write_text(
        json.dumps(
            {
                "returncode": proc.returncode,
                "hung": hung,
                "seconds": seconds,
                "leftover": leftover,
                "maxRssKiB": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
