"""Samples recorded more than once in a record log. One writer per run
directory (lock.py) keeps a log free of them; a log written before that, by
two processes at once or edited by hand, may hold them, and a report that
counted both would count a sample twice."""

from __future__ import annotations

from dataclasses import dataclass

from trunchbull.common.jsonl import read_lines


@dataclass(frozen=True)
class Duplicate:
    case_id: str
    repeat: int
    first_line: int  # where the sample is first recorded
    line: int  # where it is recorded again


def find_duplicates(data: bytes) -> list[Duplicate]:
    """Every line that records a (case ID, repeat) an earlier line recorded,
    in file order (lines that are not records are left to the log's reader)."""
    first: dict[tuple[str, int], int] = {}
    found = []
    for number, row, problem in read_lines(data):
        if problem is not None or type(row) is not dict:
            continue
        case_id, repeat = row.get("caseId"), row.get("repeat")
        if type(case_id) is not str or type(repeat) is not int:
            continue
        seen = first.setdefault((case_id, repeat), number)
        if seen != number:
            found.append(Duplicate(case_id, repeat, seen, number))
    return found


def describe_duplicates(found: list[Duplicate], shown: int = 5) -> str:
    """`case a repeat 0 on lines 2 and 9; …` for the first `shown`, then how many more."""
    parts = [f"case {d.case_id} repeat {d.repeat} on lines {d.first_line} and {d.line}" for d in found[:shown]]
    more = f"; and {len(found) - shown} more" if len(found) > shown else ""
    return "; ".join(parts) + more
