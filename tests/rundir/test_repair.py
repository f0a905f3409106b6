"""The boundary between a worker's bytes and the log (rundir/repair.py), and
the log's readers on lines that are not plain records (rundir/log.py,
common/jsonl.py): whatever arrives, one valid line for its sample, and a
log that still reads."""

from __future__ import annotations

import orjson

from trunchbull.common.jsonl import MAX_DEPTH
from trunchbull.rundir.log import read_records
from trunchbull.rundir.repair import checked_record
from trunchbull.rundir.schema import MAX_RECORD_BYTES, error_record, record_problem


def record(case_id: str = "c", **fields) -> dict:
    row = error_record(case_id, 0, "x", "y", 0.0, priced=False)
    row.update(error=None, **fields)
    return row


def test_a_lone_surrogate_and_bytes_that_are_not_utf8_become_u_fffd():
    raw = orjson.dumps(record(output="PLACE")).replace(b'"PLACE"', b'"a\\ud800b \xff\xfe c"')
    line, row = checked_record(raw, "c", 0, False)
    assert row["output"] == "a\ufffdb \ufffd\ufffd c" and row["repaired"] == ["unencodable-text"]
    assert orjson.loads(line) == row and record_problem(row) is None


def test_a_valid_record_is_kept_as_it_is():
    raw = orjson.dumps(record(output="fine", repaired=["output-truncated"]))
    line, row = checked_record(raw, "c", 0, False)
    assert line == raw and row["repaired"] == ["output-truncated"]


def test_anything_else_becomes_an_error_record_of_its_own_sample():
    deep = orjson.dumps(record(output="x")).replace(b'"x"', b'"x","extra":' + b"[" * 70 + b"]" * 70)
    cases = {
        b"not json": "invalid JSON",
        orjson.dumps(record(output=7)): "output must be a string",
        orjson.dumps(record("other")): "of case 'other'",
        deep: f"the limit is {MAX_DEPTH}",
        b'{"caseId":"' + b"x" * (MAX_RECORD_BYTES + 1) + b'"}': "the limit is 33,554,432",
        orjson.dumps(record()) + b"\n" + orjson.dumps(record()): "not one JSON line",
    }
    for raw, reason in cases.items():
        line, row = checked_record(raw, "c", 0, False)
        assert row["caseId"] == "c" and row["repeat"] == 0 and row["error"]["kind"] == "record", raw[:80]
        assert reason in row["error"]["message"], (reason, row["error"]["message"])
        assert orjson.loads(line) == row and record_problem(row) is None
        assert row["cost"] is None  # no price: unknown
        assert checked_record(raw, "c", 0, True)[1]["cost"] == 0.0  # a price: what its (empty) usage costs


def test_the_log_reader_repairs_text_and_leaves_out_damaged_lines(tmp_path):
    good = orjson.dumps(record("a"))
    surrogate = orjson.dumps(record("b", output="PLACE")).replace(b'"PLACE"', b'"\\udc00"')
    log = tmp_path / "responses.jsonl"
    log.write_bytes(b"\n".join([good, surrogate, b'{"caseId":"c","repeat":0,"output":', b"garbage", b""]))
    recorded = read_records(log)
    assert set(recorded.records) == {("a", 0), ("b", 0)}
    assert recorded.records[("b", 0)]["output"] == "\ufffd"
    assert [(d.line, d.key) for d in recorded.damaged] == [(3, ("c", 0)), (4, None)]
    assert "responses.jsonl:3: a damaged record (case 'c' repeat 0) was left out" in recorded.damaged[0].describe(log)
