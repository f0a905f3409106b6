"""`{ kind: "judged", question }`: a model-graded kind of the tests. It
reads the output and a judge model, and grades by asking the judge
`question` about the output; the judge's reply `yes` passes. It shows the
shape of a model-graded kind (evaluators/judging.py) without any model."""

from __future__ import annotations

from trunchbull.evaluators.inputs import MODEL, OUTPUT, Preparation
from trunchbull.evaluators.judging import JudgeReply, JudgeRequest
from trunchbull.evaluators.registry import Evaluate, Kind, Result
from trunchbull.evaluators.spec_checks import SpecProblem


def check(spec, out, problems, case_tools) -> None:
    if not isinstance(spec.get("question"), str) or not spec["question"].strip():
        problems.append(SpecProblem("question", "evaluator-question", "question must be a non-empty string"))


def decide(reply: JudgeReply) -> Result:
    verdict = (reply.text or "").strip().lower()
    if verdict == "yes":
        return "pass", 1.0, "the judge said yes", None
    return "fail", 0.0, f"the judge said {verdict!r}", None


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    question = spec["question"]
    settings = {"temperature": 0, "judge": preparation.judge_model}

    def grade(output: str) -> JudgeRequest:
        messages = ({"role": "user", "content": f"{question}\n\nThe answer:\n{output}\n\nReply yes or no."},)
        return JudgeRequest(messages, settings, decide)

    return grade


KIND = Kind(
    name="judged",
    order=102,
    keys=frozenset({"kind", "question"}),
    reads=(OUTPUT, MODEL),
    prepare=prepare,
    check=check,
    example={"kind": "judged", "question": "Is the answer polite?"},
    passes_when="the judge model, asked `question` about the output, replies `yes`",
)
