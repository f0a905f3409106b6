"""responses.jsonl, the run's append-only record log (SPEC §8.3, §8.4).

Each sample is written once, as one line, when it completes (the records
that complete together go out in one `write()` on a file opened with
O_APPEND), fsynced at least once a second (on another thread) and at exit. Resume reads the log back, drops a torn last line (a
crash mid-write), and never rewrites what was recorded, except that
`--rerun-errors` replaces the file, atomically, with its lines that have no
error, and that a damaged line (below) is taken out the same way, so that
its sample runs again. results.jsonl, summary.json and the report are
derived from the log.

A damaged line (not JSON, not a record: changed by hand, or by a disk) never
makes the rest of the log unreadable: it is left out of the records and
reported with its line number (and its sample, when its start still names
one), and its sample counts as not recorded.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from trunchbull.common.diagnostics import UsageError
from trunchbull.common.files import CHUNK, write_atomic
from trunchbull.common.jsonl import read_lines
from trunchbull.common.userfiles import MISSING, FileProblem, read_file
from trunchbull.rundir.schema import record_problem

SYNC_INTERVAL_S = 1.0


# How every record begins (the worker and rundir/schema.py both write caseId, then repeat).
_KEY = re.compile(rb'^\{"caseId":("(?:[^"\\]|\\.){0,4096}"),"repeat":(\d{1,9})[,}]')


@dataclass(frozen=True)
class Damage:
    """A line of the log that is not a record."""

    line: int
    message: str
    key: tuple[str, int] | None  # the sample its start names, if it still does

    def describe(self, path: Path) -> str:
        sample = f" (case {self.key[0]!r} repeat {self.key[1]})" if self.key else ""
        return f"{path}:{self.line}: a damaged record{sample} was left out: {self.message}"


@dataclass
class RecordedRun:
    """What a run's log holds: the records by (case ID, repeat), in log order."""

    records: dict[tuple[str, int], dict]
    torn: bool = False  # a torn last line was dropped
    duplicates: int = 0  # later lines for a sample already recorded (ignored)
    damaged: list[Damage] = field(default_factory=list)  # lines that are not records, left out


def _named_sample(raw: bytes) -> tuple[str, int] | None:
    match = _KEY.match(raw)
    if match is None:
        return None
    try:
        case_id = orjson.loads(match.group(1))
    except orjson.JSONDecodeError:
        return None
    return (case_id, int(match.group(2))) if type(case_id) is str else None


def read_records(path: Path, drop_torn: bool = False) -> RecordedRun:
    """The records of a log. A last line without its newline is torn (the
    process died writing it): with `drop_torn`, it is cut off the file so
    that the next record starts on a line of its own."""
    try:
        data = read_file(path)
    except FileProblem as problem:
        if problem.kind == MISSING:
            return RecordedRun({})
        raise UsageError(f"{path} {problem}") from None
    torn = bool(data) and not data.endswith(b"\n")
    end = data.rfind(b"\n") + 1
    if torn and drop_torn:
        os.truncate(path, end)
    records: dict[tuple[str, int], dict] = {}
    duplicates = 0
    problems: list[tuple[int, str]] = []
    # The same defensive reader as grade's (jsonl.py); the torn last line is left out.
    for number, row, line_problem in read_lines(data[:end] if torn else data):
        wrong = line_problem.message if line_problem is not None else record_problem(row)
        if wrong is not None:
            problems.append((number, wrong))
            continue
        assert type(row) is dict  # record_problem checked it
        key = (row["caseId"], row["repeat"])
        if key in records:
            duplicates += 1
            continue
        records[key] = row
    damaged: list[Damage] = []
    if problems:  # rare: the lines are cut out once
        lines = data.split(b"\n")
        damaged = [Damage(number, problem, _named_sample(lines[number - 1])) for number, problem in problems]
    return RecordedRun(records, torn, duplicates, damaged)


def drop_damaged_lines(path: Path, run: RecordedRun) -> None:
    """--resume: replace the log, atomically, with its records only (the
    damaged lines out), so that their samples run again."""
    if run.damaged:
        write_atomic(path, b"".join(orjson.dumps(row) + b"\n" for row in run.records.values()))


def drop_error_records(path: Path, run: RecordedRun) -> int:
    """--rerun-errors: replace the log, atomically, with its records that have
    no error; the number dropped."""
    kept = {key: row for key, row in run.records.items() if not row.get("error")}
    dropped = len(run.records) - len(kept)
    if dropped:
        write_atomic(path, b"".join(orjson.dumps(row) + b"\n" for row in kept.values()))
        run.records = kept
    return dropped


class RecordLog:
    """An append-only log of JSON lines (responses.jsonl; judgments.jsonl
    is reserved to be one too), open for appending; made by writer.py."""

    def __init__(self, path: Path):
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._pending = bytearray()
        self._dirty = False
        self._stop = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, name="record-log-fsync", daemon=True)
        self._syncer.start()

    def append(self, line: bytes) -> None:
        """One record, one complete line, held until flush()."""
        self._pending += line

    def append_record(self, row: dict) -> None:
        """One record made on the Python side (schema.py), written in chunks
        when many are appended at once."""
        self._pending += orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)
        if len(self._pending) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        """Write the records appended since the last flush, in one write
        (retried only for the rest of a short write). Called as soon as the
        records that finished together have been appended."""
        if not self._pending:
            return
        view = memoryview(self._pending)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        del view
        self._pending.clear()
        self._dirty = True

    def _sync_loop(self) -> None:
        while not self._stop.wait(SYNC_INTERVAL_S):
            self.sync()

    def sync(self) -> None:
        if self._dirty:
            self._dirty = False
            try:
                os.fsync(self._fd)
            except OSError:
                pass

    def close(self) -> None:
        self.flush()
        self._stop.set()
        self._syncer.join()
        self._dirty = True
        self.sync()
        os.close(self._fd)
