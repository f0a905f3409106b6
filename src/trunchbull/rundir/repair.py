"""A record from a run worker, made fit for the log before it is written
(SPEC §8.3). The worker ran user code: its bytes are hostile input. Whatever
it sent, the log gets one line that every reader accepts (jsonl.py's rules,
the record schema, MAX_RECORD_BYTES), for the sample it was sent for:

* text UTF-8 cannot hold (a lone surrogate escape, bytes that are not
  UTF-8) becomes U+FFFD and the record lists `unencodable-text` in
  `repaired`;
* anything else that is wrong (not JSON, too large, too deep, a duplicate
  key, the wrong shape, another sample's case or repeat) makes the sample an
  `error` of kind `record`, saying why, rather than a line no reader takes.

The worker already keeps its records within these rules (js/run/limits.mjs):
this is the boundary's own check, not the usual path."""

from __future__ import annotations

import orjson

from trunchbull.common.jsonl import MAX_DEPTH, read_lines
from trunchbull.rundir.schema import MAX_RECORD_BYTES, error_record, record_problem

REPAIRED_TEXT = "unencodable-text"


def _refused(case_id: str, repeat: int, reason: str, latency_ms: object, priced: bool) -> tuple[bytes, dict]:
    elapsed = latency_ms / 1000 if type(latency_ms) in (int, float) else 0.0  # type: ignore[operator]
    message = f"the sample's record cannot be written: {reason}"
    row = error_record(case_id, repeat, "record", message, elapsed, priced=priced)
    return orjson.dumps(row), row


def checked_record(raw: bytes, case_id: str, repeat: int, priced: bool) -> tuple[bytes, dict]:
    """(the line to log, without its newline; its parsed record) for what a
    worker sent as the record of sample (`case_id`, `repeat`); `priced`: the
    run's price is known (a refused record's cost is then 0, else null)."""
    if len(raw) > MAX_RECORD_BYTES:
        return _refused(case_id, repeat, f"it is {len(raw):,} bytes; the limit is {MAX_RECORD_BYTES:,}", None, priced)
    try:
        row = orjson.loads(raw)
        repaired = False
    except orjson.JSONDecodeError:
        row, repaired = None, True
    if row is None or b"\n" in raw or raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
        # the reader's own rules, line by line (depth, duplicate keys, text repaired)
        found = list(read_lines(raw + b"\n"))
        if len(found) != 1 or found[0][2] is not None:
            reason = found[0][2].message if found and found[0][2] is not None else "it is not one JSON line"
            return _refused(case_id, repeat, reason, None, priced)
        row = found[0][1]
    problem = record_problem(row)
    if problem is not None:
        return _refused(case_id, repeat, problem, row.get("latencyMs") if type(row) is dict else None, priced)
    assert type(row) is dict  # record_problem checked it
    if row["caseId"] != case_id or row["repeat"] != repeat:
        return _refused(
            case_id, repeat, f"it is of case {row['caseId']!r} repeat {row['repeat']}", row.get("latencyMs"), priced
        )
    if not repaired:
        return raw, row  # as the worker wrote it (JSON.stringify: compact, one member per key)
    row["repaired"] = sorted({*(row.get("repaired") or []), REPAIRED_TEXT})
    line = orjson.dumps(row)
    if len(line) > MAX_RECORD_BYTES:  # U+FFFD is 3 bytes where a bad byte was 1
        return _refused(case_id, repeat, f"it is {len(line):,} bytes once repaired", row.get("latencyMs"), priced)
    return line, row


def with_earlier_attempts(row: dict, calls: int) -> bytes:
    """The record again, its `attempts` counting `calls` more provider calls
    (made for this sample on a worker that was replaced before it finished)."""
    row["attempts"] = (row["attempts"] or 0) + calls
    return orjson.dumps(row)
