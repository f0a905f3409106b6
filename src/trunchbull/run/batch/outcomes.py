"""What comes of each request read from a batch (SPEC §8.8): a reply is
taken through generateText, as a live reply is, by the run's model callers
(cases with tools, beside their tool executors) or by the batch caller
itself (no case has tools); the record it makes is written, or the step
whose loop goes on is journaled and its sample's next request waits for
the next round. A request that did not succeed is sent again, up to
--retries, or its sample ends in error."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from trunchbull.run.batch.caller import BatchCaller, CallerGone, ResultsBroken
from trunchbull.run.batch.loops import BatchWork, Loop, parse_request_id
from trunchbull.run.recording import Recorder
from trunchbull.run.workers import ModelCallerPool
from trunchbull.rundir.batch_journal import BatchJournal
from trunchbull.rundir.schema import error_record


def _checked_step(line: bytes) -> dict | None:
    """A step from a model caller (batch_step.mjs), checked for its shape before it is kept."""
    try:
        step = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(step) is not dict or type(step.get("saved")) is not dict or type(step.get("next")) is not list:
        return None
    saved = step["saved"]
    if type(saved.get("calls")) is not list or type(saved.get("results")) is not list:
        return None
    if type(step.get("ran", [])) is not list or type(step.get("repairs", [])) is not list:
        return None
    return step


@dataclass(kw_only=True)
class Outcomes:
    caller: BatchCaller
    pool: ModelCallerPool | None  # the model callers (None: no case has tools, the batch caller takes the replies)
    journal: BatchJournal
    loops: dict[str, Loop]  # the samples still to record, by tag
    recorder: Recorder
    retries: int
    pending: list[Loop] = field(default_factory=list)  # the samples whose next request is to be sent
    _deferred: list[BatchWork] = field(default_factory=list)
    _by_k: dict[int, Loop] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.pool is not None:
            self.pool.on_step = self._on_step  # type: ignore[assignment]  # (a BatchWork stands for its sample)
        self._by_k = {loop.sample.k: loop for loop in self.loops.values()}

    def _loops_of(self, requests: list[str]) -> list[Loop]:
        out = []
        for request in requests:
            parsed = parse_request_id(request)
            loop = self.loops.get(parsed[0]) if parsed else None
            if loop is not None:
                out.append(loop)
        return out

    def _taken_here(self, tag: str, value: tuple, batch: str, seen: set[str]) -> None:
        """A reply the batch caller took through generateText: its record, or its step."""
        loop = self._by_k.get(value[0])
        if loop is None or loop.waiting is None:
            return
        request_id = loop.waiting
        seen.add(request_id)
        loop.outcome(request_id, batch, "succeeded")
        work = loop.work(None, None)
        if tag == "r":
            self._on_record(work, value[1], value[2])
        else:
            self._on_step(work, value[1])
        self.recorder.after_records()

    def _take(self, batch: str, request_id: str, item: dict, work: list[BatchWork]) -> None:
        parsed = parse_request_id(request_id)
        loop = self.loops.get(parsed[0]) if parsed else None
        if loop is None or loop.waiting != request_id:
            return  # accounted for already (a second reading)
        status = item.get("status")
        if status == "taken":  # the batch caller took it before (a second reading)
            return
        if status == "succeeded" and type(item.get("result")) is dict:
            loop.outcome(request_id, batch, "succeeded")
            work.append(loop.work(item["result"], None))
        else:
            error: dict = item["error"] if type(item.get("error")) is dict else {}
            kind = status if status in ("expired", "cancelled") else "failed"
            self._failed(loop, request_id, batch, kind, error, work)

    def _failed(self, loop: Loop, request_id: str, batch: str, status: str, error: dict, work: list[BatchWork]) -> None:
        """A request that did not succeed: sent again, or (past --retries) its sample ends in error."""
        message = str(error.get("message") or f"the request {status}")
        if batch:  # (else its batch was refused: no batch holds it)
            self.journal.add({"e": "item", "batch": batch, "id": request_id, "status": status, "error": error})
            loop.outcome(request_id, batch, status)
        loop.waiting = None
        loop.failed(counted=status != "cancelled")
        if loop.step_failures <= self.retries:
            self.pending.append(loop)
            return
        if status == "failed":
            kind = "rate-limit" if error.get("statusCode") == 429 else "provider"
            code = error.get("statusCode") or error.get("code")
            message += f" ({'HTTP ' if error.get('statusCode') else ''}{code})" if code else ""
        else:
            kind = "batch-expired"
        message += f"; sent {loop.step_failures} time(s) in batches (--retries {self.retries})"
        work.append(loop.work(None, {"kind": kind, "message": message}))

    def _process(self, work: list[BatchWork], refill=None) -> None:
        while work or refill is not None:
            if self.pool is not None:
                self.pool.run(work, self._on_record, after_records=self.recorder.after_records, refill=refill)  # type: ignore[arg-type]
            elif work:  # no model callers: the batch caller takes them (no case has tools)
                self._steps_here(work)
            work, refill = self._deferred_now(), None

    def _steps_here(self, work: list[BatchWork]) -> None:
        try:
            taken = self.caller.steps([w.request() for w in work])
        except (CallerGone, ResultsBroken) as err:  # recorded here, then: they end in error anyway
            for w in work:
                error = w.payload.get("error") or {"kind": "provider", "message": str(err)}
                row = error_record(
                    w.case_id,
                    w.repeat,
                    error["kind"],
                    error["message"],
                    w.payload["latencyMs"] / 1000,
                    priced=self.recorder.priced,
                )
                row["attempts"], row["batch"] = w.payload["attempts"], w.payload["requests"]
                self._on_record(w, error["kind"], orjson.dumps(row))
            return
        for tag, value in taken:
            loop = self._by_k.get(value[0])
            if loop is None:
                continue
            if tag == "r":
                self._on_record(loop.work(None, None), value[1], value[2])
            elif tag == "b":
                self._on_step(loop.work(None, None), value[1])
        self.recorder.after_records()

    def _deferred_now(self) -> list[BatchWork]:
        work, self._deferred = self._deferred, []
        return work

    def _on_record(self, work: BatchWork, kind: str | None, record: bytes) -> None:
        earlier = self.pool.earlier_calls.pop(work.k, 0) if self.pool is not None else 0
        self.recorder.record(work, kind, record, earlier)  # type: ignore[arg-type]
        self.loops.pop(work.loop.tag, None)
        self._by_k.pop(work.k, None)  # (a recorded sample's loop is let go)

    def _on_step(self, work: BatchWork, line: bytes) -> None:
        loop = work.loop
        step = _checked_step(line)
        if step is None:  # not what a model caller sends: the sample ends here, saying so
            message = "the run worker sent a step that is not one (not JSON, or not its shape)"
            self._deferred.append(loop.work(None, {"kind": "record", "message": message}))
            return None
        last = loop.requests[-1]
        self.journal.add({"e": "step", "batch": last["batch"], "id": last["customId"], "step": step})
        loop.advanced(step)
        self.pending.append(loop)
