"""A panel's verdict (SPEC §4.1): with `--judge` given several times, every
judge grades every judged sample, and the sample's result is the majority's,
as Inspect AI's `majority` reducer decides a grader panel: a verdict (pass,
or fail) counts only when more than half of the panel's judges gave it; a
judge without a usable grade withholds its vote rather than shrinking the
panel, so with no majority the sample is `error` (`judge-no-majority`),
never a guess. The score is the mean of the scores of the judges that
graded. Each judge's own verdict and reply stay in the result's details and
in judgments.jsonl."""

from __future__ import annotations

from typing import Sequence

from trunchbull.evaluators.judging import JudgeReply, JudgeRequest, judged_result
from trunchbull.evaluators.result import Result

NO_MAJORITY = "judge-no-majority"


def panel_reply(request: JudgeRequest, replies: Sequence[JudgeReply]) -> JudgeReply:
    """The panel's reply: its majority result, decided here, with each judge's details."""
    results: list[Result] = [judged_result(request, reply) for reply in replies]
    n = len(results)
    passes = sum(1 for outcome, *_ in results if outcome == "pass")
    fails = sum(1 for outcome, *_ in results if outcome == "fail")
    scores = [score for outcome, score, *_ in results if outcome != "error" and score is not None]
    grades = [details.get("grade") if isinstance(details, dict) else None for *_, details in results]
    judges = []
    for reply, (outcome, score, message, own_details) in zip(replies, results):
        explanation = own_details.get("explanation") if isinstance(own_details, dict) else None
        own = {**(reply.details or {}), "outcome": outcome, "score": score, "message": message}
        if explanation is not None:
            own["explanation"] = explanation
        judges.append(own)
    counted = f"{passes} of {n} judges passed it, {fails} failed it" + (
        f", {n - passes - fails} gave no usable grade" if passes + fails < n else ""
    )
    majority = [g for g in set(grades) if g is not None and grades.count(g) * 2 > n]
    details: dict = {"grade": majority[0] if majority else None, "grades": grades}
    if passes * 2 > n or fails * 2 > n:
        outcome = "pass" if passes * 2 > n else "fail"
        score = sum(scores) / len(scores)
        result: Result = (outcome, score, f"the panel's majority: {outcome} ({counted})", details)
    else:
        message = f"the panel has no majority ({counted})"
        details["error"] = {"kind": NO_MAJORITY, "message": message}
        result = ("error", None, message, details)
    return JudgeReply(None, None, judges, None, None, result)
