"""The custom-evaluator worker pool (SPEC §4).

A persistent pool of Node processes (one per core) runs js/evaluator_worker.mjs
in the sandbox of all user code (node/sandbox.py: Node's permission model, no
network, no other processes). Each process evaluates calls one at a time; the
pool feeds it chunks of calls and reads one answer per call from a private pipe.
The deadline (5 s) is enforced twice: inside the worker for asynchronous
evaluators, and here for everything else — a call that has not answered
`deadline + grace` after it started (a synchronous infinite loop never yields)
gets `outcome: "error"` and its process is killed and replaced; the remaining
calls of the chunk go to the new process. A crashed process (exit, out of
memory) is replaced the same way. Nothing a call does stops the other calls.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import orjson

from trunchbull.common import lifetime
from trunchbull.node.replies import evaluator_answer_ok
from trunchbull.node.sandbox import log_tail, sandboxed_command, spawn_sandboxed
from trunchbull.node.toolchain import JS_DIR, Toolchain, toolchain

WORKER_SCRIPT = JS_DIR / "grade/evaluator_worker.mjs"
DEADLINE_S = 5.0
GRACE_S = 0.25  # lets the worker report an async timeout itself before we kill it
WORKER_MEMORY_MB = 1024
# Every call gets a fresh instance of its module (js/shared/fresh_module.mjs).
FRESH_MODULE_FLAGS = ("--experimental-vm-modules", "--experimental-import-meta-resolve")


@dataclass(frozen=True)
class Call:
    """One custom-evaluator call: the bundle's absolute path and the input object."""

    module: str
    input: dict


@dataclass
class CallResult:
    outcome: str  # pass | fail | error
    score: float | None
    message: str | None
    details: Any
    duration_ms: float


def pool_size() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class _Process:
    """One Node worker process with its protocol pipe and log file."""

    def __init__(self, tc: Toolchain, read_paths: list[Path], deadline_s: float, memory_mb: int):
        read_fd, write_fd = os.pipe()
        self.log = tempfile.TemporaryFile(prefix="trunchbull-evaluator-")
        # The same sandbox as all user code: no network, no other processes, reads only the release.
        cmd = sandboxed_command(
            tc, WORKER_SCRIPT, [str(int(deadline_s * 1000)), str(write_fd)], read_paths, memory_mb, FRESH_MODULE_FLAGS
        )
        try:
            self.proc = spawn_sandboxed(
                cmd,
                stdin=subprocess.PIPE,
                stdout=self.log,
                stderr=self.log,
                pass_fds=(write_fd,),
                env=tc.base_env(),
                cwd=str(JS_DIR),
            )
        finally:
            os.close(write_fd)
        self.out_fd = read_fd
        assert self.proc.stdin is not None
        self.in_fd = self.proc.stdin.fileno()
        os.set_blocking(self.in_fd, False)

    def kill(self) -> None:
        lifetime.stop(self.proc)
        self.proc.wait()
        self._close_fds()

    def close(self) -> None:
        """Graceful stop: close stdin so the worker's loop ends."""
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            lifetime.stop(self.proc)
            self.proc.wait()
        self._close_fds()

    def _close_fds(self) -> None:
        for closer in (lambda: os.close(self.out_fd), self.log.close):
            try:
                closer()
            except OSError:
                pass
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass


