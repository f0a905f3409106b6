"""A run in batch mode, from its first batch to its last record (SPEC
§8.8). Each round, the samples that need a model call are sent in batches
(submit.py); every `poll` seconds each live batch's status is asked for and
shown; an ended batch's results are read as they stream, each reply taken
as a live reply is (outcomes.py): a sample whose reply called tools runs
them and its next step joins the next round's batches; a sample whose loop
ended is recorded. A request that failed in a batch is sent again in a
later batch, up to --retries; one that expired or is missing from the
results too; one cancelled (--cancel-batches) on the next --resume.

Everything that decides what a resumed run does is in the journal
(rundir/batch_journal.py) before it happens: a kill at any moment, then
--resume, re-attaches to the live batches and sends no request a live batch
holds."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


from trunchbull.common.progress import duration
from trunchbull.run.batch.caller import CallerGone, ResultsBroken
from trunchbull.run.batch.loops import BatchWork, Loop, parse_request_id
from trunchbull.run.batch.outcomes import Outcomes
from trunchbull.run.batch.submit import create, find_lost, groups
from trunchbull.run.budget import Budget
from trunchbull.run.providers import BatchLimits
from trunchbull.rundir.batch_journal import Intent

PENDING = ("pending",)


@dataclass
class Live:
    ref: dict
    intent: Intent
    shown: tuple = ()
    read_failures: int = 0


@dataclass
class Reading:
    """One reading of a batch's results."""

    batch: str
    expected: set[str]  # the request IDs its intent holds
    adopted: bool  # found by listing: its results say whether it is this run's
    seen: set[str] = field(default_factory=set)
    done: bool = False
    broken: str | None = None  # why the reading broke off
    foreign: bool = False


