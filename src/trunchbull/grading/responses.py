"""Recorded model responses (SPEC §6): one JSON object per line, `caseId`,
`output`, and optionally `toolCalls`, `finishReason`, `usage`. Parsed in one
pass (jsonl.py: memory bounded, hostile lines diagnosed) that reports every
problem with its line."""

from __future__ import annotations

from typing import Any, NamedTuple

from trunchbull.common.diagnostics import Diagnostic
from trunchbull.common.ids import json_type
from trunchbull.common.jsonl import read_lines


class Response(NamedTuple):
    line: int
    output: str
    tool_calls: list
    finish_reason: Any
    usage: Any


def parse_responses(data: bytes, display: str, case_ids) -> tuple[dict[str, Response], list[Diagnostic]]:
    """Responses by case ID and the problems found (all of them, one pass).
    `case_ids` is any container of the release's case IDs (a set or a dict)."""
    problems: list[Diagnostic] = []
    responses: dict[str, Response] = {}
    suggested = [0]
    new = tuple.__new__
    for number, obj, problem in read_lines(data):
        if problem is not None:
            problems.append(
                Diagnostic(
                    "response-json",
                    problem.message,
                    display,
                    number,
                    problem.col,
                    "the file was cut off mid-write: complete or remove its last line"
                    if problem.torn
                    else "each line must be one complete JSON object",
                )
            )
            continue
        # the common case, checked in one go; anything else is diagnosed below
        if type(obj) is dict:
            get = obj.get
            case_id = get("caseId")
            output = get("output")
            tool_calls = get("toolCalls")
            finish = get("finishReason")
            usage = get("usage")
            if (
                type(case_id) is str
                and type(output) is str
                and (tool_calls is None or type(tool_calls) is list)
                and (finish is None or type(finish) is str)
                and (usage is None or type(usage) is dict)
                and case_id in case_ids
                and case_id not in responses
            ):
                responses[case_id] = new(Response, (number, output, tool_calls or [], finish, usage))
                continue
        _diagnose(obj, number, display, case_ids, responses, problems, suggested)
    return responses, problems


# The optional fields of a response: (name, type when present, as said in a diagnostic).
_OPTIONAL_FIELDS = (("toolCalls", list, "an array"), ("finishReason", str, "a string"), ("usage", dict, "an object"))


def _diagnose(
    obj: Any,
    number: int,
    display: str,
    case_ids,
    responses: dict[str, Response],
    problems: list[Diagnostic],
    suggested: list[int],
) -> None:
    """The problems of one parsed line that is not a plain valid response
    (a response with bad field types is still recorded, so that a later
    duplicate of it is reported too)."""
    if type(obj) is not dict:
        problems.append(
            Diagnostic("response-invalid", f"a response must be a JSON object, found {json_type(obj)}", display, number)
        )
        return
    case_id = obj.get("caseId")
    if type(case_id) is not str:
        problems.append(
            Diagnostic(
                "response-invalid",
                "a response needs a string caseId" + ("" if "caseId" not in obj else f", found {json_type(case_id)}"),
                display,
                number,
            )
        )
        return
    field_problems = _field_problems(obj, case_id, number, display)
    problems += field_problems
    bad = bool(field_problems)
    output = obj.get("output")
    if case_id not in case_ids:
        problems.append(_unknown_case(case_id, case_ids, number, display, suggested))
        return
    previous = responses.get(case_id)
    if previous is not None:
        problems.append(
            Diagnostic(
                "response-duplicate",
                f"duplicate response for case {case_id!r} (first at line {previous.line})",
                display,
                number,
                hint="each case needs exactly one response",
            )
        )
        return
    tool_calls = obj.get("toolCalls") or []
    responses[case_id] = Response(
        number,
        output if not bad and isinstance(output, str) else "",
        tool_calls if not bad else [],
        obj.get("finishReason"),
        obj.get("usage"),
    )


def _field_problems(obj: dict, case_id: str, number: int, display: str) -> list[Diagnostic]:
    """A response's output and optional fields of the wrong type."""
    problems = []
    output = obj.get("output")
    if type(output) is not str:
        problems.append(
            Diagnostic(
                "response-invalid",
                f"response for {case_id!r}: output must be a string, "
                + ("but it is missing" if "output" not in obj else f"found {json_type(output)}"),
                display,
                number,
                hint="a response with only tool calls has output \"\"",
            )
        )
    for name, kind, expected in _OPTIONAL_FIELDS:
        value = obj.get(name)
        if value is not None and type(value) is not kind:
            problems.append(
                Diagnostic(
                    "response-invalid",
                    f"response for {case_id!r}: {name} must be {expected}, found {json_type(value)}",
                    display,
                    number,
                )
            )
    return problems


def _unknown_case(case_id: str, case_ids, number: int, display: str, suggested: list[int]) -> Diagnostic:
    """The diagnostic of a caseId the release does not have (a "did you mean"
    for the first few: `suggested` counts them)."""
    hint = None
    if suggested[0] < 5:
        from trunchbull.common.ids import suggest

        suggested[0] += 1
        near = suggest(case_id, list(case_ids))
        hint = f"did you mean {near!r}?" if near else None
    return Diagnostic(
        "response-unknown-case",
        f"unknown caseId {case_id!r}: the release has no such case",
        display,
        number,
        hint=hint or "check that the responses belong to this release",
    )
