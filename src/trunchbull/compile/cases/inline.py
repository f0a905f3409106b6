"""Inline cases: `cases: [ … ]` in the eval module."""

from __future__ import annotations

from pathlib import Path

from trunchbull.compile.cases.fields import CaseDraft, Report, Where, check_case
from trunchbull.compile.locate import literal_offset, position


def read_inline(cases: list, module_file: Path, module_path: str, report: Report) -> list[CaseDraft]:
    if not cases:
        report(
            Where(module_path, path="cases"),
            "cases-empty",
            "cases must contain at least one case",
            'add { id: "…", prompt: "…" } to cases',
        )
        return []
    drafts = []
    cursor = 0  # cases are usually written in order: search each id after the previous one
    for i, obj in enumerate(cases):
        line = col = None
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            index = literal_offset(module_file, obj["id"], cursor)
            if index >= 0:
                cursor = index
                line, col = position(module_file, index)
        draft = check_case(obj, Where(module_path, line, col, f"cases[{i}]"), {"module": module_path}, report)
        if draft:
            drafts.append(draft)
    return drafts
