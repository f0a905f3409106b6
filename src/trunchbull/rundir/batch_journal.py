"""batches.jsonl, the journal of a run in batch mode (SPEC §8.8): what was
sent to the provider's batch API and what came of it, so that a run killed
at any moment is resumed from the run directory alone, and no request is
sent again while a live batch holds it.

Append only, one writer (the process holding the directory's lock), one
JSON object a line, `e` saying what it records:

  run        {nonce}: first, once; the salt of this run's request IDs
  intent     {intent, at, requests}: a batch is about to be created with
             these request IDs (written and fsynced before the create)
  batch      {intent, ref, at, adopted}: the batch made for an intent (the
             AI SDK's reference {version, id, provider}); `adopted`: found
             by listing the provider's batches, its create's reply lost
  abandoned  {intent, why}: no batch was made for the intent
  cancel     {batch}: its cancellation was asked for
  item       {batch, id, status, error}: a request that did not succeed
             (failed, expired, cancelled, or missing from the results)
  step       {batch, id, step}: a succeeded request whose sample's loop goes
             on (its step, the conversation of its next request)
  read       {batch}: every request of the batch is accounted for (a step,
             an item, or its sample's record in responses.jsonl)
  foreign    {batch}: an adopted batch turned out not to be this run's (its
             requests' IDs are not the intent's): the intent's requests are
             sent again

The lines that decide what a resumed run does with a batch (intent, batch,
abandoned, cancel, read) are fsynced before anything else happens; item and
step lines are written as they come and fsynced within a second and before
the next of those. One lost in a crash costs a second reading of the
batch's results (the provider keeps them), never a request sent again.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from trunchbull.common.jsonl import read_lines
from trunchbull.common.userfiles import MISSING, FileProblem, read_file

JOURNAL = "batches.jsonl"
SYNC_INTERVAL_S = 1.0
DURABLE = frozenset({"run", "intent", "batch", "abandoned", "cancel", "read", "foreign"})


@dataclass
class Intent:
    number: int
    at: float
    requests: list[str]
    batch: str | None = None  # the batch made for it
    abandoned: bool = False


@dataclass
class JournalState:
    """What a journal holds, line by line folded in."""

    nonce: str | None = None
    intents: dict[int, Intent] = field(default_factory=dict)
    refs: dict[str, dict] = field(default_factory=dict)  # batch ID → its reference, in creation order
    adopted: set[str] = field(default_factory=set)
    cancelled: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    items: dict[str, dict] = field(default_factory=dict)  # request ID → its `item` line
    steps: dict[str, dict] = field(default_factory=dict)  # request ID → its `step` line

    def fold(self, row: dict) -> None:
        kind = row.get("e")
        if kind == "run":
            self.nonce = self.nonce or row["nonce"]
        elif kind == "intent":
            self.intents[row["intent"]] = Intent(row["intent"], row["at"], list(row["requests"]))
        elif kind == "batch":
            intent = self.intents[row["intent"]]
            ref = row["ref"]
            intent.batch = ref["id"]
            self.refs[ref["id"]] = ref
            if row.get("adopted"):
                self.adopted.add(ref["id"])
        elif kind == "abandoned":
            self.intents[row["intent"]].abandoned = True
        elif kind == "cancel":
            self.cancelled.add(row["batch"])
        elif kind == "item":
            self.items[row["id"]] = row
        elif kind == "step":
            self.steps[row["id"]] = row
        elif kind == "read":
            self.read.add(row["batch"])
        elif kind == "foreign":
            batch = row["batch"]
            for intent in self.intents.values():
                if intent.batch == batch:
                    intent.batch, intent.abandoned = None, True
            self.refs.pop(batch, None)
            self.adopted.discard(batch)

    def open_intents(self) -> list[Intent]:
        """Intents with neither a batch nor an abandonment: their create's outcome is unknown."""
        return [i for i in self.intents.values() if i.batch is None and not i.abandoned]

    def next_intent(self) -> int:
        return max(self.intents, default=0) + 1

    def intent_of(self, batch: str) -> Intent | None:
        return next((i for i in self.intents.values() if i.batch == batch), None)

    def live(self) -> list[str]:
        """Batches whose requests are not all accounted for, in creation order."""
        return [b for b in self.refs if b not in self.read]


def read_journal(path: Path) -> JournalState:
    """The journal's state; a torn last line (a crash mid-write) is cut off the file."""
    state = JournalState()
    try:
        data = read_file(path)
    except FileProblem as unreadable:
        if unreadable.kind == MISSING:
            return state
        raise
    end = data.rfind(b"\n") + 1
    if end < len(data):
        os.truncate(path, end)
    for number, row, problem in read_lines(data[:end]):
        if problem is not None or type(row) is not dict:
            print(f"trunchbull: warning: {path}:{number}: not a journal line; left out", file=sys.stderr)
            continue
        try:
            state.fold(row)
        except (KeyError, TypeError):
            print(f"trunchbull: warning: {path}:{number}: a journal line out of place; left out", file=sys.stderr)
    return state


class BatchJournal:
    """batches.jsonl, open for appending (its state kept up to date as lines are added)."""

    def __init__(self, path: Path, state: JournalState):
        self.path = path
        self.state = state
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._pending = bytearray()
        self._dirty = False
        self._synced = time.monotonic()
        if state.nonce is None:
            self.add({"e": "run", "nonce": secrets.token_hex(8)})

    @property
    def nonce(self) -> str:
        assert self.state.nonce is not None
        return self.state.nonce

    def add(self, row: dict) -> None:
        """One line; written and fsynced at once when it decides what a resume does."""
        self.state.fold(row)
        self._pending += orjson.dumps(row) + b"\n"
        if row["e"] in DURABLE:
            self.sync()
        elif time.monotonic() - self._synced >= SYNC_INTERVAL_S:
            self.sync()

    def flush(self) -> None:
        view = memoryview(self._pending)
        while view:
            view = view[os.write(self._fd, view) :]
        del view
        if self._pending:
            self._pending.clear()
            self._dirty = True

    def sync(self) -> None:
        self.flush()
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False
        self._synced = time.monotonic()

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1
