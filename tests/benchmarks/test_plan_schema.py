"""A tool_call_syntax plan whose input no valid call can have (a key the tool's schema does not
allow, a value of the wrong type or out of range) is a compile error at the plan's literal,
error[evaluator-plan-schema] with file:line:col and a hint; a plan the schema can accept builds."""

from __future__ import annotations

from tests.compile.helpers import build_fail, build_ok, with_deps

TOOLS = """import { tool } from "ai"
import { z } from "zod"

export const tools = {
  find_order: tool({
    description: "Find an order by its ID.",
    inputSchema: z.object({ orderId: z.string().min(2), rush: z.boolean().optional() }),
    execute: async ({ orderId }) => ({ orderId }),
  }),
  find_book: tool({
    description: "Find a book.",
    inputSchema: z.object({ isbn: z.string(), edition: z.number().int().max(9).optional() }),
    execute: async ({ isbn }) => ({ isbn }),
  }),
}
"""


def plan(tool: str, value: str) -> str:
    return f'{{ kind: "tool_call_syntax", version: 1, alternatives: [[{{ toolName: "{tool}", input: {value} }}]] }}'


def bench_with(bench, eval_src: str, **files: str):
    return bench(with_deps({"tools/t.ts": TOOLS, "evals/e.ts": eval_src, **files}))


EVAL = """export default {
  id: "e",
  tools: ["find_order"],
  cases: [
    { id: "e.ok", prompt: "Find A1.", evaluate: %s },
    { id: "e.key", prompt: "Find A1.", evaluate: %s },
    { id: "e.type", prompt: "Find A1.",
      evaluate: %s },
    { id: "e.book", prompt: "Find it.", tools: [{ tool: "find_book", as: "find" }], evaluate: %s },
  ],
}
"""


def test_plan_values_the_schema_rejects_are_errors_at_their_literal(bench):
    src = EVAL % (
        plan("find_order", '{ orderId: "A1", rush: true }'),
        plan("find_order", '{ orderID: "A1" }'),
        plan("find_order", "{ orderId: 7 }"),
        plan("find", '{ isbn: "1", edition: 12 }'),
    )
    root = bench_with(bench, src)
    errors = sorted((d for d in build_fail(root) if d["code"] == "evaluator-plan-schema"), key=lambda d: d["line"])
    assert [(d["file"], d["line"]) for d in errors] == [("evals/e.ts", 6), ("evals/e.ts", 8), ("evals/e.ts", 9)]
    key, wrong_type, book = errors
    lines = src.splitlines()
    # each at its key's literal: the column points at the key's name
    assert lines[key["line"] - 1][key["col"] - 1 :].startswith("orderID")
    assert lines[wrong_type["line"] - 1][wrong_type["col"] - 1 :].startswith("orderId: 7")
    assert lines[book["line"] - 1][book["col"] - 1 :].startswith("edition: 12")
    assert key["message"].startswith("cases[1].evaluate.alternatives[0][0].input.orderID: ")
    assert "allows no such key (it takes orderId, rush)" in key["message"]
    assert "7 is not of type 'string'" in wrong_type["message"]
    assert "'find' (tool 'find_book')" in book["message"] and "12 is greater than the maximum of 9" in book["message"]
    assert all("no call can match this plan" in d["hint"] for d in errors)
    assert not [d for d in build_fail(root) if d["code"] != "evaluator-plan-schema"]


def test_an_inherited_plan_is_reported_once_at_the_eval(bench):
    src = """export default {
  id: "e",
  tools: ["find_order"],
  evaluate: %s,
  cases: [{ id: "e.1", prompt: "one" }, { id: "e.2", prompt: "two" }],
}
""" % plan("find_order", '{ orderId: "X" }')
    (error,) = build_fail(bench_with(bench, src))
    assert error["code"] == "evaluator-plan-schema" and error["line"] == 4
    assert (
        error["message"].startswith("evaluate.alternatives[0][0].input.orderId: ")
        and "'X' is too short" in error["message"]
    )


def test_a_jsonl_case_plan_is_reported_on_its_line(bench):
    line = '{"id": "j.1", "prompt": "p", "tools": ["find_order"], "evaluate": ' + (
        '{"kind": "tool_call_syntax", "version": 1, "alternatives": [[{"toolName": "find_order", "input": {"rush": "yes"}}]]}}'
    )
    root = bench_with(
        bench,
        'export default { id: "j", cases: "./cases.jsonl" }\n',
        **{"evals/cases.jsonl": '{"id": "j.0", "prompt": "p", "evaluate": {"kind": "non_empty"}}\n' + line + "\n"},
    )
    (error,) = build_fail(root)
    assert (error["code"], error["file"], error["line"]) == ("evaluator-plan-schema", "evals/cases.jsonl", 2)
    assert line[error["col"] - 1 :].startswith('"rush"')


def test_plans_the_schema_can_accept_build(bench):
    src = EVAL % (
        plan("find_order", '{ orderId: "A1" }'),
        plan("find_order", '{ orderId: "B2", rush: false }'),
        plan("find_order", "{}"),
        plan("find", '{ edition: 3 }'),
    )
    cases, _ = build_ok(bench_with(bench, src))
    assert [c["id"] for c in cases] == ["e.ok", "e.key", "e.type", "e.book"]
