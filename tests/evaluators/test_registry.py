"""The evaluator kinds' registry is the one source of truth: every kind's
module is found, its example spec passes the compile-time checks and
prepares a grader, the CSV rules and the `kinds: …` hint follow it, and
docs/evaluators.md has a table row for every kind, rendered from the
registry (the assertion message shows the row to paste)."""

from __future__ import annotations

import orjson

from tests.conftest import REPO
from trunchbull.evaluators.registry import csv_kinds, kinds, prepare
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
    csv = {None: "no", False: "yes", True: "yes (`expected` from each row)"}[kind.csv_expected]
    return f"| `{kind.name}` | `{example}` | {kind.passes_when} | {csv} |"


def test_every_kind_is_found_in_its_documented_order():
    assert list(kinds()) == ["non_empty", "exact", "contains", "answer_bank", "gsm8k", "tool_call_syntax"]
    assert [k.order for k in kinds().values()] == sorted(k.order for k in kinds().values())
    assert csv_kinds() == ["non_empty", "exact", "contains"]


def test_every_example_validates_and_grades():
    for name, kind in kinds().items():
        tools = ["lookup_policy"] if name == "tool_call_syntax" else None
        normalized, problems = validate_spec(kind.example, case_tools=tools)
        assert problems == [], (name, problems)
        outcome, score, message, _ = prepare(normalized, tools)("", [])
        assert outcome in ("pass", "fail") and message, name


def test_unknown_kind_hint_lists_the_registry():
    _, (problem,) = validate_spec({"kind": "exactly"})
    assert problem.code == "evaluator-kind" and problem.hint.endswith("kinds: " + ", ".join(kinds()))


def test_every_kind_has_its_row_in_the_docs_table():
    text = DOCS.read_text()
    for kind in kinds().values():
        assert doc_row(kind) in text, f"docs/evaluators.md lacks the row of {kind.name}:\n{doc_row(kind)}"
        assert f"## `{kind.name}`" in text, f"docs/evaluators.md has no section for {kind.name}"
