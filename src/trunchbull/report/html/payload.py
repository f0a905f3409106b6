"""The data an HTML report embeds: one JSON object, compact enough for
25,000 samples. Every string (case IDs, prompts, outputs, messages, details
and tool calls as JSON text) is stored once in a shared table and referred to
by index (-1: none); each run's samples are columns of equal length. The
front end (report/html/web/data.js) reads it back."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import orjson

from trunchbull import __version__
from trunchbull.report.release_cases import ReleaseCases
from trunchbull.rundir.reader import RunDirectory
from trunchbull.stats.run_stats import sample_latency, sample_tokens

OUTCOME_CODES = {"pass": 0, "fail": 1, "error": 2}


class StringTable:
    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int:
        if value is None:
            return -1
        index = self._index.get(value)
        if index is None:
            index = self._index[value] = len(self.strings)
            self.strings.append(value)
        return index


def public_url(url: str | None) -> str | None:
    """A base URL without credentials, query or fragment (a key may hide there)."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _meta(run: RunDirectory) -> dict:
    meta = run.meta
    release = meta.get("release") or {}
    return {
        "runDir": str(run.path),
        "model": run.model,
        "baseUrl": public_url(meta.get("baseUrl")),
        "repeat": meta.get("repeat"),
        "settings": meta.get("settings"),
        "filters": meta.get("filters"),
        "startedAt": meta.get("startedAt"),
        "finishedAt": meta.get("finishedAt"),
        "trunchbull": meta.get("trunchbull"),
        "judge": _judge(meta.get("judge")),
        "release": {"title": release.get("title"), "version": release.get("version"), "digest": run.digest},
    }


def _judge(judge: object) -> dict | None:
    """The judges of a run's model-graded kinds, and those that are its model (run.json's `judge`)."""
    if not isinstance(judge, dict):
        return None
    return {"models": list(judge.get("models") or []), "selfJudged": list(judge.get("selfJudged") or [])}


def _number(value) -> float | int | None:
    return value if type(value) in (int, float) else None


SAMPLE_COLUMNS = (
    "case",
    "repeat",
    "outcome",
    "score",
    "latency",
    "tokIn",
    "tokOut",
    "tokTotal",
    "output",
    "message",
    "evaluator",
    "finish",
    "steps",
    "attempts",
    "cached",
    "recorded",
    "error",
    "details",
    "tools",
)


class _Cases:
    """The payload's case table (ID, eval, prompt, system prompt as string
    indices), shared by every run: each case once, at its first sighting."""

    def __init__(self, intern: StringTable) -> None:
        self.intern = intern
        self.index: dict[str, int] = {}
        self.columns: dict[str, list[int]] = {"id": [], "eval": [], "prompt": [], "system": []}

    def of(self, row: dict, known: dict) -> int:
        """The index of `row`'s case; its prompt from `known` (the release's
        cases) if an earlier run's release did not have it."""
        intern, cols, case_id = self.intern, self.columns, row["caseId"]
        c = self.index.get(case_id)
        if c is None:
            c = self.index[case_id] = len(cols["id"])
            case = known.get(case_id)
            cols["id"].append(intern(case_id))
            cols["eval"].append(intern(row["evalId"]))
            cols["prompt"].append(intern(case.get("prompt")) if case else -1)
            cols["system"].append(intern(case.get("systemPrompt")) if case else -1)
        elif cols["prompt"][c] == -1 and case_id in known:
            cols["prompt"][c] = intern(known[case_id].get("prompt"))
            cols["system"][c] = intern(known[case_id].get("systemPrompt"))
        return c


def _samples(run: RunDirectory, known: dict, cases: _Cases, intern: StringTable) -> dict[str, list]:
    """One run's samples as columns (SAMPLE_COLUMNS); tokens and latency by
    stats/run_stats.py's rules."""
    dumps = orjson.dumps
    cols: dict[str, list] = {key: [] for key in SAMPLE_COLUMNS}
    for row in run.results:
        record = run.record_of(row)
        rec = record or {}
        tokens_in, tokens_out, tokens_total = sample_tokens(record)
        calls, results = rec.get("toolCalls") or [], rec.get("toolResults") or []
        error = rec.get("error")
        details = row.get("details")
        cols["case"].append(cases.of(row, known))
        cols["repeat"].append(row.get("repeat", 0))
        cols["outcome"].append(OUTCOME_CODES[row["outcome"]])
        cols["score"].append(row.get("score"))
        cols["latency"].append(sample_latency(record))
        cols["tokIn"].append(tokens_in)
        cols["tokOut"].append(tokens_out)
        cols["tokTotal"].append(tokens_total)
        cols["output"].append(intern(rec.get("output")) if type(rec.get("output")) is str else -1)
        cols["message"].append(intern(row.get("message")))
        cols["evaluator"].append(intern(row.get("evaluator")))
        cols["finish"].append(intern(rec.get("finishReason")) if type(rec.get("finishReason")) is str else -1)
        cols["steps"].append(_number(rec.get("steps")))
        cols["attempts"].append(_number(rec.get("attempts")))
        cols["cached"].append(1 if rec.get("cached") is True else 0)
        cols["recorded"].append(0 if record is None else 1)
        cols["error"].append(intern(dumps(error).decode()) if error else -1)
        cols["details"].append(-1 if details is None else intern(dumps(details).decode()))
        cols["tools"].append(intern(dumps({"calls": calls, "results": results}).decode()) if calls or results else -1)
    return cols


def build_payload(
    title: str,
    runs: list[tuple[str, RunDirectory, ReleaseCases]],
    comparison: dict | None,
    breakdowns: dict[str, dict] | None = None,
) -> dict:
    """`runs`: (label, run directory, its release's cases), the report's run
    first; `breakdowns`: with --by, each run's figures per group, by label."""
    intern = StringTable()
    cases = _Cases(intern)
    out_runs = [
        {
            "label": label,
            "meta": _meta(run),
            "summary": run.summary,
            "breakdown": (breakdowns or {}).get(label),
            "note": release.note,
            "samples": _samples(run, release.cases or {}, cases, intern),
        }
        for label, run, release in runs
    ]
    return {
        "title": title,
        "generator": f"trunchbull {__version__}",
        "strings": intern.strings,
        "cases": cases.columns,
        "runs": out_runs,
        "comparison": comparison,
    }