@dataclass(kw_only=True)
class BatchRun(Outcomes):
    limits: BatchLimits
    tool_bytes: dict[str, int]
    poll_s: float
    budget: Budget | None = None
    live: dict[str, Live] = field(default_factory=dict)
    unresolved: list[Intent] = field(default_factory=list)
    admitted: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        super().__post_init__()
        state = self.journal.state
        self.unresolved = state.open_intents()
        for batch in state.live():
            intent = state.intent_of(batch)
            if intent is not None:
                self.live[batch] = Live(state.refs[batch], intent)
        held = {loop.tag for intent in self.unresolved for loop in self._loops_of(intent.requests)}
        self.pending = [loop for loop in self.loops.values() if loop.waiting is None and loop.tag not in held]
        self.admitted = {loop.sample.k for loop in self.loops.values() if loop.first_sent is not None}
        if self.budget is not None:  # (sent before a kill: not recorded yet, so still to be paid)
            for loop in self.loops.values():
                if loop.first_sent is not None:
                    self.budget.hold(loop.sample)

    # ------------------------------------------------------------------ the loop

    def run(self, cancel: bool) -> None:
        """Until every sample is recorded (or, `cancel`: every live batch is cancelled and read;
        or the budget stopped new samples and the batches sent are read)."""
        if cancel:
            self._cancel_all()
        while True:
            self._resolve()
            if not cancel:
                self._submit()
            if not self.live and not self.unresolved and (cancel or not self.pending):
                return
            self._poll()
            if self.live or self.unresolved:
                time.sleep(self.poll_s)

    def _resolve(self) -> None:
        """Intents whose create's answer was lost: their batch found, or their requests sent again."""
        still = []
        for intent in self.unresolved:
            try:
                ref = find_lost(self.caller, self.journal, intent)
            except CallerGone as err:
                print(f"trunchbull: warning: {err}; asked again at the next poll", file=sys.stderr)
                still.append(intent)
                continue
            loops = self._loops_of(intent.requests)
            if ref is None:
                for loop in loops:
                    loop.attempt += 1  # the ID of a request never sent is not used again
                self.pending += loops
            else:
                self.live[ref["id"]] = Live(ref, intent)
                for loop in loops:
                    loop.sent(loop.next_id(), intent.at)
        self.unresolved = still

    def _submit(self) -> None:
        if not self.pending:
            return
        ready = [loop for loop in self.pending if self._admit(loop)]
        self.pending = []
        self.journal.sync()
        self.recorder.log.sync()
        for requests in groups(ready, self.limits, self.tool_bytes):
            created = create(self.caller, self.journal, requests)
            loops = [loop for loop, _line in requests]
            if created.intent is None:
                print(
                    f"trunchbull: warning: {created.message}; the requests are sent at the next poll", file=sys.stderr
                )
                self.pending += loops
            elif created.ref is not None:
                self.live[created.ref["id"]] = Live(created.ref, created.intent)
                for loop in loops:
                    loop.sent(loop.next_id(), created.intent.at)
                self._show(self.live[created.ref["id"]], "created")
            elif created.lost:
                print(
                    f"trunchbull: warning: the answer to creating a batch of {len(loops):,} request(s) was lost "
                    f"({created.message}); the provider's batches are listed to find it",
                    file=sys.stderr,
                )
                self.unresolved.append(created.intent)
            else:
                print(
                    f"trunchbull: warning: a batch of {len(loops):,} request(s) was refused: {created.message}",
                    file=sys.stderr,
                )
                work: list[BatchWork] = []
                for loop in loops:
                    self._failed(loop, loop.next_id(), "", "failed", {"message": created.message}, work)
                self._process(work)

    def _admit(self, loop: Loop) -> bool:
        """A sample's first request counts against the budget; refused, it is not started at all."""
        if self.budget is None or loop.sample.k in self.admitted:
            return True
        if self.budget.admit(loop.sample) is True:
            self.admitted.add(loop.sample.k)
            return True
        return False

    # ------------------------------------------------------------------ polling

    def _poll(self) -> None:
        for batch, live in list(self.live.items()):
            try:
                outcome = self.caller.status(live.ref)
            except CallerGone as err:
                print(f"trunchbull: warning: batch {batch}: {err}; asked again at the next poll", file=sys.stderr)
                continue
            if outcome.tag != "status":
                print(
                    f"trunchbull: warning: batch {batch}: {outcome.value.get('message')}; asked again", file=sys.stderr
                )
                continue
            status = outcome.value
            self._show(live, status.get("rawStatus") or status.get("status"), status.get("requestCounts"))
            if status.get("status") not in PENDING:
                self._read(batch, live)

    def _show(self, live: Live, raw: object, counts: dict | None = None) -> None:
        counts = counts or {}
        shown = (raw, counts.get("completed"), counts.get("failed"))
        if shown == live.shown:
            return
        live.shown = shown
        total = counts.get("total") or len(live.intent.requests)
        elapsed = duration(max(0.0, time.time() - live.intent.at))
        print(
            f"trunchbull: batch {live.ref['id']}: {raw}; {counts.get('completed') or 0:,} of {total:,} done, "
            f"{counts.get('failed') or 0:,} failed; {elapsed} elapsed",
            file=sys.stderr,
        )

    # ------------------------------------------------------------------ results

    def _read(self, batch: str, live: Live) -> None:
        """The ended batch's results, each reply handed to the workers as it streams in (the
        batch caller goes on reading while the workers take the replies already read)."""
        reading = Reading(batch, set(live.intent.requests), batch in self.journal.state.adopted)
        # with no model callers (no case has tools), the batch caller takes the replies itself
        taken_here = self._waiting_in(live.intent.requests, batch) if self.pool is None else None
        try:
            self.caller.open_results(live.ref, taken_here)
        except CallerGone as err:
            reading.broken = str(err)
        else:
            if self.pool is None:  # (what ends in error is taken once the reading is over)
                later: list[BatchWork] = []
                while (more := self._refill(reading)) is not None:
                    later += more
                self._process(later)
            else:
                self._process([], refill=lambda: self._refill(reading))
            self._process(self._deferred_now())
        if reading.foreign:
            self.caller.abandon_results()
            return self._foreign(batch, live)
        if reading.broken is not None:
            live.read_failures += 1
            if live.read_failures <= self.retries:
                print(
                    f"trunchbull: warning: batch {batch}: reading its results broke off ({reading.broken}); read "
                    "again at the next poll",
                    file=sys.stderr,
                )
                return None
            print(
                f"trunchbull: warning: batch {batch}: its results could not be read ({reading.broken}); what is "
                "missing is sent again",
                file=sys.stderr,
            )
        work: list[BatchWork] = []
        for request_id in sorted(reading.expected - reading.seen):
            parsed = parse_request_id(request_id)
            loop = self.loops.get(parsed[0]) if parsed else None
            if loop is not None and loop.waiting == request_id:
                missing = {"message": "the request is not in the batch's results"}
                self._failed(loop, request_id, batch, "missing", missing, work)
        self._process(work)
        self.recorder.log.flush()
        self.recorder.log.sync()  # the records before the line that says they are written
        self.journal.add({"e": "read", "batch": batch})
        del self.live[batch]
        return None

    def _refill(self, reading: "Reading") -> list[BatchWork] | None:
        """The replies read since the last call, as work for the workers; None once all are."""
        if reading.done:
            return None
        try:
            got, reading.done = self.caller.pull(0.0 if self.pool is not None else 0.05)
        except (ResultsBroken, CallerGone) as err:
            reading.broken, reading.done = str(err), True
            got = []
        work: list[BatchWork] = []
        for tag, value in got:
            if tag != "i":  # a reply the batch caller took on itself
                self._taken_here(tag, value, reading.batch, reading.seen)
                continue
            item = value
            request_id = item.get("id")
            if type(request_id) is not str or request_id in reading.seen:
                continue
            if request_id not in reading.expected:
                if reading.adopted and not reading.seen:  # an adopted batch that is not this run's
                    reading.foreign = reading.done = True
                    return work
                continue
            reading.seen.add(request_id)
            self._take(reading.batch, request_id, item, work)
        return work

    def _waiting_in(self, requests: list[str], batch: str) -> tuple[int, Iterator[bytes]]:
        """(how many, the request lines) of the samples still waiting on these requests, for the
        batch caller to take their replies itself (each as if it succeeded: a failed one is
        given back); made as they are sent."""
        loops = [loop for loop in self._loops_of(requests) if loop.waiting is not None]

        def lines() -> Iterator[bytes]:
            for loop in loops:
                assert loop.waiting is not None
                done = {"batch": batch, "customId": loop.waiting, "step": loop.step, "status": "succeeded"}
                yield loop.work(None, None, done).request(loop.waiting)

        return len(loops), lines()

    def _foreign(self, batch: str, live: Live) -> None:
        print(f"trunchbull: warning: batch {batch} is not this run's; its requests are sent again", file=sys.stderr)
        self.journal.add({"e": "foreign", "batch": batch})
        del self.live[batch]
        for loop in self._loops_of(live.intent.requests):
            loop.waiting = None
            loop.attempt += 1
            self.pending.append(loop)

    # ------------------------------------------------------------------ cancelling

    def _cancel_all(self) -> None:
        for batch, live in self.live.items():
            if batch in self.journal.state.cancelled:
                continue
            self.journal.add({"e": "cancel", "batch": batch})
            try:
                outcome = self.caller.cancel(live.ref)
            except CallerGone as err:
                outcome = None
                print(f"trunchbull: warning: batch {batch}: cancelling it failed: {err}", file=sys.stderr)
            if outcome is not None and outcome.tag != "cancelled":
                print(
                    f"trunchbull: warning: batch {batch}: cancelling it failed: {outcome.value.get('message')}",
                    file=sys.stderr,
                )
            else:
                print(f"trunchbull: batch {batch}: cancellation asked for", file=sys.stderr)
