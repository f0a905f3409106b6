"""The record of one sample in responses.jsonl (SPEC §8.3): its fields,
defined once here. The run worker (js/run/worker.mjs) writes records of the
same shape (tests/rundir/test_schema.py holds the two together); records
made on the Python side (a sample the worker could not finish, a response
graded by `grade --run-dir`) are built here."""

from __future__ import annotations

import math

FIELDS = (
    "caseId",  # the case's ID
    "repeat",  # 0-based repeat index
    "output",  # the model's final text
    "toolCalls",  # every step's tool calls in order, AI SDK shape
    "toolResults",  # { toolCallId, toolName, output | error }
    "steps",  # model calls the sample made (null when nothing was called)
    "finishReason",  # the last step's finish reason, or null
    "usage",  # { inputTokens, outputTokens, totalTokens }, summed over steps
    "latencyMs",  # wall time of the sample (null when nothing was called)
    "attempts",  # 1 + retried model calls (null when nothing was called)
    "cached",  # replayed from the response cache
    "error",  # null, or { kind, message } for a sample that could not be completed
    "cost",  # USD at the run's price (run.json `price`), null when the price is unknown (absent in older runs)
)
OPTIONAL = ("cost",)  # fields that records of older runs may lack
USAGE_FIELDS = ("inputTokens", "outputTokens", "totalTokens")
NO_USAGE = {name: None for name in USAGE_FIELDS}


def error_record(case_id: str, repeat: int, kind: str, message: str, elapsed_s: float) -> dict:
    """The record of a sample that ended in `kind` before its worker could report it."""
    elapsed_s = elapsed_s if math.isfinite(elapsed_s) else 0.0  # it had not started
    return {
        "caseId": case_id,
        "repeat": repeat,
        "output": "",
        "toolCalls": [],
        "toolResults": [],
        "steps": 0,
        "finishReason": None,
        "usage": dict(NO_USAGE),
        "latencyMs": round(elapsed_s * 1000, 3),
        "attempts": 1,
        "cached": False,
        "error": {"kind": kind, "message": message},
        "cost": None,
    }


def recorded_response(
    case_id: str, output: str, tool_calls: list, finish_reason: str | None, usage: dict | None
) -> dict:
    """A response graded outside `run` (`grade --run-dir`) as a record of
    repeat 0: nothing was called, so no steps, latency or attempts."""
    return {
        "caseId": case_id,
        "repeat": 0,
        "output": output,
        "toolCalls": tool_calls,
        "toolResults": [],
        "steps": None,
        "finishReason": finish_reason,
        "usage": usage,
        "latencyMs": None,
        "attempts": None,
        "cached": False,
        "error": None,
        "cost": None,
    }


def _int_or_none(value: object) -> bool:
    return value is None or type(value) is int


def _number_or_none(value: object) -> bool:
    return value is None or type(value) is int or (type(value) is float and math.isfinite(value))


def record_problem(row: object) -> str | None:
    """What is wrong with a record's shape, or None."""
    if type(row) is not dict:
        return "a record is a JSON object"
    if type(row.get("caseId")) is not str or type(row.get("repeat")) is not int or row["repeat"] < 0:
        return "a record needs a string caseId and a non-negative integer repeat"
    missing = [name for name in FIELDS if name not in row and name not in OPTIONAL]
    if missing:
        return f"a record needs the fields {', '.join(missing)}"
    if type(row["output"]) is not str:
        return "output must be a string"
    if type(row["toolCalls"]) is not list or type(row["toolResults"]) is not list:
        return "toolCalls and toolResults must be arrays"
    if not _int_or_none(row["steps"]) or not _int_or_none(row["attempts"]):
        return "steps and attempts must be integers or null"
    if row["finishReason"] is not None and type(row["finishReason"]) is not str:
        return "finishReason must be a string or null"
    usage = row["usage"]
    if usage is not None and (type(usage) is not dict or not all(_number_or_none(usage.get(n)) for n in USAGE_FIELDS)):
        return "usage must hold numeric or null inputTokens, outputTokens and totalTokens"
    if not _number_or_none(row["latencyMs"]) or type(row["cached"]) is not bool:
        return "latencyMs must be a number or null, and cached a boolean"
    error = row["error"]
    if error is not None and (
        type(error) is not dict or type(error.get("kind")) is not str or type(error.get("message")) is not str
    ):
        return "error must be null or { kind, message } strings"
    if not _number_or_none(row.get("cost")):
        return "cost must be a number or null"
    return None
