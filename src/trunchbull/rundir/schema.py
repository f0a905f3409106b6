"""The record of one sample in responses.jsonl (SPEC §8.3): its fields,
defined once here. The run worker (js/run/worker.mjs) writes records of the
same shape (tests/rundir/test_schema.py holds the two together); records
made on the Python side (a sample the worker could not finish, a response
graded by `grade --run-dir`) are built here."""

from __future__ import annotations

import math

from trunchbull.common.jsonl import MAX_LINE_BYTES

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
    "cost",  # USD of `usage` at the run's price (run.json `price`), null when the price is unknown (absent in older runs)
    "repaired",  # null, or what was changed to make the record writable: REPAIRS (absent in older runs)
    "batch",  # null (a live call), or each request of the sample sent in a provider batch (BATCH_FIELDS)
)
OPTIONAL = ("cost", "repaired", "batch")  # fields that records of older runs may lack
# `batch`: one entry per request the sample sent in a batch, in order (`run --batch`).
BATCH_FIELDS = (
    "batch",  # the provider's batch ID
    "customId",  # the request's ID in it
    "step",  # the 0-based model call of the sample it asked for
    "status",  # succeeded, failed, expired, cancelled or missing (not in the batch's results)
)
# One limit on a record's size, for every writer (the worker is told it) and every reader (jsonl.py).
MAX_RECORD_BYTES = MAX_LINE_BYTES
# What `repaired` may list: each a change made to the sample's text on its way to the record.
REPAIRS = (
    "unencodable-text",  # text UTF-8 cannot hold (a lone UTF-16 surrogate, bytes that are not UTF-8) became U+FFFD
    "output-truncated",  # a model output above --max-response-bytes, cut (the model saw the cut text too)
    "tool-result-truncated",  # a tool result above --max-tool-result-bytes, cut for the model and the record
    "too-deep",  # a value nested deeper than a record may be, replaced by a marker string
    "record-truncated",  # a record above MAX_RECORD_BYTES: its largest parts cut
)
USAGE_FIELDS = ("inputTokens", "outputTokens", "totalTokens")
NO_USAGE = {name: None for name in USAGE_FIELDS}


def error_record(case_id: str, repeat: int, kind: str, message: str, elapsed_s: float, *, priced: bool) -> dict:
    """The record of a sample that ended in `kind` before its worker could report it.
    Its cost is that of the usage it records (none): 0 at a known price
    (`priced`), null when the price is unknown."""
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
        "cost": 0.0 if priced else None,
        "repaired": None,
        "batch": None,
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
        "repaired": None,
        "batch": None,
    }


_REQUIRED = frozenset(FIELDS) - frozenset(OPTIONAL)


def _int_or_none(value: object) -> bool:
    return value is None or type(value) is int


def _number_or_none(value: object) -> bool:
    return value is None or type(value) is int or (type(value) is float and math.isfinite(value))


_COUNT = (int, type(None))


def _plain(row: dict) -> bool:
    """The common shape, checked in one expression (every record the worker
    writes without an error; ~3x faster than the checks below, which say
    what is wrong)."""
    get = row.get
    usage = get("usage")
    repeat = get("repeat")
    steps = get("steps")
    attempts = get("attempts")
    latency = get("latencyMs")
    cost = get("cost")
    return (
        type(get("caseId")) is str
        and type(repeat) is int
        and repeat >= 0
        and type(get("output")) is str
        and type(get("toolCalls")) is list
        and type(get("toolResults")) is list
        and (steps is None or type(steps) is int)
        and (attempts is None or type(attempts) is int)
        and type(get("finishReason")) in (str, type(None))
        and type(usage) is dict
        and type(usage.get("inputTokens")) in _COUNT
        and type(usage.get("outputTokens")) in _COUNT
        and type(usage.get("totalTokens")) in _COUNT
        and (type(latency) is int or (type(latency) is float and math.isfinite(latency)))
        and type(get("cached")) is bool
        and "error" in row
        and get("error") is None
        and (cost is None or type(cost) is int or (type(cost) is float and math.isfinite(cost)))
        and get("repaired") is None
        and get("batch") is None
        and _REQUIRED <= row.keys()
    )


def record_problem(row: object) -> str | None:
    """What is wrong with a record's shape, or None."""
    if type(row) is dict and _plain(row):
        return None
    if type(row) is not dict:
        return "a record is a JSON object"
    if type(row.get("caseId")) is not str or type(row.get("repeat")) is not int or row["repeat"] < 0:
        return "a record needs a string caseId and a non-negative integer repeat"
    if not _REQUIRED <= row.keys():
        missing = [name for name in FIELDS if name not in row and name not in OPTIONAL]
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
    repaired = row.get("repaired")
    if repaired is not None and (type(repaired) is not list or not all(item in REPAIRS for item in repaired)):
        return f"repaired must be null or a list of {', '.join(REPAIRS)}"
    batch = row.get("batch")
    if batch is not None and (type(batch) is not list or not all(_batch_request(entry) for entry in batch)):
        return f"batch must be null or a list of {{ {', '.join(BATCH_FIELDS)} }}"
    return None


def _batch_request(entry: object) -> bool:
    return (
        type(entry) is dict
        and type(entry.get("batch")) is str
        and type(entry.get("customId")) is str
        and type(entry.get("step")) is int
        and type(entry.get("status")) is str
    )
