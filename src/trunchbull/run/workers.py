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
  the other samples that were in flight on it are sent again (their earlier
  requests counted in their `attempts`, below);
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

import time
from collections import deque
from pathlib import Path
from typing import Callable

import orjson

from trunchbull.common.diagnostics import UsageError
from trunchbull.node.protocol import RUN_WORKER, ProtocolError
from trunchbull.node.toolchain import Toolchain
from trunchbull.node.worker_pool import ProcessPool, WorkerProcess
from trunchbull.run.samples import Sample
from trunchbull.run.scheduling import PREFETCH, InFlight, WorkerState, shares
from trunchbull.run.worker_units import UnitPaths, spawn_unit
from trunchbull.rundir.schema import error_record

GRACE_S = 1.0  # after a deadline, the worker's own report is waited for this long
REFILL_BELOW = 512  # run(refill=…): more samples are asked for when fewer wait
REFILL_WAIT_S = 0.01  # ... and asked again at least this often
MAX_CRASHES = 2
START_TIMEOUT_S = 120  # a local model is loaded before its worker is ready


OnRecord = Callable[[Sample, "str | None", bytes], None]  # (sample, error kind or None, record JSON)
OnStep = Callable[[Sample, bytes], None]  # batch mode: (sample, its step JSON), its loop going on


class WorkerSetupError(Exception):
    """The model could not be made (reported by a worker before any call)."""


def _error_record(sample: Sample, kind: str, message: str, elapsed_s: float, calls: int = 0, *, priced: bool) -> bytes:
    """`calls`: the provider requests the sample made before it ended so (its attempts, at least 1)."""
    record = error_record(sample.case_id, sample.repeat, kind, message, elapsed_s, priced=priced)
    record["attempts"] = max(1, calls)
    return orjson.dumps(record)