class EvaluatorPool:
    """`with EvaluatorPool(read_paths) as pool: results = pool.run(calls)`."""

    def __init__(
        self,
        read_paths: Sequence[Path],
        *,
        size: int | None = None,
        deadline_s: float = DEADLINE_S,
        grace_s: float = GRACE_S,
        memory_mb: int = WORKER_MEMORY_MB,
        tc: Toolchain | None = None,
    ):
        self.read_paths = [Path(p) for p in read_paths]
        self.size = size or pool_size()
        self.deadline_s = deadline_s
        self.grace_s = grace_s
        self.memory_mb = memory_mb
        self.tc = tc or toolchain()
        self._processes: list[_Process | None] = [None] * self.size
        self.replaced = 0  # processes killed for a timeout or crash (for diagnostics and tests)

    def __enter__(self) -> "EvaluatorPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for slot, proc in enumerate(self._processes):
            if proc is not None:
                proc.close()
                self._processes[slot] = None

    def _spawn(self) -> _Process:
        return _Process(self.tc, self.read_paths, self.deadline_s, self.memory_mb)

    def run(self, calls: Sequence[Call]) -> list[CallResult]:
        """Evaluate every call; results in call order. Never raises for
        anything a call does."""
        results: list[CallResult | None] = [None] * len(calls)
        if not calls:
            return []
        workers = min(self.size, len(calls))
        chunk = max(1, min(128, len(calls) // (workers * 4) or 1))
        queue = deque(range(start, min(start + chunk, len(calls))) for start in range(0, len(calls), chunk))
        lock = threading.Lock()
        failures: list[BaseException] = []

        def take() -> range | None:
            with lock:
                return queue.popleft() if queue else None

        def work(slot: int) -> None:
            try:
                while (indices := take()) is not None:
                    self._run_chunk(slot, calls, indices, results)
            except BaseException as err:  # noqa: BLE001 - surfaced below
                failures.append(err)

        threads = [threading.Thread(target=work, args=(slot,), daemon=True) for slot in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]
        return results  # type: ignore[return-value]

    def _process(self, slot: int) -> _Process:
        proc = self._processes[slot]
        if proc is None or proc.proc.poll() is not None:
            if proc is not None:
                proc.kill()
            proc = self._processes[slot] = self._spawn()
        return proc

    def _replace(self, slot: int) -> _Process:
        proc = self._processes[slot]
        if proc is not None:
            proc.kill()
        self.replaced += 1
        proc = self._processes[slot] = self._spawn()
        return proc

    def _run_chunk(self, slot: int, calls: Sequence[Call], indices: range, results: list[CallResult | None]) -> None:
        pending = deque(indices)
        proc = self._process(slot)
        limit = self.deadline_s + self.grace_s

        def encode(ids) -> bytearray:
            out = bytearray()
            for i in ids:
                out += orjson.dumps({"i": i, "module": calls[i].module, "input": calls[i].input})
                out += b"\n"
            return out

        outbox = encode(pending)
        inbox = b""
        started = time.monotonic()
        while pending:
            wait = started + limit - time.monotonic()
            readable: list[int] = []
            writable: list[int] = []
            if wait > 0:
                try:
                    readable, writable, _ = select.select([proc.out_fd], [proc.in_fd] if outbox else [], [], wait)
                except (OSError, ValueError):
                    readable = [proc.out_fd]
            if not readable and not writable:
                i = pending.popleft()
                results[i] = CallResult(
                    "error",
                    None,
                    f"the evaluator did not finish within the {self.deadline_s:g} s deadline "
                    "(its worker was stopped and replaced)",
                    None,
                    round((time.monotonic() - started) * 1000, 3),
                )
                proc = self._replace(slot)
                outbox, inbox, started = encode(pending), b"", time.monotonic()
                continue
            if writable and outbox:
                try:
                    written = os.write(proc.in_fd, outbox)
                    del outbox[:written]
                except BlockingIOError:
                    pass
                except (BrokenPipeError, OSError):
                    outbox.clear()  # the process died; the read side reports it
            if readable:
                data = os.read(proc.out_fd, 1 << 16)
                if not data:
                    i = pending.popleft()
                    proc.proc.wait()
                    code = proc.proc.returncode
                    how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
                    tail = log_tail(proc.log)
                    results[i] = CallResult(
                        "error",
                        None,
                        f"the evaluator worker crashed: the process {how}"
                        + (f"; its last output:\n{tail}" if tail else ""),
                        {"exitCode": code, "stderr": tail or None},
                        round((time.monotonic() - started) * 1000, 3),
                    )
                    proc = self._replace(slot)
                    outbox, inbox, started = encode(pending), b"", time.monotonic()
                    continue
                inbox += data
                *lines, inbox = inbox.split(b"\n")
                garbled = False
                for line in lines:
                    try:
                        answer = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        answer = None
                    if not evaluator_answer_ok(answer) or not pending or pending[0] != answer["i"]:
                        garbled = True  # user code wrote to the channel: nothing after this can be trusted
                        break
                    pending.popleft()
                    results[answer["i"]] = CallResult(
                        answer["outcome"], answer["score"], answer["message"], answer["details"], answer["ms"]
                    )
                if garbled:
                    i = pending.popleft()
                    results[i] = CallResult(
                        "error",
                        None,
                        "the evaluator worker's answer could not be read: something other than "
                        "an answer was written to its reply channel (its worker was replaced)",
                        None,
                        round((time.monotonic() - started) * 1000, 3),
                    )
                    proc = self._replace(slot)
                    outbox, inbox, started = encode(pending), b"", time.monotonic()
                    continue
                if lines:
                    started = time.monotonic()
