"""How a model-graded kind expresses its work (SPEC §4), without calling a
model itself: a kind that reads `MODEL` (inputs.py) returns, for each sample,
a `JudgeRequest` rather than a result. The grader defers the requests (as it
defers custom evaluators to their pool) and, when grading finishes, hands
them to a `Judge` in one batch; each reply comes back to the request's
`decide`, which makes the sample's result.

A `Judge` is the one way a grade reaches a model: `run` and `grade --judge`
give the grader run/judge_runner.py's, which makes its calls through the
trusted model caller (which alone holds the API key), records each request
and its reply in the run directory (rundir/judgments.py) and answers a
request it has a recorded reply for from the record, so that re-grading
replays verdicts instead of asking again. Without a judge, a kind that reads
`MODEL` cannot be graded: the commands refuse it before anything runs
(grading/judge_check.py).

A request names the judge its spec pins (`judge`, the benchmark's default,
None when it pins none); which judge answers is the runner's choice (the
command's `--judge`, else the pinned one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Protocol, Sequence

from trunchbull.evaluators.result import Result

# The key under which a model-graded kind's spec pins its judge (a model SPEC).
PINNED_JUDGE = "judge"


class JudgeReply(NamedTuple):
    """A judge's answer to one request: its text, or why there is none (the
    sample is then graded `error`: an infrastructure failure)."""

    text: str | None
    error: str | None = None
    details: Any = None  # what the judge runner adds (its model, usage, whether it was replayed)
    finish_reason: str | None = None  # why the judge stopped (`stop`, `length`, …), when known
    error_kind: str | None = None  # with `error`: judge-failed, judge-refused, judge-truncated
    result: Result | None = None  # decided already: a panel's verdict (run/judge_panel.py), `details` its judges'


@dataclass(frozen=True)
class JudgeRequest:
    """What a model-graded kind asks about one sample: chat messages
    ([{role: "system" | "user", content}]) and call settings (temperature,
    maxTokens, …). A request's identity is its messages and settings (the
    judge runner keys recorded replies on them); `decide` grades the sample
    from the reply and is no part of it."""

    messages: tuple[dict, ...]
    settings: dict
    decide: Callable[[JudgeReply], Result] = field(compare=False, repr=False)
    judge: str | None = None  # the judge the spec pins (a model SPEC), None when it pins none


class JudgeAsk(NamedTuple):
    """One request, with the sample it is about."""

    case_id: str
    repeat: int | None  # None outside a run (`grade` without --run-dir)
    request: JudgeRequest
    eval_id: str | None = None


class Judge(Protocol):
    """Answers the requests of model-graded kinds."""

    @property
    def model(self) -> str:
        """The judge's model spec (given to kinds that read MODEL)."""
        ...

    def answer(self, asks: Sequence[JudgeAsk]) -> list[JudgeReply]:
        """One reply per ask, in order."""
        ...


class RecordingJudge(Judge, Protocol):
    """A judge that records its answers (run/judge_runner.py): what `grade`
    and `run` write of it besides the grades."""

    used: list[dict]  # the judgment lines the grading used (rundir/judgments.py)

    def run_json(self) -> dict:
        """run.json's `judge`."""
        ...

    def summary(self) -> list[dict]:
        """summary.json's `judges`."""
        ...


def judged_result(request: JudgeRequest, reply: JudgeReply) -> Result:
    """A sample's result from the judge's reply: an error when there is no
    usable reply (its kind in `details.error`), else the request's decision
    (or the one the judge made already: a panel's majority)."""
    if reply.result is not None:
        return reply.result
    if reply.error is not None:
        error = {"kind": reply.error_kind or "judge-failed", "message": reply.error}
        return "error", None, f"the judge could not answer: {reply.error}", {"error": error}
    return request.decide(reply)
