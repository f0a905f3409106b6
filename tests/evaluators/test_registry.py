"""The evaluator kinds' registry is the one source of truth: every kind's
module is found, its example spec passes the compile-time checks and
prepares a grader, the CSV rules and the `kinds: …` hint follow it, and
docs/evaluators.md has a table row for every kind, rendered from the
registry (the assertion message shows the row to paste)."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import REPO
from trunchbull.evaluators.inputs import CASE_TOOLS, INPUTS, MODEL, PREPARATION_INPUTS, SAMPLE_INPUTS, Preparation
from trunchbull.evaluators.judging import JudgeReply, JudgeRequest
from trunchbull.evaluators.registry import Kind, evaluators, kinds, kinds_from, prepare, row_kinds
from trunchbull.evaluators.specs import validate_spec

DOCS = REPO / "docs" / "evaluators.md"


def js_literal(value) -> str:
    """A spec as authors write it: `{ kind: "exact", expected: "30 days" }`."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k}: {js_literal(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(js_literal(v) for v in value) + "]"
    return orjson.dumps(value).decode()


def doc_row(kind) -> str:
    example = js_literal(kind.example)
    csv = {None: "no", "nothing": "yes", "expected": "yes (`expected` from each row)"}[kind.from_rows]
    return f"| `{kind.name}` | `{example}` | {kind.passes_when} | {csv} |"


def test_every_kind_is_found_in_its_documented_order():
    assert list(kinds()) == [
        "non_empty",
        "exact",
        "contains",
        "answer_bank",
        "gsm8k",
        "tool_call_syntax",
        "rubric",
        "factuality",
    ]
    assert [k.order for k in kinds().values()] == sorted(k.order for k in kinds().values())
    assert row_kinds() == ["non_empty", "exact", "contains"]


# a sample input's value for an empty answer
EMPTY = {
    "output": "",
    "caseData": None,
    "toolCalls": [],
    "normalizedToolCalls": [],
    "finishReason": "stop",
    "usage": None,
    "prompt": "What is the return window?",
}


def test_every_example_validates_and_grades():
    for name, kind in kinds().items():
        tools = ["lookup_policy"] if CASE_TOOLS in kind.reads else None
        normalized, problems = validate_spec(kind.example, case_tools=tools)
        assert problems == [], (name, problems)
        files = kind.release_files(normalized) if kind.release_files else None
        evaluate = prepare(normalized, Preparation(case_tools=tools, release_files=files))
        outcome = evaluate(*(EMPTY[input] for input in kind.sample_inputs))
        if MODEL in kind.reads:  # a judge's request, decided on the judge's reply
            assert isinstance(outcome, JudgeRequest) and EMPTY["prompt"] in outcome.messages[-1]["content"], name
            outcome = outcome.decide(JudgeReply("The reply is fine.\nGRADE: C"))
        outcome, score, message, _ = outcome
        assert outcome in ("pass", "fail") and message, name


def test_every_kind_declares_what_it_reads():
    assert set(EMPTY) == set(SAMPLE_INPUTS)
    for kind in kinds().values():
        assert kind.reads and set(kind.reads) <= set(INPUTS), kind.name
        assert kind.sample_inputs + kind.preparation_inputs == tuple(
            sorted(kind.reads, key=lambda name: name in PREPARATION_INPUTS)
        )
    assert kinds()["tool_call_syntax"].reads == ("normalizedToolCalls", "caseTools")
    assert {kinds()[name].reads for name in ("non_empty", "exact", "contains", "answer_bank", "gsm8k")} == {("output",)}
    assert {kinds()[name].reads for name in ("rubric", "factuality")} == {("prompt", "output", "model", "releaseFiles")}


@pytest.mark.parametrize("reads", [("outputs",), ("output", "output"), ("model", "judge")])
def test_a_kind_reading_an_unknown_input_is_refused(reads):
    example = kinds()["non_empty"]
    with pytest.raises(ValueError, match="at most once"):
        Kind(**{**{f: getattr(example, f) for f in example.__dataclass_fields__}, "name": "x", "reads": reads})


def test_kinds_from_another_package_are_added_for_the_block_only():
    built_in = list(kinds())
    with kinds_from("tests.evaluators.kinds"):
        assert list(kinds()) == [*built_in, "first_step_tools", "judged"]
        assert "custom" in evaluators() and "judged" in evaluators()
        assert validate_spec({"kind": "first_step_tools", "tools": ["a"]}, case_tools=["b"])[1][0].code == (
            "evaluator-unknown-tool"
        )
    assert list(kinds()) == built_in
    assert validate_spec({"kind": "judged", "question": "?"})[1][0].code == "evaluator-kind"


def test_a_package_whose_kind_has_a_known_name_is_refused(tmp_path, monkeypatch):
    package = tmp_path / "clashing_kinds"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "again.py").write_text("from trunchbull.evaluators.kinds.exact import KIND\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="two evaluator kinds are named 'exact'"):
        with kinds_from("clashing_kinds"):
            pass
    assert "exact" in kinds()  # the registry is as it was


def test_unknown_kind_hint_lists_the_registry():
    _, (problem,) = validate_spec({"kind": "exactly"})
    assert problem.code == "evaluator-kind" and problem.hint.endswith("kinds: " + ", ".join(kinds()))


def test_every_kind_has_its_row_in_the_docs_table():
    text = DOCS.read_text()
    for kind in kinds().values():
        assert doc_row(kind) in text, f"docs/evaluators.md lacks the row of {kind.name}:\n{doc_row(kind)}"
        assert f"## `{kind.name}`" in text, f"docs/evaluators.md has no section for {kind.name}"
