"""The grader (SPEC §4), shared by `trunchbull grade` and `trunchbull run`:
one result row per sample, in the order given. Built-in evaluators run
in-process (one prepared grader per distinct spec); custom evaluators in the
Node worker pool. A sample without a response, or one that could not be
completed, is graded `outcome: "error"` (an infrastructure failure, never a
model failure)."""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

import orjson

from trunchbull.evaluators.registry import prepare
from trunchbull.evaluators.tool_calls import ToolSchemas, normalize_tool_calls
from trunchbull.grading.responses import Response
from trunchbull.release.loaded import LoadedRelease, runtime_layout
from trunchbull.release.tool_offers import entries_key


class ToGrade(NamedTuple):
    """One thing to grade: a case of the release, its response (None when
    there is none), the repeat index (None outside a run), and the error that
    kept the sample from completing ({kind, message}; None when it completed)."""

    case: dict
    response: Response | None
    repeat: int | None = None
    error: dict | None = None


@dataclass
class Graded:
    release: LoadedRelease
    results: list[dict]
    missing: list[str] = field(default_factory=list)  # case IDs without a response
    seconds: float = 0.0


def _row(
    case: dict,
    repeat: int | None,
    outcome: str,
    score: float | None,
    message: str | None,
    details: Any,
    kind: str | None,
    duration_ms: float,
    digest: str,
) -> dict:
    row: dict = {"caseId": case["id"], "evalId": case["evalId"]}
    if repeat is not None:  # a run's rows carry the repeat, right after the IDs; grade's rows have none
        row["repeat"] = repeat
    row.update(
        outcome=outcome,
        score=score,
        message=message,
        details=details,
        evaluator=kind,
        durationMs=duration_ms,
        releaseDigest=digest,
    )
    return row


# The tool calls handed to graders that do not look at them: one shared, never-mutated list.
_NO_CALLS: list[dict] = []


def grade(release: LoadedRelease, samples: list[ToGrade], missing_message: str) -> Graded:
    """`missing_message`: the result message of a sample without a response."""
    grader = Grader(release, missing_message)
    grader.add(enumerate(samples))
    return grader.finish()


