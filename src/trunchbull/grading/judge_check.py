"""Model-graded kinds need a judge (evaluators/judging.py): `grade` and
`run` refuse, before anything is called or written, to grade an eval whose
evaluator kinds read MODEL when they have no judge to give the grader."""

from __future__ import annotations

from typing import Iterable

from trunchbull.common.diagnostics import UsageError
from trunchbull.evaluators.inputs import MODEL
from trunchbull.evaluators.judging import Judge
from trunchbull.evaluators.registry import evaluators


def require_judge(evals: Iterable[dict], judge: Judge | None) -> None:
    """`evals`: the release's eval entries (their `evaluatorKinds`) to be graded."""
    if judge is not None:
        return
    known = evaluators()
    judged = [
        f"{ev['id']} ({kind})"
        for ev in evals
        for kind in ev.get("evaluatorKinds") or ()
        if kind in known and MODEL in known[kind].reads
    ]
    if judged:
        raise UsageError(
            f"{len(judged)} eval(s) grade with a judge model, and no judge is available to this command: "
            f"{', '.join(judged[:10])}{' …' if len(judged) > 10 else ''}"
        )
