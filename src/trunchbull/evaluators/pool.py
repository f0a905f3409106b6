"""The custom-evaluator worker pool (SPEC §4).

A persistent pool of Node processes (one per core) runs js/grade/evaluator_worker.mjs
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

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import orjson

from trunchbull.node.protocol import EVALUATOR, ProtocolError
from trunchbull.node.replies import evaluator_answer_ok
from trunchbull.node.sandbox import sandboxed_command
from trunchbull.node.worker_pool import Event, ProcessPool, WorkerProcess, pool_size, start_worker
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


def _answer(line: bytes) -> dict | None:
    """An `answer` message's well-formed answer (node/replies.py), else None."""
    try:
        _tag, (field,) = EVALUATOR.frame(line)
        answer = EVALUATOR.json(field, "an answer")
    except ProtocolError:
        return None
    return answer if evaluator_answer_ok(answer) else None


@dataclass
class _Slot:
    """The calls one worker has been given, answered in order."""

    pending: deque[int] = field(default_factory=deque)
    started: float = 0.0  # when its current call started (its deadline counts from here)


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
        self._pool = ProcessPool(self._start, self.size)

    @property
    def replaced(self) -> int:
        """Processes killed for a timeout, crash or garbled answer (for diagnostics and tests)."""
        return self._pool.replaced

    def __enter__(self) -> "EvaluatorPool":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        self._pool.close(timeout_s=2.0)

    def _start(self, _index: int) -> WorkerProcess:
        # The same sandbox as all user code: no network, no other processes, reads only the release.
        return start_worker(
            lambda fd: sandboxed_command(
                self.tc,
                WORKER_SCRIPT,
                [str(int(self.deadline_s * 1000)), str(fd)],
                self.read_paths,
                self.memory_mb,
                FRESH_MODULE_FLAGS,
            ),
            EVALUATOR,
            env=self.tc.base_env(),
            cwd=JS_DIR,
            sandboxed=True,
        )

    def run(self, calls: Sequence[Call]) -> list[CallResult]:
        """Evaluate every call; results in call order. Never raises for
        anything a call does."""
        results: list[CallResult | None] = [None] * len(calls)
        if not calls:
            return []
        workers = min(self.size, len(calls))
        chunk = max(1, min(128, len(calls) // (workers * 4) or 1))
        chunks = deque(range(start, min(start + chunk, len(calls))) for start in range(0, len(calls), chunk))
        slots = [_Slot() for _ in range(workers)]
        limit = self.deadline_s + self.grace_s

        def give(index: int, ids) -> None:
            slot = slots[index]
            slot.pending = deque(ids)
            slot.started = time.monotonic()
            out = bytearray()
            for i in slot.pending:
                out += orjson.dumps({"i": i, "module": calls[i].module, "input": calls[i].input}) + b"\n"
            self._pool.send(index, bytes(out))

        def fail_current(index: int, message: str, details: Any = None) -> None:
            """The slot's current call ends as an error; its worker is replaced and gets the rest."""
            slot = slots[index]
            i = slot.pending.popleft()
            results[i] = CallResult("error", None, message, details, round((time.monotonic() - slot.started) * 1000, 3))
            self._pool.replace(index)
            if slot.pending:
                give(index, list(slot.pending))

        while True:
            for index, slot in enumerate(slots):
                if not slot.pending and chunks:
                    give(index, chunks.popleft())
            busy = [index for index, slot in enumerate(slots) if slot.pending]
            if not busy:
                break
            now = time.monotonic()
            for index in busy:
                if now - slots[index].started > limit:
                    fail_current(
                        index,
                        f"the evaluator did not finish within the {self.deadline_s:g} s deadline "
                        "(its worker was stopped and replaced)",
                    )
            wait = min((slots[i].started + limit for i in busy if slots[i].pending), default=now) - now
            for event in self._pool.poll(max(0.0, wait)):
                self._received(event, slots[event.index], results, fail_current)
        return results  # type: ignore[return-value]

    def _received(self, event: Event, slot: _Slot, results: list[CallResult | None], fail_current) -> None:
        garbled = event.garbled is not None
        for line in event.lines:
            answer = _answer(line)
            if answer is None or not slot.pending or slot.pending[0] != answer["i"]:
                garbled = True  # user code wrote to the channel: nothing after this can be trusted
                break
            slot.pending.popleft()
            results[answer["i"]] = CallResult(
                answer["outcome"], answer["score"], answer["message"], answer["details"], answer["ms"]
            )
            slot.started = time.monotonic()
        if garbled and slot.pending:
            fail_current(
                event.index,
                "the evaluator worker's answer could not be read: something other than "
                "an answer was written to its reply channel (its worker was replaced)",
            )
        elif event.ended and slot.pending:
            worker = self._pool.current(event.index)
            assert worker is not None  # it sent the event
            how, tail = worker.exit_description(), worker.log_excerpt()
            fail_current(
                event.index,
                f"the evaluator worker crashed: the process {how}" + (f"; its output:\n{tail}" if tail else ""),
                {"exitCode": worker.proc.returncode, "stderr": tail or None},
            )