class Grader:
    """Grades samples as they come, in batches in any order, each under its
    index (0 … n-1 in the order the results are wanted); `finish` grades
    those with custom evaluators (in one Node pool) and returns every row in
    index order. `trunchbull run` grades each round of records while the
    model is being called; `grade` adds everything at once."""

    def __init__(self, release: LoadedRelease, missing_message: str):
        self.release = release
        self.missing_message = missing_message
        self.rows: dict[int, dict] = {}
        self._schemas = ToolSchemas(release.manifest.tools)
        # graders are prepared once per distinct spec and shared (an eval-level
        # spec is inherited by all its cases): keyed by the spec's JSON (and
        # the case's tools for tool_call_syntax), as str: holding orjson's own
        # output buffers as keys costs microseconds each when every case has
        # its own spec
        self._graders: dict[Any, Any] = {}
        self._custom: list[tuple[int, str, dict]] = []  # (index, module name, input)
        self._missing: list[tuple[int, str]] = []  # (index, case ID) of samples without a response
        self._tool_cases = 0
        self._seconds = 0.0

    def add(self, samples: Iterable[tuple[int, ToGrade]]) -> None:
        started = time.perf_counter()
        digest = self.release.digest
        missing_message = self.missing_message
        schemas = self._schemas
        rows = self.rows
        custom = self._custom
        missing = self._missing
        graders = self._graders
        dumps = orjson.dumps
        clock = time.perf_counter_ns
        tool_cases = self._tool_cases
        for index, (case, response, repeat, error) in samples:
            spec = case["evaluate"]
            kind = spec.get("kind")
            if error is not None:
                rows[index] = _row(
                    case,
                    repeat,
                    "error",
                    None,
                    f"the sample could not be completed ({error.get('kind')}): " f"{error.get('message')}",
                    {"error": error},
                    kind,
                    0.0,
                    digest,
                )
                continue
            if response is None:
                missing.append((index, case["id"]))
                rows[index] = _row(case, repeat, "error", None, missing_message, None, kind, 0.0, digest)
                continue
            if kind == "custom":
                custom.append(
                    (
                        index,
                        spec["module"],
                        {
                            "output": response.output,
                            "caseData": case.get("data"),
                            "toolCalls": response.tool_calls,
                            "normalizedToolCalls": normalize_tool_calls(response.tool_calls),
                            "finishReason": response.finish_reason,
                            "usage": response.usage,
                        },
                    )
                )
                rows[index] = _row(case, repeat, "error", None, None, None, kind, 0.0, digest)
                continue
            t0 = clock()
            key: str | tuple[str, tuple]
            calls: list[dict]
            if kind == "tool_call_syntax":
                key = (dumps(spec).decode(), entries_key(case.get("tools") or ()))
                calls = normalize_tool_calls(response.tool_calls)
                tool_cases += 1
                if not tool_cases % 1000 and not gc.isenabled():
                    # jsonschema's validation errors form reference cycles (~40
                    # objects per failing call); the commands pause the cyclic
                    # collector, so collect the young ones here
                    gc.collect(0)
            else:
                key = dumps(spec).decode()
                calls = _NO_CALLS
            grader = graders.get(key)
            if grader is None:
                try:
                    grader = prepare(spec, case.get("tools") or [], schemas)
                except ValueError as err:
                    rows[index] = _row(
                        case,
                        repeat,
                        "error",
                        None,
                        f"the release's evaluator spec cannot be graded: {err}",
                        None,
                        kind,
                        0.0,
                        digest,
                    )
                    continue
                graders[key] = grader
            try:
                outcome, score, message, details = grader(response.output, calls)
            except Exception as err:  # noqa: BLE001 - an evaluator bug must not stop the other cases
                outcome, score, message, details = (
                    "error",
                    None,
                    f"the {kind} evaluator failed: {type(err).__name__}: {err}",
                    None,
                )
            # ms, rounded to 0.1 µs (round() is slow)
            rows[index] = _row(
                case, repeat, outcome, score, message, details, kind, (clock() - t0 + 50) // 100 / 10_000, digest
            )
        self._tool_cases = tool_cases
        self._seconds += time.perf_counter() - started

    def finish(self) -> Graded:
        started = time.perf_counter()
        rows = self.rows
        results = [rows[index] for index in range(len(rows))]  # KeyError: an index was never added
        if self._custom:
            _grade_custom(self.release, self._custom, results)
        missing = [case_id for _index, case_id in sorted(self._missing)]
        return Graded(self.release, results, missing, self._seconds + time.perf_counter() - started)


def _grade_custom(release: LoadedRelease, custom: list[tuple[int, str, dict]], results: list[dict]) -> None:
    from trunchbull.common import lifetime
    from trunchbull.evaluators.pool import Call, EvaluatorPool

    with lifetime.scratch_dir("trunchbull-grade-") as tmp:
        layout = runtime_layout(release, tmp)
        calls: list[Call | None] = []
        paths: dict[str, str | None] = {}  # module → the bundle's path on disk (None: not in the release)
        for index, module, payload in custom:
            if module not in paths:
                bundle_path = layout.bundle(module)
                paths[module] = str(bundle_path) if bundle_path is not None and module in release.files else None
            bundle = paths[module]
            if bundle is None:
                results[index]["message"] = f"the release has no evaluator module {module!r}"
                calls.append(None)
                continue
            calls.append(Call(bundle, payload))
        runnable = [c for c in calls if c is not None]
        with EvaluatorPool(layout.read_paths) as pool:
            answers = iter(pool.run(runnable))
        for (index, _module, _payload), call in zip(custom, calls):
            if call is None:
                continue
            answer = next(answers)
            row = results[index]
            row["outcome"] = answer.outcome
            row["score"] = None if answer.outcome == "error" or answer.score is None else float(answer.score)
            row["message"] = answer.message
            row["details"] = answer.details
            row["durationMs"] = answer.duration_ms
