"""summary.json (SPEC §8.3): the per-eval and overall summary of a graded
run (grading/summary.py makes it), written whole and renamed into place, so
a reader sees all or nothing. Read by reader.py."""

from __future__ import annotations

from pathlib import Path

import orjson

from trunchbull.common.files import write_atomic


def write_summary(path: Path, summary: dict) -> None:
    write_atomic(path, orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
