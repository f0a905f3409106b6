"""Graded results on disk: one JSON line per sample, written whole to a
temporary file and renamed into place, so a reader sees all or nothing."""

from __future__ import annotations

from pathlib import Path

import orjson

from trunchbull.common.files import write_atomic


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
