"""SPEC §3.8 / seed "Tools": tool modules export AI SDK tools, converted to
JSON Schema; names unique across the release; every requested tool exists."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_fail, build_ok, expect_error, one_case, tool_module, with_deps

HEADER = 'import { tool, jsonSchema } from "ai"\nimport { z } from "zod"\n'


def tools_bench(bench, tools_src: str, eval_src: str | None = None, **more):
    return bench(with_deps({"evals/e.ts": eval_src or one_case("e"), "tools/t.ts": tools_src, **more}))


def test_tool_is_compiled_with_its_json_schema(bench):
    root = tools_bench(
        bench,
        HEADER
        + """
export const tools = {
  lookup_policy: tool({
    description: "Look up a policy by topic.",
    inputSchema: z.object({ topic: z.string().describe("Policy topic"), limit: z.number().int().optional() }),
    execute: async ({ topic }) => ({ topic, windowDays: 30 }),
  }),
}
""",
        one_case("e", tools='["lookup_policy"]'),
    )
    cases, manifest = build_ok(root)
    [entry] = manifest["tools"]
    assert entry["name"] == "lookup_policy" and entry["description"] == "Look up a policy by topic."
    assert entry["module"] == "tools/t.ts"
    schema = entry["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["topic"] == {"type": "string", "description": "Policy topic"}
    assert schema["properties"]["limit"]["type"] == "integer"
    assert schema["required"] == ["topic"]
    assert entry["bundle"].startswith("modules/") and entry["bundle"] in manifest["files"]
    assert cases[0]["tools"] == ["lookup_policy"]


def test_json_schema_helper_input_schema(bench):
    root = tools_bench(
        bench,
        HEADER
        + """
