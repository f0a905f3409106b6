"""How a model-graded kind expresses its work (SPEC §4), without calling a
model itself: a kind that reads `MODEL` (inputs.py) returns, for each sample,
a `JudgeRequest` rather than a result. The grader defers the requests (as it
defers custom evaluators to their pool) and, when grading finishes, hands
them to a `Judge` in one batch; each reply comes back to the request's
`decide`, which makes the sample's result.

A `Judge` is the one way a grade reaches a model, and no command has one
yet. A judge runner is to make its calls through the trusted model caller
(which alone holds the API key), record each request and its reply in the
run directory (rundir/layout.py, JUDGMENTS, reserved for it) and answer a
request it has a recorded reply for from the record, so that re-grading
replays verdicts instead of asking again. Without a judge, a kind that reads
`MODEL` cannot be graded: the commands refuse it before anything runs
(grading/judge_check.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Protocol, Sequence

from trunchbull.evaluators.result import Result


class JudgeReply(NamedTuple):
    """A judge's answer to one request: its text, or why there is none (the
    sample is then graded `error`: an infrastructure failure)."""

    text: str | None
    error: str | None = None
    details: Any = None  # what the judge runner adds (its model, usage, whether it was replayed)


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


class JudgeAsk(NamedTuple):
    """One request, with the sample it is about."""

    case_id: str
    repeat: int | None  # None outside a run (`grade` without --run-dir)
    request: JudgeRequest


class Judge(Protocol):
    """Answers the requests of model-graded kinds."""

    @property
    def model(self) -> str:
        """The judge's model spec (given to kinds that read MODEL)."""
        ...

    def answer(self, asks: Sequence[JudgeAsk]) -> list[JudgeReply]:
        """One reply per ask, in order."""
        ...
