"""SPEC §3.3-3.4 / seed "Eval modules": the default export, its keys, the
exactly-one-shape rule, functions, bundling and import failures."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_ok, case, expect_error

SRC = {"module": "evals/e.ts"}


def module(body: str) -> dict:
    return {"evals/e.ts": f"export default {body}\n"}


def test_prompt_plus_evaluate_is_one_case_whose_id_is_the_eval_id(bench):
    root = bench(
        module(
            '{ id: "refunds", title: "Refund policy", description: "Checks policy.", '
            'systemPrompt: "Answer briefly.", prompt: "What is the window?", '
            'evaluate: { kind: "contains", expected: "30 days" } }'
        )
    )
    assert build_ok(root)[0] == [
        case(
            "refunds",
            "refunds",
            "Refund policy",
            "What is the window?",
            {"kind": "contains", "expected": "30 days"},
            description="Checks policy.",
            systemPrompt="Answer briefly.",
            source=SRC,
        )
    ]


def test_inline_cases_shape(bench):
    root = bench(
        module(
            '{ id: "e", evaluate: { kind: "non_empty" }, cases: [{ id: "e.one", prompt: "One" }, '
            '{ id: "e.two", prompt: "Two" }] }'
        )
    )
    assert build_ok(root)[0] == [
        case("e.one", "e", "e — e.one", "One", {"kind": "non_empty"}, source=SRC),
        case("e.two", "e", "e — e.two", "Two", {"kind": "non_empty"}, source=SRC),
    ]


def test_eval_requires_id(bench):
    root = bench(module('{ prompt: "p", evaluate: { kind: "non_empty" } }'))
    expect_error(root, "eval-id", "evals/e.ts", message="requires id", line=1)


def test_unknown_eval_key_is_rejected_with_suggestion(bench):
    root = bench(module('{ id: "e", prompt: "p", evaluate: { kind: "non_empty" }, sytemPrompt: "x" }'))
    diag = expect_error(root, "eval-unknown-key", "evals/e.ts", message="sytemPrompt")
    assert "'systemPrompt'" in diag["hint"]


@pytest.mark.parametrize("key", ["title", "description", "systemPrompt"])
@pytest.mark.parametrize("value", ['""', "  ", "3"])
def test_optional_eval_texts_must_be_non_empty_strings(bench, key, value):
    literal = value if value == "3" else f'"{value.strip(chr(34))}"'
    root = bench(module(f'{{ id: "e", prompt: "p", evaluate: {{ kind: "non_empty" }}, {key}: {literal} }}'))
    diag = expect_error(root, "field-type", "evals/e.ts")
    assert diag["message"].startswith(f"{key}:")


def test_eval_tools_must_be_an_array(bench):
    root = bench(module('{ id: "e", prompt: "p", evaluate: { kind: "non_empty" }, tools: "lookup" }'))
    expect_error(root, "tools-list", "evals/e.ts")


def test_eval_tools_must_be_unique(bench):
    root = bench(module('{ id: "e", prompt: "p", evaluate: { kind: "non_empty" }, tools: ["a", "a"] }'))
    expect_error(root, "tools-duplicate", "evals/e.ts", message="tools[1]")


def test_prompt_together_with_cases_is_an_error(bench):
    root = bench(module('{ id: "e", prompt: "p", evaluate: { kind: "non_empty" }, cases: [{ id: "c", prompt: "p" }] }'))
    expect_error(root, "eval-shape", "evals/e.ts", message="not both", line=1)


def test_neither_prompt_nor_cases_is_an_error(bench):
    root = bench(module('{ id: "e", evaluate: { kind: "non_empty" } }'))
    expect_error(root, "eval-shape", "evals/e.ts", line=1)


def test_prompt_without_evaluate_is_an_error(bench):
    root = bench(module('{ id: "e", prompt: "p" }'))
    expect_error(root, "eval-shape", "evals/e.ts", message="requires evaluate", line=1)


def test_one_case_prompt_must_be_non_empty(bench):
    root = bench(module('{ id: "e", prompt: "  ", evaluate: { kind: "non_empty" } }'))
    expect_error(root, "case-prompt", "evals/e.ts")


def test_inline_cases_must_not_be_empty(bench):
    root = bench(module('{ id: "e", evaluate: { kind: "non_empty" }, cases: [] }'))
    expect_error(root, "cases-empty", "evals/e.ts")


@pytest.mark.parametrize("value", ["42", "null", "true"])
def test_cases_must_be_array_path_or_transformer(bench, value):
    root = bench(module(f'{{ id: "e", evaluate: {{ kind: "non_empty" }}, cases: {value} }}'))
    expect_error(root, "eval-cases", "evals/e.ts")


def test_default_export_must_be_an_object(bench):
    root = bench(module('["not", "an", "eval"]'))
    expect_error(root, "eval-type", "evals/e.ts", line=1)


def test_module_level_custom_evaluate_function_is_allowed(bench, tmp_path):
    root = bench(
        {
            "evals/e.ts": 'export default {\n  id: "e",\n  cases: [{ id: "e.a", prompt: "A", data: { want: 1 } }],\n'
            '  evaluate: ({ output, caseData }) => output.includes(String(caseData.want)),\n}\n'
        }
    )
    cases, manifest = build_ok(root)
    [entry] = manifest["evals"]
    assert entry["bundle"].startswith("modules/") and entry["evaluatorKinds"] == ["custom"]
    assert cases == [
        case("e.a", "e", "e — e.a", "A", {"kind": "custom", "module": entry["bundle"]}, data={"want": 1}, source=SRC)
    ]


def test_one_case_eval_with_custom_evaluate_function(bench):
    root = bench(module('{ id: "e", prompt: "p", async evaluate({ output }) { return output.length > 0 } }'))
    cases, manifest = build_ok(root)
    assert cases == [case("e", "e", "e", "p", {"kind": "custom", "module": manifest["evals"][0]["bundle"]}, source=SRC)]


def test_per_case_evaluator_functions_are_not_supported(bench):
    root = bench(
        module(
            '{ id: "e", evaluate: { kind: "non_empty" },\n'
            '  cases: [{ id: "c", prompt: "p", evaluate: (x) => true }] }'
        )
    )
    diag = expect_error(root, "case-evaluate-function", "evals/e.ts")
    assert "per-case evaluator functions are not supported" in diag["message"]
    assert diag["message"].startswith("cases[0].evaluate:")


@pytest.mark.parametrize(
    "where, path",
    [
        ('cases: [{ id: "c", prompt: "p", data: { check: () => 1 } }]', "cases[0].data.check"),
        ('prompt: "p", title: () => "x"', "title"),
    ],
)
def test_functions_elsewhere_are_rejected(bench, where, path):
    root = bench(module(f'{{ id: "e", evaluate: {{ kind: "non_empty" }}, {where} }}'))
    diag = expect_error(root, "function-not-allowed", "evals/e.ts")
    assert diag["message"].startswith(f"{path}:")


def test_local_imports_are_bundled(bench):
    root = bench(
        {
            "lib/prompts.ts": 'export const PROMPTS: string[] = ["One", "Two"]\n',
            "evals/e.ts": 'import { PROMPTS } from "../lib/prompts"\n'
            'export default { id: "e", evaluate: { kind: "non_empty" },\n'
            '  cases: PROMPTS.map((prompt, i) => ({ id: `e.${i}`, prompt })) }\n',
        }
    )
    cases, manifest = build_ok(root)
    assert cases == [
        case("e.0", "e", "e — e.0", "One", {"kind": "non_empty"}, source=SRC),
        case("e.1", "e", "e — e.1", "Two", {"kind": "non_empty"}, source=SRC),
    ]
    assert set(manifest["inputs"]) == {"evals/e.ts", "lib/prompts.ts"}
    assert manifest["counts"]["modules"] == 0  # declarative evals need no bundle at run time


def test_esbuild_errors_are_diagnostics_with_line_and_col(bench):
    bad = '  prompt: "p" +,'
    root = bench({"evals/e.ts": 'export default {\n  id: "e",\n' + bad + "\n}\n"})
    diag = expect_error(root, "bundle", "evals/e.ts", line=3)
    assert diag["col"] == bad.index(",") + 1 and diag["message"] == 'Unexpected ","'


def test_unresolvable_local_import_is_a_bundle_error(bench):
    root = bench(
        {
            "evals/e.ts": 'import { X } from "./missing"\nexport default { id: "e", prompt: X, evaluate: { kind: "non_empty" } }\n'
        }
    )
    expect_error(root, "bundle", "evals/e.ts", line=1)


def test_module_that_throws_on_import_is_reported(bench):
    root = bench(
        {
            "evals/e.ts": 'throw new Error("boom")\nexport default { id: "e", prompt: "p", evaluate: { kind: "non_empty" } }\n'
        }
    )
    expect_error(root, "module-import", "evals/e.ts", message="boom")


def test_inspection_is_sandboxed_no_file_writes(bench, tmp_path):
    target = tmp_path / "written"
    root = bench(
        {
            "evals/e.ts": f'import {{ writeFileSync }} from "node:fs"\nwriteFileSync({str(target)!r}, "x")\n'
            'export default { id: "e", prompt: "p", evaluate: { kind: "non_empty" } }\n'
        }
    )
    expect_error(root, "module-import", "evals/e.ts")
    assert not target.exists()
