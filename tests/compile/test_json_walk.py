"""SPEC §3.3 / seed "Eval modules": the inspected value must be plain
JSON-compatible data; each rejected value is named by its path."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_ok, case, expect_error

PRELUDE = "class Point { constructor() { this.x = 1 } }\n"


def eval_with_data(expr: str, prelude: str = "") -> dict:
    return {
        "evals/e.ts": f"{PRELUDE}{prelude}export default {{ id: \"e\", evaluate: {{ kind: \"non_empty\" }},\n"
        f"  cases: [{{ id: \"ok\", prompt: \"p\" }}, {{ id: \"c\", prompt: \"p\", data: {{ when: {expr} }} }}] }}\n"
    }


@pytest.mark.parametrize(
    "expr, what",
    [
        pytest.param("undefined", "undefined", id="undefined"),
        pytest.param("NaN", "NaN", id="NaN"),
        pytest.param("Infinity", "Infinity", id="Infinity"),
        pytest.param("-Infinity", "-Infinity", id="-Infinity"),
        pytest.param("10n", "BigInt", id="BigInt"),
        pytest.param('Symbol("s")', "Symbol", id="Symbol"),
        pytest.param("new Date(0)", "Date", id="Date"),
        pytest.param("new Map()", "Map", id="Map"),
        pytest.param("new Set([1])", "Set", id="Set"),
        pytest.param("/re/", "RegExp", id="RegExp"),
        pytest.param("new Point()", "class Point", id="class-instance"),
        pytest.param("{ get now() { return 1 } }", "accessor", id="accessor"),
        pytest.param("[1, , 3]", "sparse", id="sparse-array"),
        pytest.param("new Uint8Array(2)", "typed array", id="typed-array"),
        pytest.param("Promise.resolve(1)", "Promise", id="promise"),
        pytest.param("{ [Symbol('k')]: 1 }", "Symbol keys", id="symbol-key"),
    ],
)
def test_non_json_values_are_rejected_with_their_path(bench, expr, what):
    root = bench(eval_with_data(expr))
    diag = expect_error(root, "json-incompatible", "evals/e.ts")
    path = "cases[1].data.when[1]" if what == "sparse" else "cases[1].data.when"
    if what == "accessor":
        path = "cases[1].data.when.now"
    assert diag["message"].startswith(f"{path}:"), diag
    assert what in diag["message"], diag


def test_cycle_is_rejected(bench):
    root = bench(eval_with_data("loop", prelude="const loop: any = { a: 1 }\nloop.self = loop\n"))
    diag = expect_error(root, "json-incompatible", "evals/e.ts")
    assert diag["message"].startswith("cases[1].data.when.self:") and "cycle" in diag["message"]


def test_nesting_deeper_than_64_is_rejected(bench):
    root = bench(eval_with_data("deep", prelude="let deep: any = 0\nfor (let i = 0; i < 70; i++) deep = [deep]\n"))
    diag = expect_error(root, "json-incompatible", "evals/e.ts")
    assert "deeper than 64" in diag["message"]


def test_shared_non_cyclic_references_and_null_prototype_objects_are_fine(bench):
    prelude = 'const shared = { k: "v" }\nconst bare = Object.assign(Object.create(null), { z: 1 })\n'
    root = bench(
        {
            "evals/e.ts": f"{prelude}export default {{ id: \"e\", evaluate: {{ kind: \"non_empty\" }},\n"
            "  cases: [{ id: \"c\", prompt: \"p\", data: { a: shared, b: shared, bare, neg: -0, "
            "n: 1.5e3, s: \"\\u00e9\", nil: null, arr: [true, false] } }] }\n"
        }
    )
    [compiled] = build_ok(root)[0]
    assert compiled == case(
        "c",
        "e",
        "e — c",
        "p",
        {"kind": "non_empty"},
        source={"module": "evals/e.ts"},
        data={
            "a": {"k": "v"},
            "b": {"k": "v"},
            "bare": {"z": 1},
            "neg": 0,
            "n": 1500,
            "s": "é",
            "nil": None,
            "arr": [True, False],
        },
    )


def test_every_problem_is_reported_in_one_run(bench):
    root = bench(
        {
            "evals/e.ts": 'export default { id: "e", evaluate: { kind: "non_empty" },\n'
            '  cases: [{ id: "c", prompt: "p", data: { a: NaN, b: undefined, c: new Map() } }] }\n'
        }
    )
    from tests.compile.helpers import build_fail

    errors = build_fail(root)
    paths = sorted(d["message"].split(":")[0] for d in errors if d["code"] == "json-incompatible")
    assert paths == ["cases[0].data.a", "cases[0].data.b", "cases[0].data.c"]


def test_top_level_eval_fields_are_walked_too(bench):
    root = bench(
        {"evals/e.ts": 'export default { id: "e", prompt: "p", evaluate: { kind: "exact", expected: new Date(0) } }\n'}
    )
    diag = expect_error(root, "json-incompatible", "evals/e.ts")
    assert diag["message"].startswith("evaluate.expected:")