class ModelCallerPool:
    """A run's model callers (worker units) on a ProcessPool, and the scheduler that feeds them."""

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
        self.priced = config.get("prices") is not None  # a record's cost is known (run/prices.py)
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
        self.workers: list[WorkerState] = []
        self._processes = ProcessPool(self._start_unit, size)
        self.earlier_calls: dict[int, int] = {}  # sample k → requests made on workers since replaced
        self.on_step: OnStep | None = None  # batch mode: a sample's step whose loop goes on (`b`)

    # ------------------------------------------------------------------ processes

    def _start_unit(self, index: int) -> WorkerProcess:
        paths = UnitPaths(self.read_paths, self.tool_paths if self._config["tools"] else None, self.cwd)
        return spawn_unit(self.tc, paths, self.env, self.node_flags)

    def _spawn(self, index: int, replacing: bool = False) -> WorkerState:
        """A worker in slot `index`, sent the run's configuration (`replacing`: in place of the slot's)."""
        process = self._processes.replace(index) if replacing else self._processes.worker(index)
        worker = WorkerState(process, self._shares[index], self._prefetch)
        self._processes.send(index, orjson.dumps({**self._config, "slots": worker.slots}) + b"\n")
        return worker

    def spawn(self) -> None:
        """Start every worker (they make the model while the caller goes on)."""
        self.workers = [self._spawn(index) for index in range(self.size)]

    def wait_ready(self) -> None:
        """Wait until every worker has made the model (a WorkerSetupError
        when one cannot: nothing has been called)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not all(w.ready for w in self.workers):
            self._pump(min(1.0, max(0.0, deadline - time.monotonic())), on_record=None)
            if time.monotonic() > deadline:
                tail = next((t for w in self.workers if not w.ready and (t := w.process.log_excerpt())), "")
                raise UsageError(
                    f"the run's Node workers did not start within {START_TIMEOUT_S} s"
                    + (f"; the output of one:\n{tail}" if tail else "")
                )

    def ready_info(self) -> list[dict]:
        """What each worker said when it was ready (in pool order)."""
        return [w.info or {} for w in self.workers]

    def close(self) -> None:
        """End of input: the workers exit (their executors after them)."""
        self._processes.close(timeout_s=5.0)
        self.workers = []

    def kill_all(self) -> None:
        self._processes.kill_all()
        self.workers = []

    # ------------------------------------------------------------------ scheduling

    def run(
        self,
        samples: list[Sample],
        on_record: OnRecord,
        after_records: Callable[[], None] = lambda: None,
        admit: Callable[[Sample], bool | None] | None = None,
        refill: Callable[[], "list[Sample] | None"] | None = None,
    ) -> None:
        """Run every sample; `on_record` gets each finished one (in the order
        they finish), and `after_records` is called once the records that
        arrived together have all been handed over. Returns when all are
        recorded, or, once `admit` (a budget) refuses a sample (False), when
        the samples already sent are; `admit` None: not yet (ask again after
        the next records). `refill`: more samples as they become available
        (batch mode: replies as they stream in), asked whenever few are
        waiting; [] for none yet, None when there will be no more."""
        queue: deque[InFlight] = deque(InFlight(s, 0.0) for s in samples)
        more = refill is not None
        while queue or more or any(w.inflight for w in self.workers):
            if more and refill is not None and len(queue) < REFILL_BELOW:
                got = refill()
                if got is None:
                    more = False
                else:
                    queue.extend(InFlight(s, 0.0) for s in got)
            if queue:
                now = time.monotonic()
                while queue:
                    worker = max(self.workers, key=WorkerState.preference)
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
            wait = self._next_deadline()
            requeue = self._pump(min(wait, REFILL_WAIT_S) if more else wait, on_record)
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
        for event in self._processes.poll(wait):
            worker = self.workers[event.index]
            try:
                requeue += self._received(worker, event.lines, on_record)
            except ProtocolError as err:
                event.garbled = str(err)
            if event.garbled is not None:
                if not worker.ready:
                    raise UsageError(f"a run worker could not start: {event.garbled}")
                requeue += self._crashed(worker, on_record, f"was stopped: {event.garbled}")
            elif event.ended:
                requeue += self._crashed(worker, on_record)
        requeue += self._watchdog(on_record)
        return requeue

    def _received(self, worker: WorkerState, lines: list[bytes], on_record: OnRecord | None) -> list[InFlight]:
        """Handle a worker's protocol lines (node/protocol.py); the samples it
        gave back. ProtocolError: a line that is not a message."""
        channel = RUN_WORKER
        now = time.monotonic()
        back: list[InFlight] = []
        for line in lines:
            tag, fields = channel.frame(line)
            if tag == b"r":
                k = channel.number(fields[0], "a sample number")
                item = worker.finished(k, now)
                if item is None:
                    continue
                if worker.open_tools:
                    for key in [key for key in worker.open_tools if key[0] == k]:
                        del worker.open_tools[key]
                if on_record is not None:
                    kind = fields[1]
                    on_record(item.sample, None if kind == b"-" else kind.decode(errors="replace"), fields[2])
            elif tag == b"b":
                k = channel.number(fields[0], "a sample number")
                item = worker.finished(k, now)
                if item is None:
                    continue
                for key in [key for key in worker.open_tools if key[0] == k]:
                    del worker.open_tools[key]
                if self.on_step is not None and on_record is not None:
                    self.on_step(item.sample, fields[1])
            elif tag == b"c":
                if (k := channel.number(fields[0], "a sample number")) in worker.inflight:
                    worker.calls[k] = worker.calls.get(k, 0) + 1
            elif tag == b"s":
                key = (channel.number(fields[0], "a sample number"), channel.number(fields[1], "a tool call number"))
                worker.open_tools[key] = now
            elif tag == b"e":
                key = (channel.number(fields[0], "a sample number"), channel.number(fields[1], "a tool call number"))
                worker.open_tools.pop(key, None)
            elif tag == b"u":
                if (item := worker.given_back(channel.number(fields[0], "a sample number"))) is not None:
                    back.append(item)
            elif tag == b"ready":
                info = channel.json(fields[0], "its description")
                worker.ready, worker.info = True, info if type(info) is dict else None
            elif tag == b"w":
                text = channel.json(fields[0], "a warning")
                if type(text) is not str:
                    raise ProtocolError(f"{channel.process} sent a warning that is not a string")
                if text not in self.warnings:
                    self.warnings.append(text)
                    if self.on_warning is not None:
                        self.on_warning(text)
            else:  # fatal
                raise WorkerSetupError(channel.fatal(fields))
        return back

    def _carry_calls(self, worker: WorkerState) -> None:
        """The requests its samples made, kept for their next attempt (the worker is going)."""
        for k, calls in worker.calls.items():
            self.earlier_calls[k] = self.earlier_calls.get(k, 0) + calls
        worker.calls.clear()

    def _replace(self, worker: WorkerState) -> WorkerState:
        index = self.workers.index(worker)
        fresh = self.workers[index] = self._spawn(index, replacing=True)
        return fresh

    @property
    def replaced(self) -> int:
        """Workers killed and started again."""
        return self._processes.replaced

    def _crashed(self, worker: WorkerState, on_record: OnRecord | None, garbled: str | None = None) -> list[InFlight]:
        """The worker died (or, `garbled`, sent something that is not a message and is stopped)."""
        process = worker.process
        if garbled is not None:
            process.kill()
        code = process.proc.wait()
        if not worker.ready:
            tail = process.log_excerpt()
            raise UsageError(
                "a run worker exited before it was ready"
                + (f"; its output:\n{tail}" if tail else f" (exit code {code})")
            )
        if (executor_code := worker.executor_exit()) is not None:
            code = executor_code  # the tools' process ended first (its model caller follows it)
        how = garbled or (f"was killed by signal {-code}" if code < 0 else f"exited with code {code}")
        tail = process.log_excerpt()
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
                        message + (f"; its output:\n{tail}" if tail else ""),
                        now - item.sent,
                        self.earlier_calls.pop(k, 0),
                        priced=self.priced,
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
                record = _error_record(item.sample, kind, message, now - item.sent, calls, priced=self.priced)
                on_record(item.sample, kind, record)
            requeue.extend(worker.inflight.values())
            self._replace(worker)
        return requeue
