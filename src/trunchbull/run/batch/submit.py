"""Sending requests in batches (SPEC §8.8): the requests split by the
provider's limits, each batch's intent journaled (and fsynced) before it is
created, its reference journaled as soon as the create is answered.

The one moment a request can end up in two live batches is a create whose
answer never came (the run killed while it waited, a broken connection, a
5xx): the batch may exist. Such an intent stays open until the provider's
batches are listed: one created since the intent (minus a clock skew), of
the intent's size, that this run does not know is adopted as the intent's
batch; none, and the intent is abandoned and its requests sent again. An
adopted batch whose results carry request IDs the intent does not hold was
not this run's (the IDs are salted with the run's nonce): it is dropped and
the intent's requests are sent again."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from datetime import datetime

from trunchbull.run.batch.caller import BatchCaller, CallerGone
from trunchbull.run.batch.loops import Loop
from trunchbull.run.providers import BatchLimits
from trunchbull.rundir.batch_journal import BatchJournal, Intent

LIMIT_SHARE = 0.8  # of the provider's byte limit: our estimate of a request's size is not its exact bytes
REQUEST_OVERHEAD = 512  # bytes a request's line adds around its content (model, settings, framing)
CLOCK_SKEW_S = 600.0  # how much earlier than our intent the provider may date the batch it made
LIST_PAGE = 100
LIST_PAGES = 20


@dataclass
class Created:
    intent: Intent | None  # None: the batch caller could not start; nothing was sent
    ref: dict | None  # None: refused (definitely no batch), or lost (the intent is open)
    lost: bool = False
    message: str = ""


def groups(loops: list[Loop], limits: BatchLimits, tool_bytes: dict[str, int]) -> list[list[tuple[Loop, bytes]]]:
    """The requests (each loop's next one) in batches within the provider's limits, with one
    definition per tool name in a batch (the AI SDK requires it: a case may offer a release tool
    under another name)."""
    budget = int(limits.bytes * LIMIT_SHARE)
    out: list[tuple[list[tuple[Loop, bytes]], dict[str, str], list[int]]] = []
    for loop in loops:
        line = loop.request_line(loop.next_id())
        names = {_offered(e): _release(e) for e in loop.sample.case.get("tools") or []}
        size = len(line) + REQUEST_OVERHEAD + sum(tool_bytes.get(r, 0) for r in names.values())
        for requests, tools, used in out:
            if len(requests) < limits.requests and used[0] + size <= budget:
                if all(tools.get(o, r) == r for o, r in names.items()):
                    requests.append((loop, line))
                    tools.update(names)
                    used[0] += size
                    break
        else:
            out.append(([(loop, line)], dict(names), [size]))
    return [requests for requests, _tools, _used in out]


def _offered(entry: object) -> str:
    return entry if isinstance(entry, str) else entry["as"]  # type: ignore[index]


def _release(entry: object) -> str:
    return entry if isinstance(entry, str) else entry["tool"]  # type: ignore[index]


def create(caller: BatchCaller, journal: BatchJournal, requests: list[tuple[Loop, bytes]]) -> Created:
    """One batch of `requests`: its intent journaled first, then created."""
    try:
        caller.ready()
    except CallerGone as err:  # nothing was sent: the requests wait for the next round
        return Created(None, None, message=str(err))
    intent = Intent(journal.state.next_intent(), time.time(), [loop.next_id() for loop, _line in requests])
    journal.add({"e": "intent", "intent": intent.number, "at": intent.at, "requests": intent.requests})
    intent = journal.state.intents[intent.number]
    try:
        outcome = caller.start([line for _loop, line in requests])
    except CallerGone as err:
        return Created(intent, None, lost=True, message=str(err))
    if outcome.tag == "started":
        ref = outcome.value.get("ref")
        if type(ref) is not dict or type(ref.get("id")) is not str:
            return Created(intent, None, lost=True, message="the batch caller's answer held no batch reference")
        journal.add({"e": "batch", "intent": intent.number, "ref": ref, "at": time.time(), "adopted": False})
        return Created(intent, ref)
    message = str(outcome.value.get("message"))
    if outcome.tag == "refused" and outcome.value.get("definite") is True:
        journal.add({"e": "abandoned", "intent": intent.number, "why": message})
        return Created(intent, None, message=message)
    return Created(intent, None, lost=True, message=message)


def _created_at(value: object) -> float | None:
    if type(value) is not str:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def find_lost(caller: BatchCaller, journal: BatchJournal, intent: Intent) -> dict | None:
    """Resolve an open intent: its batch, adopted (journaled), or None (abandoned: none was made).
    CallerGone when the provider cannot be asked now (the intent stays open)."""
    known = set(journal.state.refs)
    candidates = []
    cursor = None
    for _page in range(LIST_PAGES):
        outcome = caller.list_batches(LIST_PAGE, cursor)
        if outcome.tag != "listed":
            raise CallerGone(f"listing the provider's batches failed: {outcome.value.get('message')}")
        older = False
        for listed in outcome.value.get("batches") or []:
            created = _created_at(listed.get("createdAt"))
            if created is not None and created < intent.at - CLOCK_SKEW_S:
                older = True  # newest first: the rest are older still
                continue
            ref = listed.get("ref") or {}
            counts = listed.get("requestCounts") or {}
            if ref.get("id") in known or counts.get("total") != len(intent.requests):
                continue
            candidates.append((created if created is not None else intent.at, ref))
        cursor = outcome.value.get("nextCursor")
        if older or not cursor:
            break
    if not candidates:
        journal.add({"e": "abandoned", "intent": intent.number, "why": "no batch of the provider's matches it"})
        return None
    _created, ref = min(candidates, key=lambda c: abs(c[0] - intent.at))
    journal.add({"e": "batch", "intent": intent.number, "ref": ref, "at": time.time(), "adopted": True})
    print(
        f"trunchbull: batch {ref['id']} was created for {len(intent.requests):,} request(s) whose create's answer "
        "was lost; it is followed as this run's",
        file=sys.stderr,
    )
    return ref
