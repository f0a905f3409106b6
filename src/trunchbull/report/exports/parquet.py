"""A run's samples as one Parquet file (SPEC §9), written by polars: one row
per sample with every field of its record and of its grade, in typed
columns. Tool calls and results are lists of structs whose free-form parts
(a call's input, a result's output, the evaluator's details, provider
metadata) are JSON text; `model` and `releaseDigest` make the files of
several runs concatenable in a notebook or a warehouse. From the release,
each case's prompt, system prompt, expected answer, evaluator spec and data
(null when the release is not available); with `--by FIELD`, a column named
FIELD holds each sample's group."""

from __future__ import annotations

import io

import orjson

from trunchbull.report.exports.formats import Exported, ExportFormat
from trunchbull.stats.run_stats import sample_cost, sample_latency, sample_tokens


def _json(value: object) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: object) -> int | None:
    return value if type(value) is int else None


def _text(value: object) -> str | None:
    return value if type(value) is str else None


def _calls(record: dict) -> list[dict]:
    found = record.get("toolCalls")
    calls: list = found if isinstance(found, list) else []
    return [
        {
            "toolCallId": _text(c.get("toolCallId")),
            "toolName": _text(c.get("toolName")),
            "input": _json(c.get("input", c.get("args"))),
        }
        for c in calls
        if type(c) is dict
    ]


def _results(record: dict) -> list[dict]:
    found = record.get("toolResults")
    results: list = found if isinstance(found, list) else []
    return [
        {
            "toolCallId": _text(r.get("toolCallId")),
            "toolName": _text(r.get("toolName")),
            "output": _json(r.get("output")) if "output" in r else None,
            "error": None if r.get("error") is None else str(r.get("error")),
        }
        for r in results
        if type(r) is dict
    ]


def expected_answer(case: dict) -> str | None:
    """The `expected` of the case's evaluator spec (the first spec with one,
    when it has several): a string as it is, another value as JSON text."""
    evaluate = case.get("evaluate")
    specs = evaluate if isinstance(evaluate, list) else [evaluate]
    for spec in specs:
        if type(spec) is dict and "expected" in spec:
            value = spec["expected"]
            return value if type(value) is str else _json(value)
    return None


def _from_release(case: dict) -> dict:
    return {
        "prompt": _text(case.get("prompt")),
        "systemPrompt": _text(case.get("systemPrompt")),
        "expected": expected_answer(case),
        "evaluate": _json(case.get("evaluate")),
        "data": _json(case.get("data")),
    }


def rows(exported: Exported) -> dict[str, list]:
    run = exported.run
    columns: dict[str, list] = {name: [] for name in [*SCHEMA, *([exported.by] if exported.by else [])]}
    digest, model = run.digest, run.model
    for result in run.results:
        found = run.record_of(result)
        record = found or {}
        usage = record["usage"] if type(record.get("usage")) is dict else {}
        tokens_in, tokens_out, tokens_total = sample_tokens(found)
        error = record["error"] if type(record.get("error")) is dict else {}
        values = {
            "caseId": result["caseId"],
            "evalId": result["evalId"],
            "repeat": int(result.get("repeat", 0)),
            "outcome": result["outcome"],
            "score": _number(result.get("score")),
            "evaluator": _text(result.get("evaluator")),
            "message": _text(result.get("message")),
            "details": _json(result.get("details")),
            "gradeMs": _number(result.get("durationMs")),
            "recorded": bool(record),
            "output": _text(record.get("output")),
            "toolCalls": _calls(record),
            "toolResults": _results(record),
            "steps": _int(record.get("steps")),
            "finishReason": _text(record.get("finishReason")),
            "inputTokens": tokens_in,
            "outputTokens": tokens_out,
            "totalTokens": tokens_total,
            "cachedInputTokens": _int(usage.get("cachedInputTokens")),
            "costUsd": sample_cost(found),
            "latencyMs": sample_latency(found),
            "attempts": _int(record.get("attempts")),
            "cached": record.get("cached") if type(record.get("cached")) is bool else None,
            "repaired": record.get("repaired") is True,
            "errorKind": _text(error.get("kind")),
            "errorMessage": _text(error.get("message")),
            "model": model,
            "releaseDigest": digest,
            **_from_release(exported.case(result)),
        }
        if exported.by:
            values[exported.by] = exported.group(result)
        for name, value in values.items():
            columns[name].append(value)
    return columns


def _schema() -> dict:
    import polars as pl

    call = pl.Struct({"toolCallId": pl.String, "toolName": pl.String, "input": pl.String})
    result = pl.Struct({"toolCallId": pl.String, "toolName": pl.String, "output": pl.String, "error": pl.String})
    return {
        "caseId": pl.String,
        "evalId": pl.String,
        "repeat": pl.Int64,
        "outcome": pl.Enum(["pass", "fail", "error"]),
        "score": pl.Float64,
        "evaluator": pl.String,
        "message": pl.String,
        "details": pl.String,
        "gradeMs": pl.Float64,
        "recorded": pl.Boolean,
        "output": pl.String,
        "toolCalls": pl.List(call),
        "toolResults": pl.List(result),
        "steps": pl.Int64,
        "finishReason": pl.String,
        "inputTokens": pl.Int64,
        "outputTokens": pl.Int64,
        "totalTokens": pl.Int64,
        "cachedInputTokens": pl.Int64,
        "costUsd": pl.Float64,
        "latencyMs": pl.Float64,
        "attempts": pl.Int64,
        "cached": pl.Boolean,
        "repaired": pl.Boolean,
        "errorKind": pl.String,
        "errorMessage": pl.String,
        "model": pl.String,
        "releaseDigest": pl.String,
        "prompt": pl.String,
        "systemPrompt": pl.String,
        "expected": pl.String,
        "evaluate": pl.String,
        "data": pl.String,
    }


SCHEMA = (
    "caseId evalId repeat outcome score evaluator message details gradeMs recorded output toolCalls toolResults "
    "steps finishReason inputTokens outputTokens totalTokens cachedInputTokens costUsd latencyMs attempts cached "
    "repaired errorKind errorMessage model releaseDigest prompt systemPrompt expected evaluate data"
).split()


def parquet_bytes(exported: Exported) -> bytes:
    """The whole file (the export command writes it atomically)."""
    import polars as pl

    schema = _schema()
    if exported.by:
        schema[exported.by] = pl.String
    frame = pl.DataFrame(rows(exported), schema=schema)
    out = io.BytesIO()
    frame.write_parquet(out, compression="zstd", statistics=True)
    return out.getvalue()


FORMAT = ExportFormat(
    "parquet",
    order=3,
    title="Parquet",
    description="Parquet (one row per sample, every field of the record and its grade in typed columns; needs -o)",
    write=parquet_bytes,
    to_stdout=False,
    reads_release=True,
)
