"""Each sample's tool loop in batch mode (SPEC §8.8): the step it is at,
what its next request sends, every request it had in a batch; rebuilt from
the run's batch journal (rundir/batch_journal.py) on --resume.

A request's ID (the batch API's custom_id, `^[A-Za-z0-9_-]{1,64}$` for
every provider) is `TAG-STEP-ATTEMPT`: TAG a hash of the run's nonce, the
case ID and the repeat (case IDs hold characters the APIs refuse; the nonce
makes the IDs this run's own, so that a batch another run made is never
taken for one of ours), STEP the model call of the sample, ATTEMPT how
many times that step was sent before."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import orjson

from trunchbull.run.samples import Sample
from trunchbull.rundir.batch_journal import JournalState


def sample_tag(nonce: str, sample: Sample) -> str:
    return hashlib.sha256(f"{nonce}\0{sample.case_id}\0{sample.repeat}".encode()).hexdigest()[:24]


def parse_request_id(request_id: str) -> tuple[str, int, int] | None:
    """(tag, step, attempt) of one of this run's request IDs."""
    tag, _, rest = request_id.partition("-")
    step, _, attempt = rest.partition("-")
    if len(tag) != 24 or not step.isdigit() or not attempt.isdigit():
        return None
    return tag, int(step), int(attempt)


@dataclass(slots=True)
class Loop:
    sample: Sample
    tag: str
    steps: list[dict] = field(default_factory=list)  # each finished step, as the worker saved it
    messages: list | None = None  # the conversation its next request sends (None: the prompt)
    repairs: list[str] = field(default_factory=list)
    ran: list = field(default_factory=list)  # [tool, input] of every tool execution so far
    attempt: int = 0  # the next request's attempt number at this step
    step_failures: int = 0  # requests of this step that did not succeed (against --retries)
    failures: int = 0  # requests of the sample that did not succeed (its record's attempts - 1)
    requests: list[dict] = field(default_factory=list)  # the record's `batch`
    first_sent: float | None = None  # when its first request was sent (time.time())
    waiting: str | None = None  # the ID of its request a live batch holds

    @property
    def step(self) -> int:
        return len(self.steps)

    def next_id(self) -> str:
        return f"{self.tag}-{self.step}-{self.attempt}"

    def request_line(self, request_id: str) -> bytes:
        """What the batch caller sends for its next step (never the case's data)."""
        case = self.sample.case
        line: dict = {"id": request_id, "system": case.get("systemPrompt"), "tools": case.get("tools") or []}
        if self.messages is None:
            line["prompt"] = case["prompt"]
        else:
            line["messages"] = self.messages
        return orjson.dumps(line) + b"\n"

    def sent(self, request_id: str, at: float) -> None:
        self.waiting = request_id
        if self.first_sent is None:
            self.first_sent = at

    def outcome(self, request_id: str, batch: str, status: str) -> None:
        """What came of one of its requests (the record's `batch` entry)."""
        parsed = parse_request_id(request_id)
        step = parsed[1] if parsed else self.step
        self.requests.append({"batch": batch, "customId": request_id, "step": step, "status": status})
        if self.waiting == request_id:
            self.waiting = None

    def failed(self, counted: bool) -> None:
        """Its request at this step did not succeed; it is sent again (`counted`: against --retries)."""
        self.attempt += 1
        if counted:
            self.step_failures += 1
            self.failures += 1

    def advanced(self, step: dict) -> None:
        """A step finished and the loop goes on: `step` as the worker sent it."""
        self.steps.append(step["saved"])
        self.messages = step["next"]
        self.repairs = step.get("repairs") or []
        self.ran = [*self.ran, *(step.get("ran") or [])]
        self.attempt = 0
        self.step_failures = 0

    def work(self, result: dict | None, error: dict | None, done: dict | None = None) -> BatchWork:
        """The model caller's task: take the reply `result` as the next step (or end with `error`);
        `done`: an entry of the record's `batch` not yet in `requests` (its reply, taken)."""
        latency = 0.0 if self.first_sent is None else max(0.0, time.time() - self.first_sent) * 1000
        payload: dict = {
            "latencyMs": round(latency, 3),
            "attempts": 1 + self.failures,
            "requests": self.requests if done is None else [*self.requests, done],
        }
        # (what is empty is left out: a batch caller may hold 25,000 of these at once)
        for name, value in (("result", result), ("error", error), ("messages", self.messages)):
            if value is not None:
                payload[name] = value
        for name, value in (("earlier", self.steps), ("replay", self.ran), ("repairs", self.repairs)):
            if value:
                payload[name] = value
        return BatchWork(self, payload)


class BatchWork:
    """A sample's step for the run's workers (run/workers.py takes it as it takes a sample)."""

    __slots__ = ("loop", "payload", "k", "case", "repeat")

    def __init__(self, loop: Loop, payload: dict):
        self.loop = loop
        self.payload = payload
        sample = loop.sample
        self.k, self.case, self.repeat = sample.k, sample.case, sample.repeat

    @property
    def case_id(self) -> str:
        return self.case["id"]

    @property
    def key(self) -> str | None:
        return self.loop.sample.key

    def request(self, request_id: str | None = None) -> bytes:
        """Its line for a model caller (with `request_id`: for the batch caller, whose reply it is)."""
        case = self.case
        line = {
            "k": self.k,
            "caseId": case["id"],
            "repeat": self.repeat,
            "system": case.get("systemPrompt"),
            "prompt": case["prompt"],
            "tools": case.get("tools") or [],
            "batch": self.payload,
        }
        if request_id is not None:
            line["id"] = request_id
        return orjson.dumps(line) + b"\n"


def rebuilt_loops(state: JournalState, todo: list[Sample]) -> dict[str, Loop]:
    """Every sample still to record, at the step the journal says, by tag."""
    assert state.nonce is not None
    loops = {}
    for sample in todo:
        tag = sample_tag(state.nonce, sample)
        loops[tag] = Loop(sample, tag)
    sent: dict[str, list[tuple[int, int, str, str]]] = {}  # tag → (step, attempt, request ID, batch)
    for intent in state.intents.values():
        for request_id in intent.requests:
            parsed = parse_request_id(request_id)
            loop = loops.get(parsed[0]) if parsed else None
            if loop is None or parsed is None:
                continue
            loop.first_sent = intent.at if loop.first_sent is None else min(loop.first_sent, intent.at)
            if intent.batch is not None:
                sent.setdefault(loop.tag, []).append((parsed[1], parsed[2], request_id, intent.batch))
    for tag, requests in sent.items():
        _replay(loops[tag], sorted(requests), state)
    return loops


def _replay(loop: Loop, requests: list[tuple[int, int, str, str]], state: JournalState) -> None:
    """A sample's requests, in order of step and attempt, played back onto its loop."""
    for step, attempt, request_id, batch in requests:
        if step != loop.step:
            continue  # of a step it has passed (or a gap: never taken)
        done = state.steps.get(request_id)
        item = state.items.get(request_id)
        if done is not None:
            loop.outcome(request_id, batch, "succeeded")
            loop.advanced(done["step"])
        elif item is not None:
            loop.outcome(request_id, batch, item["status"])
            loop.attempt = attempt
            loop.failed(counted=item["status"] != "cancelled")
        elif batch not in state.read:
            loop.attempt = attempt
            loop.waiting = request_id  # a live batch holds it
        else:
            loop.attempt = attempt + 1  # accounted for as nothing: sent again
