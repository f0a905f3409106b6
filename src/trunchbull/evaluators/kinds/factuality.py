"""`{ kind: "factuality", expected, judge?, template?, partialCredit? }`: a
judge model compares the output's factual content with a reference answer
(model_graded.py), asked with Inspect AI's `model_graded_fact` template
unless the benchmark gives its own."""

from __future__ import annotations

from trunchbull.evaluators.inputs import MODEL, OUTPUT, PROMPT, RELEASE_FILES
from trunchbull.evaluators.judge_templates import MODEL_GRADED_FACT_TEMPLATE
from trunchbull.evaluators.model_graded import SHARED_KEYS, check_shared, prepare_shared, release_files
from trunchbull.evaluators.registry import Kind

KIND = Kind(
    name="factuality",
    order=8,
    keys=SHARED_KEYS | {"expected"},
    reads=(PROMPT, OUTPUT, MODEL, RELEASE_FILES),
    prepare=prepare_shared("expected"),
    check=check_shared("expected", MODEL_GRADED_FACT_TEMPLATE),
    example={
        "kind": "factuality",
        "expected": "Items can be returned within 30 days of delivery.",
        "judge": "anthropic:claude-sonnet-4-5",
        "partialCredit": False,
        "template": "Question: {question}\nExpert: {criterion}\nSubmission: {answer}\n{instructions}",
    },
    passes_when="a judge model finds the output contains the content of the reference answer `expected` "
    "(Inspect's `model_graded_fact` template and grades, as for `rubric`)",
    release_files=release_files(MODEL_GRADED_FACT_TEMPLATE),
)
