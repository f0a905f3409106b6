"""`{ kind: "rubric", rubric, judge?, template?, partialCredit? }`: a judge
model decides whether the output meets the rubric (model_graded.py), asked
with Inspect AI's `model_graded_qa` template (the rubric as its criterion)
unless the benchmark gives its own."""

from __future__ import annotations

from trunchbull.evaluators.inputs import MODEL, OUTPUT, PROMPT, RELEASE_FILES
from trunchbull.evaluators.judge_templates import MODEL_GRADED_QA_TEMPLATE
from trunchbull.evaluators.model_graded import SHARED_KEYS, check_shared, prepare_shared, release_files
from trunchbull.evaluators.registry import Kind

KIND = Kind(
    name="rubric",
    order=7,
    keys=SHARED_KEYS | {"rubric"},
    reads=(PROMPT, OUTPUT, MODEL, RELEASE_FILES),
    prepare=prepare_shared("rubric"),
    check=check_shared("rubric", MODEL_GRADED_QA_TEMPLATE),
    example={
        "kind": "rubric",
        "rubric": "States the 30-day return window politely and invents no other policy.",
        "judge": "openai:gpt-4o-mini",
        "partialCredit": True,
        "template": "Task: {question}\nReply: {answer}\nRubric: {criterion}\n{instructions}",
    },
    passes_when="a judge model grades the output `C` against `rubric` (`GRADE: C`/`P`/`I` as Inspect's "
    "`model_graded_qa` reads it; `P` scores 0.5, offered with `partialCredit`; no grade is an `error`)",
    release_files=release_files(MODEL_GRADED_QA_TEMPLATE),
)
