"""The batch caller of a run in batch mode (SPEC §8.8): js/run/batch.mjs,
one process per run, which holds the provider's key, imports no benchmark
code and talks to the provider's batch API through the AI SDK. Commands go
one at a time on its stdin; every answer is read through the one protocol
(node/protocol.py, RUN_BATCH) as hostile, bounded input.

A command not answered within the run's timeout (a provider that stopped
answering) stops the process; a fresh one is started for the next command.
A start whose answer never came is `lost`: the batch may exist (the caller
asks the provider's list of batches, run/batch/submit.py)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from trunchbull.node.protocol import RUN_BATCH, ProtocolError
from trunchbull.node.sandbox import sandbox_flags
from trunchbull.node.toolchain import JS_DIR, Toolchain
from trunchbull.node.worker_pool import Event, ProcessPool, WorkerProcess, start_worker

SCRIPT = JS_DIR / "run/batch.mjs"
MEMORY_MB = 2048
NODE_FLAGS = ("--max-semi-space-size=8",)
# After a start of this many requests the process is replaced: V8 keeps the memory of the
# heap the AI SDK built for them (25,000 requests: ~120 MB) after it is collected, and the
# replies are read beside the workers taking them.
RECYCLE_AFTER = 1000
SEND_BYTES = 1 << 20
START_TIMEOUT_S = 60.0


class CallerGone(Exception):
    """The batch caller did not answer (it died, said something that is not a message, or was late)."""


@dataclass(frozen=True)
class Outcome:
    tag: str  # the answer's tag (started, refused, status, listed, cancelled, failed)
    value: dict


class BatchCaller:
    def __init__(
        self, tc: Toolchain, config: dict, env: dict[str, str], read_paths: list[Path], cwd: Path, timeout_s: float
    ):
        self._tc = tc
        self._config = config
        self._env = {**tc.base_env(), **env}
        self._read = [*read_paths, JS_DIR, tc.root]
        self._cwd = cwd
        self.timeout_s = timeout_s
        self.warnings: list[str] = []
        self._pool = ProcessPool(self._start, 1)
        self._ready = False
        self._deadline = 0.0
        self._reading = False
        self._early: list[Event] = []  # what it said while requests were being sent

    def _start(self, index: int) -> WorkerProcess:
        return start_worker(
            lambda fd: [str(self._tc.node), *sandbox_flags(self._read, MEMORY_MB), *NODE_FLAGS, str(SCRIPT), str(fd)],
            RUN_BATCH,
            env=self._env,
            cwd=self._cwd,
            sandboxed=False,
            own_group=False,  # in the CLI's process group: a run killed as a group takes it along
        )

    def spawn(self) -> None:
        """Start it now (it loads the AI SDK while the run goes on); it is waited for when first asked."""
        if self._pool.current(0) is None:
            self._launch()

    def _launch(self) -> None:
        self._ready = False
        if self._pool.current(0) is not None:
            self._pool.replace(0)
        self._pool.send(0, orjson.dumps(self._config) + b"\n")

    def ready(self) -> None:
        """Wait until it is ready (CallerGone if it cannot start)."""
        self._ensure()

    def _ensure(self) -> None:
        process = self._pool.current(0)
        if process is None or process.proc.poll() is not None:
            self._launch()
        if not self._ready:
            self._next({"ready"}, START_TIMEOUT_S)
            self._ready = True

    def _lines(self) -> Iterator[bytes]:
        """Its lines, until `self._deadline` passes without one."""
        while True:
            wait = self._deadline - time.monotonic()
            if wait <= 0:
                self._stop()
                raise CallerGone(f"the batch caller did not answer within {self.timeout_s:g} s")
            events, self._early = self._early or self._pool.poll(min(wait, 1.0)), []
            for event in events:
                if event.garbled is not None:
                    self._stop()
                    raise CallerGone(event.garbled)
                yield from event.lines
                if event.ended:
                    process = self._pool.current(0)
                    tail = process.log_excerpt() if process is not None else ""
                    self._stop()
                    raise CallerGone("the batch caller exited" + (f"; its output:\n{tail}" if tail else ""))

    def _next(self, tags: set[str], timeout_s: float) -> tuple[str, dict]:
        """The next answer with one of `tags` (warnings are kept on the way)."""
        self._deadline = time.monotonic() + timeout_s
        for line in self._lines():
            tag, value = self._frame(line)
            if tag in tags:
                return tag, value
            self._unexpected(tag, value)
        raise AssertionError("unreachable")

    def _frame(self, line: bytes) -> tuple[str, Any]:
        """(tag, value): a JSON object; for `r` (k, error kind or None, record bytes), for `b`
        (k, step bytes)."""
        try:
            tag, fields = RUN_BATCH.frame(line)
            if tag == b"r":
                kind = fields[1]
                return "r", (
                    RUN_BATCH.number(fields[0], "a sample number"),
                    None if kind == b"-" else kind.decode(errors="replace"),
                    fields[2],
                )
            if tag == b"b":
                return "b", (RUN_BATCH.number(fields[0], "a sample number"), fields[1])
            value = RUN_BATCH.json(fields[0], "an answer")
        except ProtocolError as err:
            self._stop()
            raise CallerGone(str(err)) from None
        if tag == b"w":
            if type(value) is str and value not in self.warnings:
                self.warnings.append(value)
            return "w", {}
        if tag == b"fatal":
            self._stop()
            message = value.get("message") if type(value) is dict else None
            raise CallerGone(f"the batch caller failed: {message}")
        if type(value) is not dict:
            self._stop()
            raise CallerGone(f"the batch caller sent a {tag.decode()} answer that is not an object")
        return tag.decode(), value

    def _unexpected(self, tag: str, value: dict) -> None:
        if tag != "w":
            self._stop()
            raise CallerGone(f"the batch caller sent an answer out of turn ({tag})")

    def _stop(self) -> None:
        self._ready = False
        self._early = []
        self._pool.kill_all()

    def _ask(self, command: dict, tags: set[str], body: list[bytes] | None = None) -> Outcome:
        self._ensure()
        self._pool.send(0, orjson.dumps(command) + b"\n")
        if body:
            self._send_lines(body)
        tag, value = self._next({*tags, "failed"}, self.timeout_s)
        return Outcome(tag, value)

    def _send_lines(self, lines: Iterable[bytes]) -> None:
        """Request lines, about SEND_BYTES at a time (25,000 requests are ~10 MB: never held
        whole); what the caller says meanwhile is kept for _lines()."""
        piece: list[bytes] = []
        size = 0
        for line in lines:
            piece.append(line)
            size += len(line)
            if size >= SEND_BYTES:
                self._send_piece(piece)
                piece, size = [], 0
        if piece:
            self._send_piece(piece)

    def _send_piece(self, piece: list[bytes]) -> None:
        self._pool.send(0, b"".join(piece))
        self._deadline = time.monotonic() + self.timeout_s
        while (process := self._pool.current(0)) is not None and process.outbox:
            for event in self._pool.poll(min(1.0, max(0.0, self._deadline - time.monotonic()))):
                self._early.append(event)
            if time.monotonic() > self._deadline:
                self._stop()
                raise CallerGone(f"the batch caller took no request for {self.timeout_s:g} s")

    def start(self, requests: list[bytes]) -> Outcome:
        """Create a batch of `requests` (each a JSON line); started, refused, or CallerGone (lost)."""
        outcome = self._ask({"op": "start", "n": len(requests)}, {"started", "refused"}, requests)
        if len(requests) >= RECYCLE_AFTER:
            self._recycle()
        return outcome

    def _recycle(self) -> None:
        """A fresh process in its place (started now, ready by the next command)."""
        self._ready = False
        self._pool.close(timeout_s=2.0)
        self._launch()

    def status(self, ref: dict) -> Outcome:
        return self._ask({"op": "status", "ref": ref}, {"status"})

    def cancel(self, ref: dict) -> Outcome:
        return self._ask({"op": "cancel", "ref": ref}, {"cancelled"})

    def list_batches(self, limit: int, cursor: str | None) -> Outcome:
        return self._ask({"op": "list", "limit": limit, "cursor": cursor}, {"listed"})

    def open_results(self, ref: dict, requests: tuple[int, Iterable[bytes]] | None = None) -> None:
        """Start reading the batch's results; take them with pull(). `requests`: (how many, the
        model callers' request lines, with `id`) of the replies the caller takes on itself."""
        self._ensure()
        count, lines = requests if requests is not None else (0, ())
        self._pool.send(0, orjson.dumps({"op": "results", "ref": ref, "n": count}) + b"\n")
        if count:
            self._send_lines(lines)
        self._deadline = time.monotonic() + self.timeout_s
        self._reading = True

    def abandon_results(self) -> None:
        """Stop reading results midway (what is still coming is not for the next command)."""
        if self._reading:
            self._reading = False
            self._stop()

    def pull(self, wait_s: float = 0.0) -> tuple[list[tuple[str, Any]], bool]:
        """(what was read since the last pull: ("i", item), ("r", (k, kind, record)), ("b", (k,
        step)); whether that was the last); waits up to `wait_s` for some. ResultsBroken when the
        reading broke off (the caller is ready for the next command), CallerGone when the caller
        is (it is stopped)."""
        got: list[tuple[str, Any]] = []
        if not self._reading:
            return got, True
        try:
            if time.monotonic() > self._deadline:
                raise CallerGone(f"the batch caller sent no result for {self.timeout_s:g} s")
            events, self._early = self._early or self._pool.poll(wait_s), []
            for event in events:
                if event.garbled is not None:
                    raise CallerGone(event.garbled)
                for line in event.lines:
                    tag, value = self._frame(line)
                    if tag in ("i", "r", "b"):
                        got.append((tag, value))
                    elif tag == "end":
                        self._reading = False
                        return got, True
                    elif tag == "failed":
                        self._reading = False
                        raise ResultsBroken(str(value.get("message")))
                    else:
                        self._unexpected(tag, value)
                if event.ended:
                    raise CallerGone("the batch caller exited while it read results")
        except CallerGone:
            self._reading = False
            self._stop()
            raise
        if got:
            self._deadline = time.monotonic() + self.timeout_s  # the timeout is between results
        return got, False

    def steps(self, requests: list[bytes]) -> list[tuple[str, Any]]:
        """Take the given steps (request lines with their result or error): their r and b."""
        self._ensure()
        self._pool.send(0, orjson.dumps({"op": "steps", "n": len(requests)}) + b"\n")
        self._send_lines(requests)
        self._deadline = time.monotonic() + self.timeout_s
        self._reading = True
        out: list[tuple[str, Any]] = []
        done = False
        while not done:
            got, done = self.pull(1.0)
            out += got
        return out

    def close(self) -> None:
        self._pool.close(timeout_s=2.0)

    def kill(self) -> None:
        self._pool.kill_all()


class ResultsBroken(Exception):
    """The results could not be read to their end (they are read again later)."""
