"""JSONL case files: one complete case object per non-empty line."""

from __future__ import annotations

import re

import orjson

from trunchbull.compile.cases.fields import CaseDraft, Report, Where, check_case
from trunchbull.compile.cases.sources import DataFileSource

_ORJSON_POSITION = re.compile(r"line (\d+) column (\d+)")


def read_jsonl(data: bytes, data_path: str, module_path: str, report: Report) -> list[CaseDraft]:
    drafts = []
    seen_any = False
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        seen_any = True
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            match = _ORJSON_POSITION.search(str(err))
            col = int(match.group(2)) if match else None
            message = str(err).split(":")[0]
            report(
                Where(data_path, number, col),
                "jsonl-syntax",
                f"invalid JSON: {message}",
                "each non-empty line must be one complete JSON object",
            )
            continue
        source = {"module": module_path, "file": data_path, "line": number}
        draft = check_case(obj, Where(data_path, number, None), source, report)
        if draft:
            drafts.append(draft)
    if not seen_any:
        report(Where(data_path), "cases-empty", "the JSONL file contains no cases", "add at least one case line")
    return drafts


SOURCE = DataFileSource(".jsonl", "JSONL", read_jsonl)
