"""The grading the grader defers to the end (SPEC §4): custom evaluators'
calls, run in one Node evaluator pool, and model-graded kinds' requests,
answered by the judge in one batch (evaluators/judging.py). Each fills in
the row its sample was given when it was added."""

from __future__ import annotations

from typing import Any

from trunchbull.evaluators.custom import CustomCall
from trunchbull.evaluators.judging import Judge, JudgeAsk, JudgeRequest, judged_result
from trunchbull.evaluators.result import Result
from trunchbull.release.loaded import LoadedRelease, runtime_layout


def grade_deferred(
    release: LoadedRelease, judge: Judge | None, deferred: list[tuple[int, Any]], results: list[dict]
) -> None:
    """`deferred`: (index of the result, the CustomCall or JudgeRequest its evaluator returned)."""
    custom = [(index, work) for index, work in deferred if isinstance(work, CustomCall)]
    judged = [(index, work) for index, work in deferred if isinstance(work, JudgeRequest)]
    if custom:
        grade_custom(release, custom, results)
    if judged:
        assert judge is not None  # the grader prepares no model-graded kind without one
        grade_judged(judge, judged, results)


def grade_custom(release: LoadedRelease, custom: list[tuple[int, CustomCall]], results: list[dict]) -> None:
    from trunchbull.common import lifetime
    from trunchbull.evaluators.pool import Call, EvaluatorPool

    with lifetime.scratch_dir("trunchbull-grade-") as tmp:
        layout = runtime_layout(release, tmp)
        calls: list[Call | None] = []
        paths: dict[str, str | None] = {}  # module → the bundle's path on disk (None: not in the release)
        for index, (module, payload) in custom:
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
        for (index, _call), call in zip(custom, calls):
            if call is None:
                continue
            answer = next(answers)
            row = results[index]
            row["outcome"] = answer.outcome
            row["score"] = None if answer.outcome == "error" or answer.score is None else float(answer.score)
            row["message"] = answer.message
            row["details"] = answer.details
            row["durationMs"] = answer.duration_ms


def grade_judged(judge: Judge, judged: list[tuple[int, JudgeRequest]], results: list[dict]) -> None:
    asks = [
        JudgeAsk(results[index]["caseId"], results[index].get("repeat"), request, results[index]["evalId"])
        for index, request in judged
    ]
    replies = judge.answer(asks)
    if len(replies) != len(asks):
        raise RuntimeError(f"the judge answered {len(replies)} of {len(asks)} requests")
    for (index, request), reply in zip(judged, replies):
        row = results[index]
        outcome: Result
        try:
            outcome = judged_result(request, reply)
        except Exception as err:  # noqa: BLE001 - an evaluator bug must not stop the other samples
            outcome = ("error", None, f"the {row['evaluator']} evaluator failed: {type(err).__name__}: {err}", None)
        status, score, message, details = outcome
        if reply.details is not None:  # what the judges did: model, grade, usage, cost, whether replayed
            judges = reply.details if isinstance(reply.details, list) else [reply.details]
            details = {**(details if isinstance(details, dict) else {}), "judges": judges}
        row["outcome"], row["score"], row["message"], row["details"] = status, score, message, details
