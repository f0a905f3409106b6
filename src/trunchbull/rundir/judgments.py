"""judgments.jsonl (SPEC §4.1, §8.3): every judge request and reply of a
run, appended as each is answered (writer.py `judgment_log`), one line each:

    caseId, repeat, evalId   the sample judged
    judge                    the judge's model SPEC
    key                      the request's identity: SHA-256 of the judge (provider, model, base URL),
                             its call settings and the whole rendered prompt (run/judge_calls.py);
                             also its response-cache key
    promptSha256             SHA-256 of the rendered prompt (the messages, canonical JSON)
    reply                    the judge's text ("" when it failed)
    finishReason             why the judge stopped, or null
    grade                    C, P or I as read from the reply, or null
    outcome, score           what the sample was graded from this reply
    error                    null, or {kind, message}: judge-unparsable, judge-refused,
                             judge-truncated, judge-failed (with `cause`, the call's own kind)
    usage, cost, latencyMs, attempts, cached, repaired   as in a sample's record (schema.py)

A sample's verdict is the *last* line for its (caseId, repeat, key): the
file is never rewritten, so a verdict asked again (`--rerun-errors`) is
appended after the one it replaces, and a verdict of another prompt (the
output changed) or another judge stays as it was, unused. `run --resume`,
`grade --run-dir` and the summary read it back (`read_judgments`); a line
that is not a judgment (torn by a crash, edited) is left out and its verdict
asked again. Several judges of one sample (a panel), or a pairwise request,
are lines of their own keys."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Protocol

from trunchbull.common.jsonl import read_lines
from trunchbull.common.userfiles import MISSING, FileProblem, read_file
from trunchbull.rundir.log import RecordLog

FIELDS = (
    "caseId",
    "repeat",
    "evalId",
    "judge",
    "key",
    "promptSha256",
    "reply",
    "finishReason",
    "grade",
    "outcome",
    "score",
    "error",
    "usage",
    "cost",
    "latencyMs",
    "attempts",
    "cached",
    "repaired",
)
ERROR_KINDS = ("judge-unparsable", "judge-refused", "judge-truncated", "judge-failed")

JudgmentKey = tuple[str, "int | None", str]  # (caseId, repeat, key)


class JudgmentWriter(Protocol):
    """Where a judge's answers are appended: a run directory's writer
    (writer.py) or a comparison directory's (comparison_dir.py)."""

    path: Path

    def judgment_log(self) -> RecordLog:
        """judgments.jsonl, open for appending."""
        ...


def judgment_problem(row: object) -> str | None:
    """What is wrong with a judgment line's shape, or None."""
    if type(row) is not dict or not set(FIELDS) <= row.keys():
        return "a judgment is an object with the fields " + ", ".join(FIELDS)
    if type(row["caseId"]) is not str or not (row["repeat"] is None or type(row["repeat"]) is int):
        return "a judgment needs a string caseId and an integer (or null) repeat"
    if type(row["key"]) is not str or type(row["judge"]) is not str or type(row["reply"]) is not str:
        return "key, judge and reply must be strings"
    if row["outcome"] not in ("pass", "fail", "error"):
        return "outcome must be pass, fail or error"
    error = row["error"]
    if error is not None and (type(error) is not dict or error.get("kind") not in ERROR_KINDS):
        return f"error must be null or {{kind, message}} with a kind among {', '.join(ERROR_KINDS)}"
    score = row["score"]
    if score is not None and not (type(score) in (int, float) and math.isfinite(score)):
        return "score must be a number or null"
    return None


def read_judgments(path: Path) -> dict[JudgmentKey, dict]:
    """The verdicts a run directory holds: the last judgment of each
    (caseId, repeat, key); lines that are not judgments (a torn last line
    included) are left out."""
    try:
        data = read_file(path)
    except FileProblem as problem:
        if problem.kind == MISSING:
            return {}
        raise
    out: dict[JudgmentKey, dict] = {}
    for _number, row, line_problem in read_lines(data):
        if line_problem is None and judgment_problem(row) is None:
            assert type(row) is dict
            out[(row["caseId"], row["repeat"], row["key"])] = row
    return out


def cut_torn_line(path: Path) -> None:
    """A last line without its newline (the process died writing it) is cut
    off, so that the next judgment starts a line of its own."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            step = 1 << 16
            end = size
            while end > 0:
                start = max(0, end - step)
                f.seek(start)
                chunk = f.read(end - start)
                newline = chunk.rfind(b"\n")
                if newline >= 0:
                    os.truncate(path, start + newline + 1)
                    return
                end = start
            os.truncate(path, 0)
    except FileNotFoundError:
        return
