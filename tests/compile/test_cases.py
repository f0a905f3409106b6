"""SPEC §3.5 / seed "Cases and inheritance": case keys, field-specific
inheritance, compiled titles, private data, IDs stored as authored."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_ok, case, expect_error, tool_module, with_deps

SRC = {"module": "evals/e.ts"}
NON_EMPTY = {"kind": "non_empty"}


def module(body: str) -> dict:
    return {"evals/e.ts": f"export default {body}\n"}


def test_inheritance_is_field_specific(bench):
    root = bench(
        with_deps(
            {
                "tools/t.ts": tool_module("lookup_policy", "search", "escalate"),
                "evals/e.ts": """export default {
  id: "refunds",
  title: "Refund policy",
  description: "Eval description.",
  systemPrompt: "Eval system prompt.",
  tools: ["lookup_policy", "search"],
  evaluate: { kind: "contains", expected: "30 days" },
  cases: [
    { id: "refunds.inherits", prompt: "P1" },
    {
      id: "refunds.overrides",
      prompt: "P2",
      description: "Case description.",
      systemPrompt: "Case system prompt.",
      tools: ["escalate"],
      evaluate: { kind: "exact", expected: "Yes" },
      data: { order: 7, tags: ["a"] },
    },
    { id: "refunds.no-tools", prompt: "P3", tools: [] },
  ],
}
""",
            }
        )
    )
    cases, _ = build_ok(root)
    contains = {"kind": "contains", "expected": "30 days"}
    assert cases == [
        case(
            "refunds.inherits",
            "refunds",
            "Refund policy — refunds.inherits",
            "P1",
            contains,
            description="Eval description.",
            systemPrompt="Eval system prompt.",
            tools=["lookup_policy", "search"],
            source=SRC,
        ),
        case(
            "refunds.overrides",
            "refunds",
            "Refund policy — refunds.overrides",
            "P2",
            {"kind": "exact", "expected": "Yes"},
            description="Case description.",
            systemPrompt="Case system prompt.",
            tools=["escalate"],
            data={"order": 7, "tags": ["a"]},
            source=SRC,
        ),
        # tools: the case's list replaces the eval's, even when empty
        case(
            "refunds.no-tools",
            "refunds",
            "Refund policy — refunds.no-tools",
            "P3",
            contains,
            description="Eval description.",
            systemPrompt="Eval system prompt.",
            tools=[],
            source=SRC,
        ),
    ]


def test_absent_fields_compile_to_null_and_empty_tools(bench):
    root = bench(module('{ id: "e", cases: [{ id: "c", prompt: "p", evaluate: { kind: "non_empty" } }] }'))
    assert build_ok(root)[0] == [case("c", "e", "e — c", "p", NON_EMPTY, source=SRC)]


def test_data_is_never_inherited_and_not_appended_to_prompt(bench):
    root = bench(
        module(
            '{ id: "e", evaluate: { kind: "non_empty" }, cases: [\n'
            '  { id: "a", prompt: "Question?", data: { answer: "secret", n: [1, 2.5, null, true] } },\n'
            '  { id: "b", prompt: "Other?" } ] }'
        )
    )
    cases, _ = build_ok(root)
    assert cases[0]["prompt"] == "Question?" and cases[0]["data"] == {"answer": "secret", "n": [1, 2.5, None, True]}
    assert cases[1]["data"] is None


def test_case_ids_are_stored_exactly_as_authored_never_prefixed(bench):
    root = bench(module('{ id: "refunds", evaluate: { kind: "non_empty" }, cases: [{ id: "valid", prompt: "p" }] }'))
    [compiled] = build_ok(root)[0]
    assert compiled["id"] == "valid" and compiled["evalId"] == "refunds"


@pytest.mark.parametrize(
    "title, case_id, expected",
    [
        pytest.param(None, "c1", "e — c1", id="eval-id-when-no-title"),
        pytest.param("Refund policy", "c1", "Refund policy — c1", id="eval-title"),
        pytest.param("T" * 110, "abcdefghijklmnop", ("T" * 110 + " — abcdefghijklmnop")[:120], id="cut-to-120"),
        pytest.param("😀" * 118, "c", "😀" * 118 + " —", id="cut-counts-code-points"),
    ],
)
def test_expanded_case_titles(bench, title, case_id, expected):
    title_field = f'title: "{title}", ' if title else ""
    root = bench(
        module(
            f'{{ id: "e", {title_field}evaluate: {{ kind: "non_empty" }}, cases: [{{ id: "{case_id}", prompt: "p" }}] }}'
        )
    )
    [compiled] = build_ok(root)[0]
    assert compiled["title"] == expected
    assert len(compiled["title"]) <= 120


@pytest.mark.parametrize("title, expected", [(None, "e"), ("One case", "One case")])
def test_one_case_title_is_eval_title_or_id(bench, title, expected):
    title_field = f'title: "{title}", ' if title else ""
    root = bench(module(f'{{ id: "e", {title_field}prompt: "p", evaluate: {{ kind: "non_empty" }} }}'))
    assert build_ok(root)[0][0]["title"] == expected


def test_cases_keep_authored_order(bench):
    root = bench(
        module(
            '{ id: "e", evaluate: { kind: "non_empty" }, cases: ['
            + ", ".join(f'{{ id: "c{i}", prompt: "p" }}' for i in (3, 1, 2))
            + "] }"
        )
    )
    assert [c["id"] for c in build_ok(root)[0]] == ["c3", "c1", "c2"]


def test_unknown_case_key_is_rejected_with_suggestion(bench):
    root = bench(module('{ id: "e", evaluate: { kind: "non_empty" }, cases: [{ id: "c", prompt: "p", dat: 1 }] }'))
    diag = expect_error(root, "case-unknown-key", "evals/e.ts", message="cases[0].dat")
    assert "'data'" in diag["hint"]


def test_case_requires_id(bench):
    root = bench(module('{ id: "e", evaluate: { kind: "non_empty" }, cases: [{ prompt: "p" }] }'))
    expect_error(root, "case-id", "evals/e.ts", message="requires id")


@pytest.mark.parametrize("prompt", [None, '""', '"   "', "42"])
def test_case_requires_non_empty_string_prompt(bench, prompt):
    field = f", prompt: {prompt}" if prompt else ""
    root = bench(module(f'{{ id: "e", evaluate: {{ kind: "non_empty" }}, cases: [{{ id: "c"{field} }}] }}'))
    expect_error(root, "case-prompt", "evals/e.ts")


def test_case_must_be_an_object(bench):
    root = bench(module('{ id: "e", evaluate: { kind: "non_empty" }, cases: ["just a prompt"] }'))
    expect_error(root, "case-type", "evals/e.ts", message="cases[0]")


@pytest.mark.parametrize("key", ["description", "systemPrompt"])
def test_case_texts_must_be_non_empty(bench, key):
    root = bench(
        module(f'{{ id: "e", evaluate: {{ kind: "non_empty" }}, cases: [{{ id: "c", prompt: "p", {key}: "" }}] }}')
    )
    expect_error(root, "field-type", "evals/e.ts", message=f"cases[0].{key}")


def test_case_tools_must_be_unique_names(bench):
    root = bench(
        module('{ id: "e", evaluate: { kind: "non_empty" }, cases: [{ id: "c", prompt: "p", tools: ["a", "a"] }] }')
    )
    expect_error(root, "tools-duplicate", "evals/e.ts", message="cases[0].tools[1]")


def test_case_evaluate_must_be_declarative_object(bench):
    root = bench(module('{ id: "e", cases: [{ id: "c", prompt: "p", evaluate: "non_empty" }] }'))
    expect_error(root, "evaluator-invalid", "evals/e.ts", message="cases[0].evaluate")


def test_case_without_any_evaluator_is_an_error(bench):
    root = bench(
        module(
            '{ id: "e", cases: [{ id: "ok", prompt: "p", evaluate: { kind: "non_empty" } },\n'
            '  { id: "lonely", prompt: "p" }] }'
        )
    )
    expect_error(root, "case-no-evaluator", "evals/e.ts", message="lonely")


def test_case_evaluate_overrides_custom_eval_function(bench):
    root = bench(
        module(
            '{ id: "e", evaluate: ({ output }) => output === "x",\n'
            '  cases: [{ id: "a", prompt: "p" }, { id: "b", prompt: "p", evaluate: { kind: "exact", expected: "y" } }] }'
        )
    )
    cases, manifest = build_ok(root)
    bundle = manifest["evals"][0]["bundle"]
    assert [c["evaluate"] for c in cases] == [{"kind": "custom", "module": bundle}, {"kind": "exact", "expected": "y"}]
    assert manifest["evals"][0]["evaluatorKinds"] == ["custom", "exact"]


def test_diagnostic_points_at_the_case_line(bench):
    root = bench(
        module(
            '{\n  id: "e",\n  evaluate: { kind: "non_empty" },\n  cases: [\n    { id: "good", prompt: "p" },\n'
            '    { id: "bad", prompt: "" },\n  ],\n}'
        )
    )
    expect_error(root, "case-prompt", "evals/e.ts", line=6)
