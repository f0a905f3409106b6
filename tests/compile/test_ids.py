"""SPEC §3.2 / seed "Config": authoring IDs (eval and case IDs) and tool names."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_ok, case, expect_error, one_case, tool_module, with_deps

VALID_IDS = ["a", "0", "refunds.standard", "a_b-c.9", "x" * 120]
INVALID_IDS = ["Refunds", "-lead", ".lead", "_lead", "has space", "é", "a/b", "x" * 121, ""]


@pytest.mark.parametrize("eval_id", VALID_IDS)
def test_valid_eval_ids(bench, eval_id):
    root = bench({"evals/e.ts": one_case(eval_id)})
    [compiled] = build_ok(root)[0]
    assert compiled == case(eval_id, eval_id, eval_id, "Say hi", {"kind": "non_empty"}, source={"module": "evals/e.ts"})


@pytest.mark.parametrize("eval_id", INVALID_IDS)
def test_invalid_eval_ids(bench, eval_id):
    root = bench({"evals/e.ts": one_case(eval_id)})
    expect_error(root, "eval-id", "evals/e.ts", line=1)


def test_eval_id_must_be_a_string(bench):
    root = bench({"evals/e.ts": 'export default { id: 7, prompt: "p", evaluate: { kind: "non_empty" } }\n'})
    expect_error(root, "eval-id", "evals/e.ts", message="string")


@pytest.mark.parametrize("case_id", VALID_IDS)
def test_valid_case_ids(bench, case_id):
    root = bench(
        {
            "evals/e.ts": f'export default {{ id: "e", evaluate: {{ kind: "non_empty" }}, '
            f'cases: [{{ id: "{case_id}", prompt: "p" }}] }}\n'
        }
    )
    [compiled] = build_ok(root)[0]
    assert compiled["id"] == case_id


@pytest.mark.parametrize("case_id", INVALID_IDS)
def test_invalid_case_ids(bench, case_id):
    root = bench(
        {
            "evals/e.ts": f'export default {{ id: "e", evaluate: {{ kind: "non_empty" }},\n'
            f'  cases: [{{ id: "ok", prompt: "p" }}, {{ id: "{case_id}", prompt: "p" }}] }}\n'
        }
    )
    diag = expect_error(root, "case-id", "evals/e.ts")
    assert diag["message"].startswith("cases[1].id:")


@pytest.mark.parametrize("name", ["getWeather", "lookup_policy", "A-1", "x" * 64])
def test_valid_tool_names(bench, name):
    root = bench(with_deps({"evals/e.ts": one_case("e", tools=f'["{name}"]'), "tools/t.ts": tool_module(name)}))
    cases, manifest = build_ok(root)
    assert [t["name"] for t in manifest["tools"]] == [name]
    assert cases[0]["tools"] == [name]


@pytest.mark.parametrize("name", ["get.weather", "has space", "x" * 65])
def test_invalid_tool_name_in_tool_module(bench, name):
    root = bench(with_deps({"evals/e.ts": one_case("e"), "tools/t.ts": tool_module(name)}))
    expect_error(root, "tool-name", "tools/t.ts")


@pytest.mark.parametrize("name", ["get.weather", ""])
def test_invalid_tool_name_requested_by_an_eval(bench, name):
    root = bench({"evals/e.ts": one_case("e", tools=f'["{name}"]')})
    expect_error(root, "tool-name", "evals/e.ts")
