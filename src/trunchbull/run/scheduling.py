"""The scheduler's state: how many workers and slots a run gets, and what
each worker is running, holding waiting and has been asked to give back
(SPEC §8.2). The processes and their protocol are run/workers.py's."""

from __future__ import annotations

import math
import subprocess
from collections import deque
from dataclasses import dataclass, field

import orjson

from trunchbull.node.worker_pool import WorkerProcess, pool_size
from trunchbull.run.samples import Sample

SAMPLES_PER_WORKER = 4  # below this many in flight per worker, another worker is not worth its start-up
PREFETCH = 32  # samples waiting in a worker beyond its slots (none for a local model)
MAX_WORKERS = 8


def worker_count(concurrency: int) -> int:
    return max(1, min(pool_size(), MAX_WORKERS, math.ceil(concurrency / SAMPLES_PER_WORKER)))


def shares(concurrency: int, size: int, per_worker: int | None) -> list[int]:
    """Each worker's slots: `concurrency` split as evenly as it goes (never
    more than `per_worker`), so that the pool never runs more than it."""
    base, extra = divmod(concurrency, size)
    return [min(base + (index < extra), per_worker or concurrency) for index in range(size)]


def local_model_plan(concurrency: int, samples: int) -> tuple[int, int]:
    """(workers, threads per model) for a model that runs in the workers: one
    model instance per worker generating one sample at a time, so one worker
    per core up to `-j` (and no more than there are samples to run), and the
    cores shared out among the models' threads (more threads than cores make
    llama.cpp's spinning threads wait on each other)."""
    cores = pool_size()
    workers = max(1, min(cores, MAX_WORKERS, concurrency, samples))
    return workers, max(1, cores // workers)


@dataclass
class InFlight:
    sample: Sample
    sent: float
    crashes: int = 0


@dataclass
class WorkerState:
    """The scheduler's state of one worker unit (`process`: the model caller,
    with its tool executor when the release has tools, killed and replaced
    together)."""

    process: WorkerProcess
    slots: int  # samples it runs at once
    prefetch: int  # samples it may hold waiting beyond those
    ready: bool = False
    info: dict | None = None  # what it said when ready
    inflight: dict[int, InFlight] = field(default_factory=dict)  # running or waiting in the worker
    waiting: deque[int] = field(default_factory=deque)  # of those, the ones not started yet (oldest first)
    asked_back: set[int] = field(default_factory=set)  # of those, the ones asked back
    open_tools: dict[tuple[int, int], float] = field(default_factory=dict)
    calls: dict[int, int] = field(default_factory=dict)  # provider requests sent, by sample in flight

    def room(self) -> int:
        return self.slots + self.prefetch - len(self.inflight) if self.ready else 0

    def _running_count(self) -> int:
        return len(self.inflight) - len(self.waiting)

    def free_slots(self) -> int:
        return self.slots - self._running_count() if self.ready else 0

    def preference(self) -> tuple[int, int]:
        """Where the next sample goes: free slots first, then room to wait."""
        return self.free_slots(), self.room()

    def assign(self, item: InFlight, now: float) -> None:
        if self._running_count() < self.slots:
            item.sent = now
        else:  # it waits in the worker: not started, so no deadline yet
            item.sent = math.inf
            self.waiting.append(item.sample.k)
        self.inflight[item.sample.k] = item
        self.process.outbox += item.sample.request()

    def finished(self, k: int, now: float) -> InFlight | None:
        """Sample k's record arrived: it leaves, and the oldest waiting sample takes its slot."""
        item = self.inflight.pop(k, None)
        if item is None:
            return None
        self.calls.pop(k, None)  # its record counts them
        self.asked_back.discard(k)
        if k in self.waiting:  # not started, as far as this side knew
            self.waiting.remove(k)
        elif self.waiting:
            started = self.waiting.popleft()
            self.inflight[started].sent = now
            self.asked_back.discard(started)  # too late: it runs here
        return item

    def given_back(self, k: int) -> InFlight | None:
        """Sample k came back unstarted."""
        if k not in self.asked_back:
            return None
        self.asked_back.discard(k)
        self.waiting.remove(k)
        return self.inflight.pop(k)

    def ask_back(self, most: int) -> int:
        """Ask for up to `most` of the newest waiting samples back; how many were asked."""
        ks = [k for k in reversed(self.waiting) if k not in self.asked_back][:most]
        if ks:
            self.asked_back.update(ks)
            self.process.outbox += orjson.dumps({"giveBack": ks}) + b"\n"
        return len(ks)

    def running(self) -> set[int]:
        return set(self.inflight) - set(self.waiting)

    def executor_exit(self) -> int | None:
        """The tool executor's exit status once it has ended (waited for
        briefly: the model caller exits when it sees its executor go), else None."""
        if not self.process.companions:
            return None
        try:
            return self.process.companions[0].wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return None
