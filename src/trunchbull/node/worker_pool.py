"""The one pool of long-lived Node worker processes, shared by the custom
evaluators (evaluators/pool.py) and a run's workers (run/workers.py).

A worker reads requests on its stdin and sends messages (node/protocol.py)
on a private pipe whose descriptor number is in its argv; its stdout and
stderr go to its log, an OutputPipe (bounded_output.py: the head and the
tail kept, in memory), whose excerpt says why it stopped. The pool owns the
processes: it starts them (each slot when first needed), writes what is
queued for each without blocking, reads what each sends with one `select`
over all of them, and kills and replaces one. What a message means, which
deadlines apply and where the work in flight on a replaced worker goes is
the caller's policy, decided on the events `poll` reports.
"""

from __future__ import annotations

import os
import select
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from trunchbull.common import lifetime
from trunchbull.node.bounded_output import OutputPipe
from trunchbull.node.protocol import Channel, LineBuffer, ProtocolError
from trunchbull.node.sandbox import spawn_sandboxed

READ_CHUNK = 1 << 20


def pool_size() -> int:
    """The cores this process may use: a pool's default size."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class WorkerProcess:
    proc: subprocess.Popen
    in_fd: int  # its stdin, non-blocking
    out_fd: int  # the read end of its message pipe
    log: OutputPipe  # its stdout and stderr (and its companions')
    inbox: LineBuffer
    outbox: bytearray = field(default_factory=bytearray)
    companions: tuple[subprocess.Popen, ...] = ()  # started for it (a run's tool executor), stopped with it

    def processes(self) -> list[subprocess.Popen]:
        return [self.proc, *self.companions]

    def kill(self) -> None:
        for proc in self.processes():
            lifetime.stop(proc)
        for proc in self.processes():
            proc.wait()
        self.close_fds()

    def close(self, timeout_s: float) -> None:
        """End of input (the worker's loop ends), then its exit, waited for
        `timeout_s`; it is stopped if it does not come."""
        self.end_input()
        for proc in self.processes():  # a companion ends when its worker has
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                lifetime.stop(proc)
                proc.wait()
        self.close_fds()

    def end_input(self) -> None:
        self._close_fd("in_fd")

    def close_fds(self) -> None:
        self._close_fd("in_fd")
        self._close_fd("out_fd")

    def _close_fd(self, name: str) -> None:
        fd = getattr(self, name)
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass
            setattr(self, name, -1)

    def exit_description(self) -> str:
        """How it ended (once it has): "exited with code 3", "was killed by signal 9"."""
        code = self.proc.wait()
        return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"

    def log_excerpt(self) -> str:
        """The head and tail of what it (and its companions) printed so far,
        with how much is not shown; "" when they printed nothing."""
        return self.log.snapshot().excerpt()


def start_worker(
    cmd_for: Callable[[int], list[str]],
    channel: Channel,
    *,
    env: dict[str, str],
    cwd: Path,
    sandboxed: bool,
    own_group: bool = True,
    pass_fds: tuple[int, ...] = (),
    log: OutputPipe | None = None,
    companions: tuple[subprocess.Popen, ...] = (),
) -> WorkerProcess:
    """Start a worker: `cmd_for(fd)` is its command given its message pipe's
    descriptor; `sandboxed`: the command is a sandboxed_command (user code);
    `pass_fds`: more descriptors it inherits (closed here once it has them);
    `log`: the log its companions print to (its write end closed here);
    `companions`: processes already started for it, stopped if it cannot be."""
    read_fd, write_fd = os.pipe()
    log = log if log is not None else OutputPipe()
    launch = spawn_sandboxed if sandboxed else lifetime.spawn
    try:
        proc = launch(
            cmd_for(write_fd),
            own_group=own_group,
            stdin=subprocess.PIPE,
            stdout=log.write_fd,
            stderr=log.write_fd,
            pass_fds=(write_fd, *pass_fds),
            env=env,
            cwd=str(cwd),
        )
    except BaseException:
        os.close(read_fd)
        for companion in companions:
            lifetime.stop(companion)
        raise
    finally:
        for fd in (write_fd, *pass_fds):
            os.close(fd)
        log.close_writer()  # the pipe ends when the worker's and its companions' ends do
    assert proc.stdin is not None
    in_fd = os.dup(proc.stdin.fileno())
    proc.stdin.close()
    os.set_blocking(in_fd, False)
    return WorkerProcess(proc, in_fd, read_fd, log, LineBuffer(channel), companions=companions)


@dataclass
class Event:
    """What one worker did in a `poll`: the messages it completed, and then
    whether it ended (its pipe closed) or sent what is not a message of its
    channel (`garbled`: nothing after it can be trusted; it is still running)."""

    index: int
    lines: list[bytes]
    ended: bool = False
    garbled: str | None = None


class ProcessPool:
    """`size` slots, each holding a worker from `start(index)` once needed."""

    def __init__(self, start: Callable[[int], WorkerProcess], size: int):
        self._start = start
        self.workers: list[WorkerProcess | None] = [None] * size
        self.replaced = 0  # workers killed and started again (a deadline, a crash, a garbled channel)

    def worker(self, index: int) -> WorkerProcess:
        """The slot's worker, started now if it has none or its worker has exited."""
        current = self.workers[index]
        if current is None or current.proc.poll() is not None:
            if current is not None:
                current.kill()
            current = self.workers[index] = self._start(index)
        return current

    def current(self, index: int) -> WorkerProcess | None:
        """The slot's worker as it is (also one that has exited), without starting one."""
        return self.workers[index]

    def replace(self, index: int) -> WorkerProcess:
        current = self.workers[index]
        if current is not None:
            current.kill()
        self.replaced += 1
        self.workers[index] = None
        return self.worker(index)

    def send(self, index: int, data: bytes) -> None:
        worker = self.worker(index)
        worker.outbox += data
        _write(worker)

    def poll(self, wait_s: float) -> list[Event]:
        """Write what is queued, then wait up to `wait_s` for messages; the events, by slot."""
        live = {w.out_fd: (i, w) for i, w in enumerate(self.workers) if w is not None and w.out_fd >= 0}
        for _index, worker in live.values():
            if worker.outbox:
                _write(worker)
        writers = [w.in_fd for _i, w in live.values() if w.outbox and w.in_fd >= 0]
        try:
            readable, writable, _ = select.select(list(live), writers, [], wait_s)
        except InterruptedError:
            return []
        for fd in writable:
            _write(next(w for _i, w in live.values() if w.in_fd == fd))
        events = []
        for fd in readable:
            index, worker = live[fd]
            try:
                data = os.read(fd, READ_CHUNK)
            except OSError:
                data = b""
            if not data:
                events.append(Event(index, [], ended=True))
                continue
            try:
                events.append(Event(index, worker.inbox.feed(data)))
            except ProtocolError as err:
                events.append(Event(index, [], garbled=str(err)))
        return events

    def close(self, timeout_s: float = 5.0) -> None:
        """End every worker's input; wait for them (all at once: each is told first)."""
        workers = [w for w in self.workers if w is not None]
        for worker in workers:
            worker.end_input()
        for worker in workers:
            worker.close(timeout_s)
        self.workers = [None] * len(self.workers)

    def kill_all(self) -> None:
        for worker in self.workers:
            if worker is not None:
                worker.kill()
        self.workers = [None] * len(self.workers)


def _write(worker: WorkerProcess) -> None:
    if worker.in_fd < 0:
        worker.outbox.clear()
        return
    try:
        written = os.write(worker.in_fd, worker.outbox)
        del worker.outbox[:written]
    except BlockingIOError:
        pass
    except OSError:
        worker.outbox.clear()  # the process is gone; its pipe's end says so
