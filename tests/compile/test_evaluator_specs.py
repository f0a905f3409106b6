"""SPEC §4 compile-time rules / seed "Evaluators": declarative evaluator
specs are validated (and gsm8k numbers normalized) when compiling."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_fail, build_ok, case, expect_error, tool_module, with_deps

SRC = {"module": "evals/e.ts"}


def spec_bench(bench, spec: str, **extra):
    fields = "".join(f", {k}: {v}" for k, v in extra.items())
    return bench({"evals/e.ts": f'export default {{ id: "e", prompt: "p", evaluate: {spec}{fields} }}\n'})


@pytest.mark.parametrize(
    "spec, compiled",
    [
        pytest.param('{ kind: "non_empty" }', {"kind": "non_empty"}, id="non_empty"),
        pytest.param('{ kind: "exact", expected: "30 days" }', {"kind": "exact", "expected": "30 days"}, id="exact"),
        pytest.param(
            '{ kind: "contains", expected: " 30 days " }', {"kind": "contains", "expected": " 30 days "}, id="contains"
        ),
        pytest.param(
            '{ kind: "answer_bank", answers: ["30 days", "thirty days"], forbiddenAnswers: ["60 days"] }',
            {"kind": "answer_bank", "answers": ["30 days", "thirty days"], "forbiddenAnswers": ["60 days"]},
            id="answer_bank",
        ),
        pytest.param(
            '{ kind: "answer_bank", answers: ["yes"] }',
            {"kind": "answer_bank", "answers": ["yes"]},
            id="answer_bank-no-forbidden",
        ),
        pytest.param('{ kind: "gsm8k", expected: "41" }', {"kind": "gsm8k", "expected": "41"}, id="gsm8k-string"),
        pytest.param(
            '{ kind: "gsm8k", expected: "-2.5" }', {"kind": "gsm8k", "expected": "-2.5"}, id="gsm8k-negative-decimal"
        ),
        pytest.param('{ kind: "gsm8k", expected: 41 }', {"kind": "gsm8k", "expected": "41"}, id="gsm8k-json-number"),
        pytest.param(
            '{ kind: "gsm8k", expected: 2.50 }', {"kind": "gsm8k", "expected": "2.5"}, id="gsm8k-float-shortest"
        ),
        pytest.param(
            '{ kind: "gsm8k", expected: 1e21 }',
            {"kind": "gsm8k", "expected": "1000000000000000000000"},
            id="gsm8k-large-number",
        ),
        pytest.param('{ kind: "gsm8k", expected: 0.1 }', {"kind": "gsm8k", "expected": "0.1"}, id="gsm8k-0.1"),
    ],
)
def test_valid_specs_compile(bench, spec, compiled):
    root = spec_bench(bench, spec)
    assert build_ok(root)[0] == [case("e", "e", "e", "p", compiled, source=SRC)]


@pytest.mark.parametrize(
    "spec, code, path",
    [
        pytest.param(
            '{ kind: "non_empty", expected: "x" }',
            "evaluator-unknown-key",
            "evaluate.expected",
            id="non_empty-extra-key",
        ),
        pytest.param('{ kind: "fuzzy" }', "evaluator-kind", "evaluate.kind", id="unknown-kind"),
        pytest.param('{ expected: "x" }', "evaluator-kind", "evaluate.kind", id="no-kind"),
        pytest.param('{ kind: "custom" }', "evaluator-kind", "evaluate.kind", id="custom-is-not-declarative"),
        pytest.param("{ kind: {} }", "evaluator-kind", "evaluate.kind", id="kind-is-an-object"),
        pytest.param("{ kind: [1] }", "evaluator-kind", "evaluate.kind", id="kind-is-an-array"),
        pytest.param('"contains"', "evaluator-invalid", "evaluate", id="not-an-object"),
        pytest.param('{ kind: "exact" }', "evaluator-missing-expected", "evaluate", id="exact-no-expected"),
        pytest.param('{ kind: "exact", expected: "" }', "evaluator-expected", "evaluate.expected", id="exact-empty"),
        pytest.param(
            '{ kind: "exact", expected: " 30 days" }', "evaluator-expected", "evaluate.expected", id="exact-whitespace"
        ),
        pytest.param('{ kind: "exact", expected: 30 }', "evaluator-expected", "evaluate.expected", id="exact-number"),
        pytest.param('{ kind: "contains" }', "evaluator-missing-expected", "evaluate", id="contains-no-expected"),
        pytest.param(
            '{ kind: "contains", expected: "   " }', "evaluator-expected", "evaluate.expected", id="contains-blank"
        ),
        pytest.param(
            '{ kind: "answer_bank", answers: [] }', "evaluator-answers", "evaluate.answers", id="answer_bank-empty"
        ),
        pytest.param('{ kind: "answer_bank" }', "evaluator-answers", "evaluate.answers", id="answer_bank-missing"),
        pytest.param(
            '{ kind: "answer_bank", answers: ["ok", "?!"] }',
            "evaluator-answers",
            "evaluate.answers[1]",
            id="answer_bank-normalizes-empty",
        ),
        pytest.param(
            '{ kind: "answer_bank", answers: ["30 days"], forbiddenAnswers: ["30-DAYS"] }',
            "evaluator-answer-forbidden",
            "evaluate.forbiddenAnswers[0]",
            id="answer_bank-also-forbidden",
        ),
        pytest.param(
            '{ kind: "answer_bank", answers: ["a"], forbiddenAnswers: "b" }',
            "evaluator-answers",
            "evaluate.forbiddenAnswers",
            id="answer_bank-forbidden-not-array",
        ),
        pytest.param('{ kind: "gsm8k" }', "evaluator-missing-expected", "evaluate", id="gsm8k-missing"),
        pytest.param(
            '{ kind: "gsm8k", expected: "1,000" }',
            "evaluator-gsm8k-expected",
            "evaluate.expected",
            id="gsm8k-separator",
        ),
        pytest.param(
            '{ kind: "gsm8k", expected: "2.50" }',
            "evaluator-gsm8k-expected",
            "evaluate.expected",
            id="gsm8k-trailing-zero",
        ),
        pytest.param(
            '{ kind: "gsm8k", expected: "+3" }', "evaluator-gsm8k-expected", "evaluate.expected", id="gsm8k-plus"
        ),
        pytest.param(
            '{ kind: "gsm8k", expected: "007" }',
            "evaluator-gsm8k-expected",
            "evaluate.expected",
            id="gsm8k-leading-zero",
        ),
        pytest.param(
            '{ kind: "gsm8k", expected: "$5" }', "evaluator-gsm8k-expected", "evaluate.expected", id="gsm8k-unit"
        ),
        pytest.param(
            '{ kind: "gsm8k", expected: true }', "evaluator-gsm8k-expected", "evaluate.expected", id="gsm8k-boolean"
        ),
    ],
)
def test_invalid_specs_are_rejected_with_their_path(bench, spec, code, path):
    root = spec_bench(bench, spec)
    diag = expect_error(root, code, "evals/e.ts")
    assert diag["message"].startswith(f"{path}:"), diag


# ------------------------------------------------------------ tool_call_syntax


def tcs_bench(
    bench,
    alternatives: str,
    *,
    version: str = "1",
    eval_tools: str = '["lookup", "search"]',
    case_tools: str | None = None,
):
    case_field = f", tools: {case_tools}" if case_tools is not None else ""
    return bench(
        with_deps(
            {
                "tools/t.ts": tool_module("lookup", "search"),
                "evals/e.ts": f'export default {{ id: "e", tools: {eval_tools},\n'
                f'  evaluate: {{ kind: "tool_call_syntax", version: {version}, alternatives: {alternatives} }},\n'
                f'  cases: [{{ id: "c", prompt: "p"{case_field} }}] }}\n',
            }
        )
    )


def test_tool_call_syntax_spec_compiles(bench):
    root = tcs_bench(
        bench,
        '[[{ toolName: "lookup", input: { topic: "refunds" } }], [{ toolName: "search" }, { toolName: "lookup" }]]',
    )
    [compiled] = build_ok(root)[0]
    assert compiled["evaluate"] == {
        "kind": "tool_call_syntax",
        "version": 1,
        "alternatives": [
            [{"toolName": "lookup", "input": {"topic": "refunds"}}],
            [{"toolName": "search"}, {"toolName": "lookup"}],
        ],
    }
    assert compiled["tools"] == ["lookup", "search"]


@pytest.mark.parametrize(
    "kwargs, code, path",
    [
        pytest.param(
            {"alternatives": '[[{ toolName: "lookup" }]]', "version": "2"},
            "evaluator-version",
            "evaluate.version",
            id="version-not-1",
        ),
        pytest.param({"alternatives": "[]"}, "evaluator-plans", "evaluate.alternatives", id="no-plans"),
        pytest.param(
            {"alternatives": '[{ toolName: "lookup" }]'},
            "evaluator-plans",
            "evaluate.alternatives[0]",
            id="plan-not-array",
        ),
        pytest.param(
            {"alternatives": '[[{ tool: "lookup" }]]'},
            "evaluator-plans",
            "evaluate.alternatives[0][0]",
            id="step-without-toolName",
        ),
        pytest.param(
            {"alternatives": '[[{ toolName: "lookup", input: "x" }]]'},
            "evaluator-plans",
            "evaluate.alternatives[0][0].input",
            id="input-not-object",
        ),
        pytest.param(
            {"alternatives": '[[{ toolName: "lookup", args: {} }]]'},
            "evaluator-unknown-key",
            "evaluate.alternatives[0][0].args",
            id="step-unknown-key",
        ),
        pytest.param(
            {"alternatives": '[[{ toolName: "delete_all" }]]'},
            "evaluator-unknown-tool",
            "cases[0].evaluate.alternatives[0][0].toolName: (inherited from the eval)",
            id="tool-not-among-eval-tools",
        ),
        pytest.param(
            {"alternatives": '[[{ toolName: "search" }]]', "case_tools": '["lookup"]'},
            "evaluator-unknown-tool",
            "cases[0].evaluate.alternatives[0][0].toolName",
            id="tool-not-among-case-tools",
        ),
    ],
)
def test_tool_call_syntax_rules(bench, kwargs, code, path):
    root = tcs_bench(bench, **kwargs)
    errors = expect_error(root, code, "evals/e.ts")
    assert errors["message"].startswith(path if path.endswith(")") else f"{path}:"), errors


def test_a_plan_step_calling_a_misspelt_tool_gets_the_nearest_case_tool(bench):
    """As unknown-tool does: a "did you mean" when a case tool is close, none when nothing is."""
    root = tcs_bench(bench, '[[{ toolName: "serach" }], [{ toolName: "delete_all" }]]')
    errors = [d for d in build_fail(root) if d["code"] == "evaluator-unknown-tool"]
    assert [d["hint"] for d in errors] == [
        "did you mean 'search'? add the tool to the case's or eval's tools, or fix the name",
        "add the tool to the case's or eval's tools, or fix the name",
    ]


def test_case_level_tool_call_syntax_checks_the_case_tools(bench):
    root = bench(
        with_deps(
            {
                "tools/t.ts": tool_module("lookup", "search"),
                "evals/e.ts": 'export default { id: "e", tools: ["lookup"], cases: [{ id: "c", prompt: "p", tools: ["search"],\n'
                '  evaluate: { kind: "tool_call_syntax", version: 1, alternatives: [[{ toolName: "lookup" }]] } }] }\n',
            }
        )
    )
    diag = expect_error(root, "evaluator-unknown-tool", "evals/e.ts")
    assert diag["message"].startswith("cases[0].evaluate.alternatives[0][0].toolName:")


def test_case_level_spec_is_validated(bench):
    root = bench(
        {
            "evals/e.ts": 'export default { id: "e", cases: [{ id: "c", prompt: "p", evaluate: { kind: "gsm8k", expected: "x" } }] }\n'
        }
    )
    diag = expect_error(root, "evaluator-gsm8k-expected", "evals/e.ts")
    assert diag["message"].startswith("cases[0].evaluate.expected:")
