"""The grader (SPEC §4), shared by `trunchbull grade` and `trunchbull run`:
one result row per sample, in the order given. Declarative evaluators run
in-process (one prepared evaluator per distinct spec and what its preparation
reads); custom evaluators in the Node worker pool and model-graded kinds by
the judge, both deferred to the end (deferred.py). A sample without a
response, or one that could not be completed, is graded `outcome: "error"`
(an infrastructure failure, never a model failure)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

import orjson

from trunchbull.evaluators.custom import CustomCall
from trunchbull.evaluators.inputs import MODEL
from trunchbull.evaluators.judging import Judge, JudgeRequest
from trunchbull.evaluators.registry import evaluators
from trunchbull.evaluators.tool_calls import ToolSchemas
from trunchbull.grading.deferred import grade_deferred
from trunchbull.grading.evaluator_inputs import Bound, KindInputs
from trunchbull.grading.responses import Response
from trunchbull.release.loaded import LoadedRelease


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


def grade(release: LoadedRelease, samples: list[ToGrade], missing_message: str, judge: Judge | None = None) -> Graded:
    """`missing_message`: the result message of a sample without a response."""
    grader = Grader(release, missing_message, judge)
    grader.add(enumerate(samples))
    return grader.finish()


class Grader:
    """Grades samples as they come, in batches in any order, each under its
    index (0 … n-1 in the order the results are wanted); `finish` grades
    what was deferred (custom evaluators in one Node pool, model-graded
    kinds' requests by the judge) and returns every row in index order.
    `trunchbull run` grades each round of records while the model is being
    called; `grade` adds everything at once.

    Each sample's evaluator is resolved from its spec's `kind` in the
    registry, with no kind of its own known here: it is prepared once per
    distinct spec and preparation inputs it reads (evaluator_inputs.py) and
    called with exactly the sample inputs it reads."""

    def __init__(self, release: LoadedRelease, missing_message: str, judge: Judge | None = None):
        self.release = release
        self.missing_message = missing_message
        self.judge = judge
        self.rows: dict[int, dict] = {}
        self._schemas = ToolSchemas(release.manifest.tools)
        self._evaluators = evaluators()
        self._inputs: dict[str, KindInputs] = {}  # by kind name, made as each kind is first met
        # Prepared evaluators, shared (an eval-level spec is inherited by all its
        # cases): keyed by the spec's JSON as str (holding orjson's own output
        # buffers as keys costs microseconds each when every case has its own
        # spec); those of kinds whose preparation reads something of the case,
        # by the spec's JSON and then by that (ByCase).
        self._prepared: dict[str, Bound] = {}
        self._by_case: dict[str, ByCase] = {}
        self._deferred: list[tuple[int, Any]] = []  # (index, the CustomCall or JudgeRequest to grade at the end)
        self._missing: list[tuple[int, str]] = []  # (index, case ID) of samples without a response
        self._seconds = 0.0

    @property
    def prepared(self) -> int:
        """How many evaluators have been prepared so far."""
        return len(self._prepared) + sum(len(by_case) for by_case in self._by_case.values())

    def add(self, samples: Iterable[tuple[int, ToGrade]]) -> None:
        started = time.perf_counter()
        digest = self.release.digest
        missing_message = self.missing_message
        rows = self.rows
        deferred = self._deferred
        missing = self._missing
        prepared = self._prepared
        dumps = orjson.dumps
        clock = time.perf_counter_ns
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
            t0 = clock()
            key = dumps(spec).decode()
            bound = prepared.get(key)
            if bound is None:
                try:
                    bound = self._prepare(key, spec, case)
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
            outcome: Any  # a Result (a plain tuple), or work deferred to the end
            evaluate, field = bound
            try:
                outcome = evaluate(field(response)) if field is not None else evaluate(case, response)
            except Exception as err:  # noqa: BLE001 - an evaluator bug must not stop the other cases
                outcome = ("error", None, f"the {kind} evaluator failed: {type(err).__name__}: {err}", None)
            if type(outcome) is not tuple:  # work for the end: a custom evaluator's call, a judge's request
                if isinstance(outcome, (CustomCall, JudgeRequest)):
                    deferred.append((index, outcome))
                    rows[index] = _row(case, repeat, "error", None, None, None, kind, 0.0, digest)
                    continue
                outcome = ("error", None, f"the {kind} evaluator returned {type(outcome).__name__}", None)
            status, score, message, details = outcome
            # ms, rounded to 0.1 µs (round() is slow)
            rows[index] = _row(
                case, repeat, status, score, message, details, kind, (clock() - t0 + 50) // 100 / 10_000, digest
            )
        self._seconds += time.perf_counter() - started

    def _prepare(self, key: str, spec: dict, case: dict) -> Bound:
        """The prepared evaluator of `spec` for `case`, when it depends on more than the spec (its
        kind's preparation reads something of the case), or when it is not prepared yet. Raises
        ValueError for a spec that cannot be graded (the error is the sample's, not the command's)."""
        by_case = self._by_case.get(key)
        if by_case is not None:
            found = by_case.get(by_case.inputs.key_of(case))
            if found is not None:
                return found
        name = spec.get("kind")
        inputs = self._inputs.get(name) if isinstance(name, str) else None
        if inputs is None:
            kind = self._evaluators.get(name) if isinstance(name, str) else None
            if kind is None:
                raise ValueError(f"unknown evaluator kind {name!r}")
            if MODEL in kind.reads and self.judge is None:
                raise ValueError(f"the {kind.name} evaluator grades with a judge model, and none was given")
            judge_model = self.judge.model if self.judge is not None else None
            inputs = self._inputs[kind.name] = KindInputs(kind, self._schemas, judge_model, self.release.files)
        evaluate = inputs.prepare(spec, case)
        if inputs.case_keys:
            if by_case is None:
                by_case = self._by_case[key] = ByCase(inputs)
            by_case[inputs.key_of(case)] = evaluate
        else:
            self._prepared[key] = evaluate
        return evaluate

    def finish(self) -> Graded:
        started = time.perf_counter()
        rows = self.rows
        results = [rows[index] for index in range(len(rows))]  # KeyError: an index was never added
        if self._deferred:
            grade_deferred(self.release, self.judge, self._deferred, results)
        missing = [case_id for _index, case_id in sorted(self._missing)]
        return Graded(self.release, results, missing, self._seconds + time.perf_counter() - started)


class ByCase(dict):
    """The prepared evaluators of one spec whose kind's preparation reads
    something of the case (its tools), keyed by that."""

    def __init__(self, inputs: KindInputs):
        super().__init__()
        self.inputs = inputs