export const tools = {
  add: tool({
    description: "Add two numbers.",
    inputSchema: jsonSchema({ type: "object", properties: { a: { type: "number" } }, required: ["a"] }),
    execute: async ({ a }) => a + 1,
  }),
}
""",
    )
    [entry] = build_ok(root)[1]["tools"]
    assert entry["inputSchema"]["properties"] == {"a": {"type": "number"}} and entry["inputSchema"]["required"] == ["a"]


def test_several_tools_and_modules_in_order(bench):
    root = tools_bench(bench, tool_module("b_tool", "a_tool"), **{"tools/z.ts": tool_module("z_tool")})
    manifest = build_ok(root)[1]
    assert [(t["name"], t["module"]) for t in manifest["tools"]] == [
        ("b_tool", "tools/t.ts"),
        ("a_tool", "tools/t.ts"),
        ("z_tool", "tools/z.ts"),
    ]


def test_tool_module_must_export_named_tools(bench):
    root = tools_bench(bench, HEADER + 'export default { lookup: 1 }\n')
    expect_error(root, "tool-module-export", "tools/t.ts", message="named `tools`")


def test_tools_export_must_be_an_object(bench):
    root = tools_bench(bench, HEADER + 'export const tools = [1, 2]\n')
    expect_error(root, "tool-module-export", "tools/t.ts")


@pytest.mark.parametrize(
    "body, message",
    [
        pytest.param('{ inputSchema: z.object({}), execute: async () => 1 }', "description", id="no-description"),
        pytest.param(
            '{ description: "", inputSchema: z.object({}), execute: async () => 1 }',
            "empty description",
            id="empty-description",
        ),
        pytest.param(
            '{ description: "   ", inputSchema: z.object({}), execute: async () => 1 }',
            "empty description",
            id="blank-description",
        ),
        pytest.param('{ description: "D", execute: async () => 1 }', "inputSchema", id="no-input-schema"),
        pytest.param('{ description: "D", inputSchema: z.object({}) }', "execute", id="no-execute"),
        pytest.param(
            '{ description: "D", inputSchema: z.object({}), execute: "run" }', "execute", id="execute-not-function"
        ),
        pytest.param(
            '{ description: "D", inputSchema: 42, execute: async () => 1 }', "inputSchema", id="bad-input-schema"
        ),
        pytest.param('"not a tool"', "not an AI SDK tool", id="not-an-object"),
    ],
)
def test_each_tool_needs_description_input_schema_and_execute(bench, body, message):
    root = tools_bench(bench, HEADER + f'export const tools = {{\n  broken: {body},\n}}\n')
    expect_error(root, "tool-invalid", "tools/t.ts", message=message, line=4)


def test_tool_names_are_unique_across_the_release_naming_both_modules(bench):
    root = tools_bench(bench, tool_module("lookup"), **{"tools/u.ts": tool_module("lookup")})
    diag = expect_error(root, "duplicate-tool", "tools/u.ts", message="'lookup'")
    assert "tools/t.ts" in diag["message"]


def test_eval_requesting_unknown_tool(bench):
    root = tools_bench(bench, tool_module("lookup_policy"), one_case("e", tools='["lookup_polcy"]'))
    diag = expect_error(root, "unknown-tool", "evals/e.ts", message="'lookup_polcy'", line=1)
    assert "lookup_policy" in diag["hint"]


def test_case_requesting_unknown_tool(bench):
    root = tools_bench(
        bench,
        tool_module("lookup"),
        'export default { id: "e", evaluate: { kind: "non_empty" },\n'
        '  cases: [{ id: "ok", prompt: "p", tools: ["lookup"] },\n  { id: "bad", prompt: "p", tools: ["nope"] }] }\n',
    )
    expect_error(root, "unknown-tool", "evals/e.ts", message="'nope'", line=3)


def test_jsonl_case_requesting_unknown_tool_names_the_line(bench):
    root = tools_bench(
        bench,
        tool_module("lookup"),
        'export default { id: "e", evaluate: { kind: "non_empty" }, cases: "./e.jsonl" }\n',
        **{
            "evals/e.jsonl": '{"id": "a", "prompt": "p", "tools": ["lookup"]}\n{"id": "b", "prompt": "p", "tools": ["ghost"]}\n'
        },
    )
    expect_error(root, "unknown-tool", "evals/e.jsonl", message="'ghost'", line=2)


def test_unknown_tool_without_any_tool_module(bench):
    root = bench({"evals/e.ts": one_case("e", tools='["lookup"]')})
    diag = expect_error(root, "unknown-tool", "evals/e.ts")
    assert "none" in diag["hint"]


def test_tool_module_import_error_is_reported(bench):
    root = tools_bench(bench, HEADER + 'throw new Error("tool module boom")\nexport const tools = {}\n')
    expect_error(root, "module-import", "tools/t.ts", message="tool module boom")


def test_listed_tool_modules(bench):
    root = tools_bench(
        bench,
        tool_module("listed"),
        **{
            "tools/ignored.ts": "this is not even valid TypeScript (\n",
            "benchmark.config.ts": 'export default { protocolVersion: 1, tools: ["tools/t.ts"] }\n',
        },
    )
    assert [t["name"] for t in build_ok(root)[1]["tools"]] == ["listed"]


def test_all_tool_problems_in_one_run(bench):
    root = tools_bench(
        bench,
        tool_module("dup") + '\nexport const other = 1\n',
        one_case("e", tools='["missing"]'),
        **{"tools/u.ts": tool_module("dup")},
    )
    codes = sorted({(d["code"], d["file"]) for d in build_fail(root)})
    assert codes == [("duplicate-tool", "tools/u.ts"), ("unknown-tool", "evals/e.ts")]


def test_a_misspelt_case_tool_is_reported_at_its_literal_beside_the_plan_error(bench):
    """Every rule a value breaks, each at its literal: the plan step names a
    tool the case does not list (evaluator-unknown-tool), and the case lists a
    tool no module defines (unknown-tool, at the `tools` entry, not the id)."""
    root = tools_bench(
        bench,
        tool_module("lookup_order"),
        'export default {\n  id: "e",\n  cases: [\n    {\n'
        '      id: "c1",\n      prompt: "p",\n      tools: ["lookup_ordr"],\n'
        '      evaluate: { kind: "tool_call_syntax", version: 1, alternatives: [[{ toolName: "lookup_order" }]] },\n'
        '    },\n  ],\n}\n',
    )
    errors = {d["code"]: d for d in build_fail(root)}
    assert sorted(errors) == ["evaluator-unknown-tool", "unknown-tool"]
    unknown = errors["unknown-tool"]
    assert (unknown["file"], unknown["line"], unknown["col"]) == ("evals/e.ts", 7, 15)
    assert "'lookup_ordr'" in unknown["message"] and "did you mean 'lookup_order'?" in unknown["hint"]
    assert (errors["evaluator-unknown-tool"]["line"], errors["evaluator-unknown-tool"]["col"]) == (8, 75)


def test_unknown_tools_of_the_eval_and_of_jsonl_cases_point_at_their_literals(bench):
    root = tools_bench(
        bench,
        tool_module("lookup"),
        'export default {\n  id: "e",\n  tools: ["lookup", "ghost_eval"],\n'
        '  evaluate: { kind: "non_empty" },\n  cases: "./e.jsonl",\n}\n',
        **{"evals/e.jsonl": '{"id": "a", "prompt": "p", "tools": ["lookup", "ghost"]}\n'},
    )
    found = sorted((d["file"], d["line"], d["col"], d["message"]) for d in build_fail(root))
    assert found == [
        ("evals/e.jsonl", 1, 48, "case 'a' requests tool 'ghost', which no tool module defines"),
        ("evals/e.ts", 3, 21, "eval 'e' requests tool 'ghost_eval', which no tool module defines"),
    ]
