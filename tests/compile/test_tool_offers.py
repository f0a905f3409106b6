"""A case's or eval's `tools` entry `{ tool, as }` offers a release tool to the model under another
name (docs/authoring.md): compiled as written (a plain name when both are the same), unique per
case by the offered name, and every field checked."""

from __future__ import annotations

from tests.compile.helpers import build_fail, build_ok, tool_module, with_deps


def bench_with(bench, eval_src: str):
    return bench(with_deps({"tools/t.ts": tool_module("lookup_a", "lookup_b"), "evals/e.ts": eval_src}))


def test_two_cases_offer_two_tools_under_one_name(bench):
    src = """export default {
  id: "e",
  tools: [{ tool: "lookup_a", as: "lookup" }],
  evaluate: { kind: "non_empty" },
  cases: [
    { id: "e.a", prompt: "a" },
    { id: "e.b", prompt: "b", tools: [{ tool: "lookup_b", as: "lookup" }, "lookup_a"] },
    { id: "e.same", prompt: "c", tools: [{ tool: "lookup_b", as: "lookup_b" }] },
  ],
}
"""
    cases, manifest = build_ok(bench_with(bench, src))
    assert [c["tools"] for c in cases] == [
        [{"tool": "lookup_a", "as": "lookup"}],
        [{"tool": "lookup_b", "as": "lookup"}, "lookup_a"],
        ["lookup_b"],
    ]
    assert sorted(t["name"] for t in manifest["tools"]) == ["lookup_a", "lookup_b"]


def test_entries_are_checked(bench):
    src = """export default {
  id: "e",
  evaluate: { kind: "non_empty" },
  cases: [
    { id: "e.dup", prompt: "a", tools: ["lookup_a", { tool: "lookup_b", as: "lookup_a" }] },
    { id: "e.keys", prompt: "b", tools: [{ tool: "lookup_a", name: "x" }] },
    { id: "e.bad", prompt: "c", tools: [{ tool: "lookup_a", as: "not valid" }] },
    { id: "e.unknown", prompt: "d", tools: [{ tool: "lookup_c", as: "lookup" }] },
  ],
}
"""
    errors: dict[tuple, str] = {}
    for d in build_fail(bench_with(bench, src)):
        errors[d["code"], d["line"]] = errors.get((d["code"], d["line"]), "") + d["message"] + "\n"
    assert "tool 'lookup_a' is listed twice" in errors[("tools-duplicate", 5)]
    assert "unknown key 'name' in a tools entry" in errors[("tools-entry", 6)]
    assert "a tools entry object needs 'as'" in errors[("tools-entry", 6)]
    assert "'not valid' is not a valid tool name" in errors[("tool-name", 7)]
    assert "requests tool 'lookup_c', which no tool module defines" in errors[("unknown-tool", 8)]
