"""A run's results as one flat CSV (SPEC §9), one row per sample, written
with the standard library's csv module. Structured fields (details, tool
calls) are JSON text in their cell; tokens, cost and latency are read from
the record as the summary reads them (stats/run_stats.py): empty when
unknown. With `--by FIELD`, a last column named FIELD holds each sample's
group."""

from __future__ import annotations

import csv
import io

import orjson

from trunchbull.report.exports.formats import Exported, ExportFormat
from trunchbull.stats.run_stats import sample_cost, sample_latency, sample_tokens

COLUMNS = (
    "caseId",
    "evalId",
    "repeat",
    "outcome",
    "score",
    "evaluator",
    "message",
    "details",
    "output",
    "toolCalls",
    "finishReason",
    "steps",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "costUsd",
    "latencyMs",
    "attempts",
    "cached",
    "errorKind",
    "errorMessage",
)


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return value


def results_csv(exported: Exported) -> str:
    run = exported.run
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*COLUMNS, *([exported.by] if exported.by else [])])
    for row in run.results:
        found = run.record_of(row)
        record = found or {}
        error: dict = record["error"] if type(record.get("error")) is dict else {}
        writer.writerow(
            [
                _cell(v)
                for v in (
                    row["caseId"],
                    row["evalId"],
                    row.get("repeat", 0),
                    row["outcome"],
                    row.get("score"),
                    row.get("evaluator"),
                    row.get("message"),
                    row.get("details"),
                    record.get("output"),
                    record.get("toolCalls") if record else None,
                    record.get("finishReason"),
                    record.get("steps"),
                    *sample_tokens(found),
                    sample_cost(found),
                    sample_latency(found),
                    record.get("attempts"),
                    record.get("cached"),
                    error.get("kind"),
                    error.get("message"),
                    *([exported.group(row)] if exported.by else []),
                )
            ]
        )
    return out.getvalue()


FORMAT = ExportFormat(
    "csv",
    order=2,
    title="CSV",
    description="a CSV with one row per sample",
    write=lambda exported: results_csv(exported).encode(),
)
