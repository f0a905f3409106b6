"""What the model-graded kinds share (SPEC §4.1): `rubric` and `factuality`
differ only in the criterion they give the judge and their default template
(kinds/rubric.py, kinds/factuality.py); the keys they share, their checks,
how their compiled spec names its template, and the judge request they make
for a sample are here.

Keys besides the criterion: `judge` (a model SPEC the benchmark pins as its
default judge; `--judge` overrides it), `template` (the benchmark's own judge
prompt, judge_templates.py) and `partialCredit` (offer the judge a partial
grade, `P`, which scores 0.5). The compiled spec keeps the template it grades
with: the benchmark's own in `template` (its `{instructions}` filled in), or
the default's release file in `templateFile` (`templates/<sha256>.txt`, the
frozen text, written into the release beside the cases)."""

from __future__ import annotations

import re
from typing import Callable

from trunchbull.evaluators.inputs import Preparation
from trunchbull.evaluators.judge_templates import (
    ANSWER,
    CRITERION,
    QUESTION,
    TemplateError,
    default_template,
    freeze_template,
    neutralize,
    parse_template,
    render,
)
from trunchbull.evaluators.judging import JudgeReply, JudgeRequest
from trunchbull.evaluators.registry import Check, Evaluate, Result
from trunchbull.evaluators.spec_checks import SpecProblem
from trunchbull.evaluators.verdicts import OFFERED, OFFERED_PARTIAL, decide_grade

SHARED_KEYS = frozenset({"kind", "judge", "template", "partialCredit"})
TEMPLATE_FILE = "templateFile"  # the compiled spec's: the default template's release file
# A model SPEC's form (§8.1): `provider` or `provider:MODEL`; whether the provider exists, and
# its credentials, are checked by `run` and `grade` before any call (run/model_spec.py).
_SPEC_FORM = re.compile(r"^[a-z][a-z0-9-]*(:\S.*)?$", re.DOTALL)
# The judge's call settings beyond the runner's own (temperature 0, the seed): none.
REQUEST_SETTINGS: dict = {}


def check_shared(criterion: str, default: str) -> Check:
    """The compile-time check of a kind whose criterion is the string key
    `criterion` and whose default template is `default`."""

    def check(spec: dict, out: dict, problems: list[SpecProblem], case_tools) -> None:
        value = spec.get(criterion)
        if criterion not in spec:
            problems.append(
                SpecProblem(
                    "",
                    f"evaluator-missing-{criterion}",
                    f"evaluator {spec['kind']} requires {criterion}",
                    f'write {{ kind: "{spec["kind"]}", {criterion}: "…" }}',
                )
            )
        elif not isinstance(value, str) or not value.strip():
            problems.append(SpecProblem(criterion, f"evaluator-{criterion}", f"{criterion} must be a non-empty string"))
        judge = spec.get("judge")
        if "judge" in spec and (not isinstance(judge, str) or not _SPEC_FORM.match(judge)):
            problems.append(
                SpecProblem(
                    "judge",
                    "evaluator-judge",
                    "judge must be a model SPEC (provider or provider:MODEL)",
                    'for example judge: "openai:gpt-4o-mini"',
                )
            )
        partial = spec.get("partialCredit", False)
        if not isinstance(partial, bool):
            problems.append(SpecProblem("partialCredit", "evaluator-partial-credit", "partialCredit must be a boolean"))
            partial = False
        if "template" not in spec:
            out[TEMPLATE_FILE] = default_template(default, partial)[0]
            return
        problem = _template_problem(spec["template"])
        if problem is not None:
            problems.append(problem)
        else:
            out["template"] = freeze_template(spec["template"], partial)

    return check


def _template_problem(template: object) -> SpecProblem | None:
    hint = "e.g. template: \"Task: {question}\\nAnswer: {answer}\\nCriterion: {criterion}\\n{instructions}\""
    if not isinstance(template, str) or not template.strip():
        return SpecProblem("template", "evaluator-template", "template must be a non-empty string", hint)
    try:
        pieces = parse_template(template)
    except TemplateError as err:
        return SpecProblem("template", "evaluator-template", f"the template is not valid: {err}", hint)
    if all(name != ANSWER for _, name in pieces):
        return SpecProblem(
            "template", "evaluator-template", "the template has no {answer}: the judge would never see the output", hint
        )
    return None


def release_files(default: str) -> Callable[[dict], dict[str, bytes]]:
    """The release file a compiled spec of a kind with this default template names (none for its own template)."""
    frozen = {default_template(default, partial)[0]: default_template(default, partial)[1] for partial in (False, True)}

    def files(spec: dict) -> dict[str, bytes]:
        name = spec.get(TEMPLATE_FILE)
        return {name: frozen[name]} if name in frozen else {}

    return files


def prepare_shared(criterion: str) -> Callable[[dict, Preparation], Evaluate]:
    """The prepared evaluator of a kind whose criterion is `criterion`:
    (prompt, output) → the judge request about that sample."""

    def prepare(spec: dict, preparation: Preparation) -> Evaluate:
        if TEMPLATE_FILE in spec:
            files = preparation.release_files or {}
            if spec[TEMPLATE_FILE] not in files:
                raise ValueError(f"the release has no judge template {spec[TEMPLATE_FILE]!r}")
            text = files[spec[TEMPLATE_FILE]].decode()
        else:
            text = spec["template"]
        try:
            pieces = parse_template(text)
        except TemplateError as err:
            raise ValueError(f"the judge template is not valid: {err}") from None
        offered = OFFERED_PARTIAL if spec.get("partialCredit") else OFFERED
        fixed = neutralize(spec[criterion])
        judge = spec.get("judge")

        def decide(reply: JudgeReply) -> Result:
            return decide_grade(reply, offered)

        def grade(prompt: str, output: str) -> JudgeRequest:
            values = {QUESTION: neutralize(prompt), ANSWER: neutralize(output), CRITERION: fixed}
            return JudgeRequest(({"role": "user", "content": render(pieces, values)},), REQUEST_SETTINGS, decide, judge)

        return grade

    return prepare
