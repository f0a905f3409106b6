"""The run's Node workers and the scheduler that feeds them (SPEC §8.2).

A small pool of worker units (run/worker_units.py: a model caller,
js/run/worker.mjs, and when the release has tools its tool executor) each
runs many samples at once. At most `concurrency` samples are in
flight across the pool: each worker runs its share of them (its slots) and
holds up to `PREFETCH` more waiting, in order, so that a finished sample's
slot is filled at once rather than after a round trip through this process
(on a busy machine, waking two processes costs milliseconds per sample). A
waiting sample is counted as started here when a record arrives from its
worker while it is the oldest one waiting, which is never earlier than the
worker started it, so the watchdog below can be late but never early. Once
every sample has been sent, the waiting samples of a worker are asked back
while another has free slots; those not started yet come back and go there.

One thread here does everything else: it writes requests, reads each
worker's protocol pipe, hands finished records to the caller, and watches
the clock:

* a tool call that has not ended `tool_timeout + grace` after it started
  (a synchronous infinite loop never gives the worker's own timer a chance)
  ends its sample as `tool-timeout`; the worker is killed and replaced, and
  the other samples that were in flight on it are sent again, uncharged;
* a sample not answered `timeout + grace` after it was sent ends as
  `timeout` the same way (the worker enforces the timeout itself; this only
  fires when it cannot);
* a worker that dies on its own takes its samples with it: they are sent
  again. The samples that had a tool call running (or, with none, all that
  were in flight) are suspects; a sample suspected twice ends as
  `worker-crash`.

A sample sent again is charged for what it cost before: the worker says
`c <TAB> k` for each provider request of sample k, and the requests made on
a worker that was replaced are added to the `attempts` of the sample's
record (`earlier_calls`).
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Callable

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import UsageError
from trunchbull.node.sandbox import log_tail
from trunchbull.node.toolchain import Toolchain
from trunchbull.run.samples import Sample
from trunchbull.run.scheduling import PREFETCH, InFlight, Worker, shares
from trunchbull.run.worker_units import UnitPaths, spawn_unit
from trunchbull.rundir.schema import error_record

GRACE_S = 1.0  # after a deadline, the worker's own report is waited for this long
MAX_CRASHES = 2
START_TIMEOUT_S = 120  # a local model is loaded before its worker is ready


OnRecord = Callable[[Sample, "str | None", bytes], None]  # (sample, error kind or None, record JSON)


class WorkerSetupError(Exception):
    """The model could not be made (reported by a worker before any call)."""


def _error_record(sample: Sample, kind: str, message: str, elapsed_s: float, calls: int = 0) -> bytes:
    """`calls`: the provider requests the sample made before it ended so (its attempts, at least 1)."""
    record = error_record(sample.case_id, sample.repeat, kind, message, elapsed_s)
    record["attempts"] = max(1, calls)
    return orjson.dumps(record)


class WorkerPool:
    def __init__(
        self,
        tc: Toolchain,
        config: dict,
        read_paths: list[Path],
        env: dict[str, str],
        *,
        tool_paths: list[Path] | None = None,
        size: int,
        concurrency: int,
        cwd: Path,
        timeout_s: float,
        tool_timeout_s: float,
        node_flags: tuple[str, ...] = (),
        per_worker: int | None = None,
        on_warning: Callable[[str], None] | None = None,
    ):
        """`read_paths`: what the model callers read (the AI SDK bundle, a
        local model's files); `tool_paths`: what the tool executors read (the
        release, its dependencies); `node_flags`: permissions beyond the sandbox's (a local model's
        native addon); `per_worker`: at most this many samples in flight on one
        worker, none waiting (None: no limit but `concurrency`); `on_warning`:
        each distinct model warning, once."""
        self.tc = tc
        self._config = config
        self._shares = shares(concurrency, size, per_worker)
        self._prefetch = 0 if per_worker is not None else PREFETCH
        self.read_paths = read_paths
        self.tool_paths = tool_paths or []
        self.env = {**tc.base_env(), **env}
        self.size = size
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.tool_timeout_s = tool_timeout_s
        self.node_flags = node_flags
        self.on_warning = on_warning
        self.warnings: list[str] = []
        self.workers: list[Worker] = []
        self.replaced = 0
        self.earlier_calls: dict[int, int] = {}  # sample k → requests made on workers since replaced

    # ------------------------------------------------------------------ processes

    def _spawn(self, index: int) -> Worker:
        slots = self._shares[index]
        worker = spawn_unit(
            self.tc,
            UnitPaths(self.read_paths, self.tool_paths if self._config["tools"] else None, self.cwd),
            self.env,
            self.node_flags,
            slots,
            self._prefetch,
        )
        worker.outbox += orjson.dumps({**self._config, "slots": slots}) + b"\n"
        return worker

    def spawn(self) -> None:
        """Start every worker (they make the model while the caller goes on)."""
        self.workers = [self._spawn(index) for index in range(self.size)]
        for worker in self.workers:
            self._write(worker)  # the configuration, so that they need not wait for wait_ready

    def wait_ready(self) -> None:
        """Wait until every worker has made the model (a WorkerSetupError
        when one cannot: nothing has been called)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not all(w.ready for w in self.workers):
            self._pump(min(1.0, max(0.0, deadline - time.monotonic())), on_record=None)
            if time.monotonic() > deadline:
                tail = next((t for w in self.workers if not w.ready and (t := log_tail(w.log))), "")
                raise UsageError(
                    f"the run's Node workers did not start within {START_TIMEOUT_S} s"
                    + (f"; the last output of one:\n{tail}" if tail else "")
                )

    def ready_info(self) -> list[dict]:
        """What each worker said when it was ready (in pool order)."""
        return [w.info or {} for w in self.workers]

    def close(self) -> None:
        for worker in self.workers:
            try:
                os.close(worker.in_fd)  # end of input: the worker exits
            except OSError:
                pass
        for worker in self.workers:
            for proc in worker.processes():  # the executor ends when its model caller has
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    lifetime.stop(proc)
                    proc.wait()
            worker.in_fd = -1
            worker.close_fds()
        self.workers = []

    def kill_all(self) -> None:
        for worker in self.workers:
            worker.kill()
        self.workers = []

    # ------------------------------------------------------------------ scheduling

    def run(
        self,
        samples: list[Sample],
        on_record: OnRecord,
        after_records: Callable[[], None] = lambda: None,
        admit: Callable[[Sample], bool | None] | None = None,
    ) -> None:
        """Run every sample; `on_record` gets each finished one (in the order
        they finish), and `after_records` is called once the records that
        arrived together have all been handed over. Returns when all are
        recorded, or, once `admit` (a budget) refuses a sample (False), when
        the samples already sent are; `admit` None: not yet (ask again after
        the next records)."""
        queue: deque[InFlight] = deque(InFlight(s, 0.0) for s in samples)
        while queue or any(w.inflight for w in self.workers):
            if queue:
                now = time.monotonic()
                while queue:
                    worker = max(self.workers, key=Worker.preference)
                    if worker.room() <= 0:
                        break
                    verdict = admit(queue[0].sample) if admit is not None else True
                    if verdict is None:
                        break
                    if not verdict:
                        queue.clear()  # no new sample starts; those sent finish
                        break
                    worker.assign(queue.popleft(), now)
            else:
                self._rebalance()
            requeue = self._pump(self._next_deadline(), on_record)
            after_records()
            queue.extendleft(reversed(requeue))

    def _rebalance(self) -> None:
        """Nothing left to send: samples waiting on one worker are asked back
        while another has free slots."""
        idle = sum(w.free_slots() for w in self.workers)
        for worker in self.workers:
            if idle <= 0:
                break
            if worker.waiting:
                idle -= worker.ask_back(idle)

    def _next_deadline(self) -> float:
        now = time.monotonic()
        soonest = now + 0.5
        for worker in self.workers:
            for started in worker.open_tools.values():
                soonest = min(soonest, started + self.tool_timeout_s + GRACE_S)
            for item in worker.inflight.values():  # a waiting one's `sent` is infinite
                soonest = min(soonest, item.sent + self.timeout_s + GRACE_S)
        return max(0.0, soonest - now)

    def _pump(self, wait: float, on_record: OnRecord | None) -> list[InFlight]:
        """One round of I/O and watchdog; the samples to send again."""
        requeue: list[InFlight] = []
        for worker in self.workers:
            if worker.outbox:
                self._write(worker)
        readers = {w.out_fd: w for w in self.workers}
        writers = [w.in_fd for w in self.workers if w.outbox]
        try:
            readable, _, _ = select.select(list(readers), writers, [], wait)
        except InterruptedError:
            readable = []
        for fd in readable:
            worker = readers[fd]
            try:
                data = os.read(fd, 1 << 20)
            except OSError:
                data = b""
            if not data:
                requeue += self._crashed(worker, on_record)
                continue
            requeue += self._received(worker, data, on_record)
        requeue += self._watchdog(on_record)
        return requeue

    def _write(self, worker: Worker) -> None:
        try:
            written = os.write(worker.in_fd, worker.outbox)
            del worker.outbox[:written]
        except BlockingIOError:
            pass
        except OSError:
            worker.outbox.clear()  # the process is gone; its pipe's end says so

    def _received(self, worker: Worker, data: bytes, on_record: OnRecord | None) -> list[InFlight]:
        """Handle a worker's protocol lines; the samples it gave back."""
        lines = (worker.inbox + data).split(b"\n")
        worker.inbox = lines.pop()
        now = time.monotonic()
        back: list[InFlight] = []
        for line in lines:
            tag, _, rest = line.partition(b"\t")
            if tag == b"c":
                if rest.isdigit() and (k := int(rest)) in worker.inflight:
                    worker.calls[k] = worker.calls.get(k, 0) + 1
                continue
            parts = rest.split(b"\t", 2 if tag == b"r" else 1)
            if tag in (b"r", b"s", b"e") and (
                len(parts) != (3 if tag == b"r" else 2)
                or not all(p.isdigit() for p in parts[: 2 if tag != b"r" else 1])
            ):
                continue  # not a protocol line (user code wrote to the channel): its sample ends when the worker does
            if tag == b"u":
                if rest.isdigit() and (item := worker.given_back(int(rest))) is not None:
                    back.append(item)
                continue
            if tag == b"r":
                k_text, kind, record = parts
                k = int(k_text)
                item = worker.finished(k, now)
                if item is None:
                    continue
                if worker.open_tools:
                    for key in [key for key in worker.open_tools if key[0] == k]:
                        del worker.open_tools[key]
                if on_record is not None:
                    on_record(item.sample, None if kind == b"-" else kind.decode(errors="replace"), record)
            elif tag == b"s":
                k_text, n_text = rest.split(b"\t")
                worker.open_tools[(int(k_text), int(n_text))] = now
            elif tag == b"e":
                k_text, n_text = rest.split(b"\t")
                worker.open_tools.pop((int(k_text), int(n_text)), None)
            elif tag == b"ready":
                worker.ready = True
                worker.info = orjson.loads(rest) if rest else None
            elif tag == b"w":
                text = orjson.loads(rest)
                if text not in self.warnings:
                    self.warnings.append(text)
                    if self.on_warning is not None:
                        self.on_warning(text)
            elif tag == b"fatal":
                raise WorkerSetupError(orjson.loads(rest))
        return back

    def _carry_calls(self, worker: Worker) -> None:
        """The requests its samples made, kept for their next attempt (the worker is going)."""
        for k, calls in worker.calls.items():
            self.earlier_calls[k] = self.earlier_calls.get(k, 0) + calls
        worker.calls.clear()

    def _replace(self, worker: Worker) -> Worker:
        worker.kill()
        self.replaced += 1
        fresh = self._spawn(self.workers.index(worker))
        self.workers[self.workers.index(worker)] = fresh
        return fresh

    def _crashed(self, worker: Worker, on_record: OnRecord | None) -> list[InFlight]:
        worker.proc.wait()
        if not worker.ready:
            tail = log_tail(worker.log)
            raise UsageError(
                "a run worker exited before it was ready"
                + (f"; its last output:\n{tail}" if tail else f" (exit code {worker.proc.returncode})")
            )
        code = worker.proc.returncode
        if (executor_code := worker.executor_exit()) is not None:
            code = executor_code  # the tools' process ended first (its model caller follows it)
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = log_tail(worker.log)
        requeue = []
        now = time.monotonic()
        # The samples with a tool call running when the process died are the
        # suspects; with none, every sample in flight is.
        suspects = {k for k, _n in worker.open_tools} & set(worker.inflight) or worker.running()
        self._carry_calls(worker)
        for k, item in worker.inflight.items():
            if k in suspects:
                item.crashes += 1
            if item.crashes >= MAX_CRASHES and on_record is not None:
                message = f"the run worker crashed twice while this sample was in flight: the process {how}"
                on_record(
                    item.sample,
                    "worker-crash",
                    _error_record(
                        item.sample,
                        "worker-crash",
                        message + (f"; its last output:\n{tail}" if tail else ""),
                        now - item.sent,
                        self.earlier_calls.pop(k, 0),
                    ),
                )
            else:
                requeue.append(item)
        self._replace(worker)
        return requeue

    def _watchdog(self, on_record: OnRecord | None) -> list[InFlight]:
        now = time.monotonic()
        requeue: list[InFlight] = []
        for worker in list(self.workers):
            culprit, kind, message = None, None, None
            for (k, _n), started in worker.open_tools.items():
                if now - started > self.tool_timeout_s + GRACE_S and k in worker.inflight:
                    culprit, kind = k, "tool-timeout"
                    message = (
                        f"a tool call did not finish within the {self.tool_timeout_s:g} s tool timeout and did not "
                        "yield (a synchronous loop?): its worker was stopped and replaced"
                    )
                    break
            if culprit is None:
                for k, item in worker.inflight.items():
                    if now - item.sent > self.timeout_s + GRACE_S:
                        culprit, kind = k, "timeout"
                        message = (
                            f"the sample did not finish within the {self.timeout_s:g} s timeout and its worker "
                            "stopped responding: the worker was stopped and replaced"
                        )
                        break
            if culprit is None:
                continue
            item = worker.inflight.pop(culprit)
            self._carry_calls(worker)
            if on_record is not None:
                assert kind is not None and message is not None  # set with the culprit
                calls = self.earlier_calls.pop(culprit, 0)
                on_record(item.sample, kind, _error_record(item.sample, kind, message, now - item.sent, calls))
            requeue.extend(worker.inflight.values())
            self._replace(worker)
        return requeue
