"""A process tree watched from outside while it runs (Linux /proc): each
process's peak resident memory (VmHWM, which exec resets, so a child of the
test process counts its own pages only), its command line, and where its
stdout and stderr lead. Peaks are read every few milliseconds until the tree
ends: growth in the last few milliseconds of a process can be missed, which
can only make a peak look smaller than a bound it actually broke by less than
that much."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PERIOD_S = 0.005


@dataclass
class Seen:
    pid: int
    cmdline: str = ""  # the last seen
    peak_kib: int = 0
    outputs: set[str] = field(default_factory=set)  # what fd 1 and 2 are: "pipe", "file", "tty", "null", …
    largest_output_file: int = 0  # bytes, when fd 1 or 2 is a regular file


def _children() -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            found.setdefault(ppid, []).append(int(entry))
    return found


def _tree(root: int) -> list[int]:
    children = _children()
    pids, i = [root], 0
    while i < len(pids):
        pids += children.get(pids[i], [])
        i += 1
    return pids


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "pipe"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISCHR(mode):
        return "char"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "other"


class ProcessWatch:
    """Watch `proc` and its descendants until it ends (use as a context manager around the wait)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.seen: dict[int, Seen] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> "ProcessWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    @property
    def root(self) -> Seen:
        return self.seen[self.proc.pid]

    def running(self, script: str) -> list[Seen]:
        """The processes seen whose command line holds `script`."""
        return [s for s in self.seen.values() if script in s.cmdline]

    def _watch(self) -> None:
        while not self._done.is_set() and self.proc.poll() is None:
            for pid in _tree(self.proc.pid):
                self._look(pid)
            time.sleep(PERIOD_S)

    def _look(self, pid: int) -> None:
        seen = self.seen.setdefault(pid, Seen(pid))
        try:
            # (read each time: a process may exec another program, as `unshare` and `setsid` do)
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            seen.cmdline = cmdline or seen.cmdline
            match = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
            if match:
                seen.peak_kib = max(seen.peak_kib, int(match.group(1)))
            for fd in (1, 2):
                info = os.stat(f"/proc/{pid}/fd/{fd}")
                seen.outputs.add(_kind(info.st_mode))
                if stat.S_ISREG(info.st_mode):
                    seen.largest_output_file = max(seen.largest_output_file, info.st_size)
        except OSError:  # it ended meanwhile
            pass
