"""results.jsonl: one graded result per sample, written whole to a
temporary file and renamed into place, so a reader sees all or nothing."""

from __future__ import annotations

from pathlib import Path

import orjson

from trunchbull.common.files import write_atomic

OUTCOMES = ("pass", "fail", "error")


def write_results(path: Path, results: list[dict]) -> None:
    path = path.absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    # appended row by row: each orjson output is freed right away (holding
    # 25,000 of them for one join is several times slower)
    data = bytearray()
    dumps, newline = orjson.dumps, orjson.OPT_APPEND_NEWLINE
    for row in results:
        data += dumps(row, option=newline)
    write_atomic(path, data)


def is_result(row) -> bool:
    """The shape of one graded result (grading/grader.py writes them)."""
    return (
        type(row) is dict
        and type(row.get("caseId")) is str
        and type(row.get("evalId")) is str
        and row.get("outcome") in OUTCOMES
        and type(row.get("releaseDigest")) is str
        and (row.get("score") is None or type(row.get("score")) in (int, float))
        and type(row.get("repeat", 0)) is int
    )
