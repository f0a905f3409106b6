"""SPEC §3.5 release-wide rules and §3.9 diagnostics: unique case and eval
IDs (naming both places), the 25,000-case limit, all errors in one run,
sorted output, exit codes."""

from __future__ import annotations

import orjson

from tests.compile.helpers import build_fail, build_ok, expect_error, one_case
from tests.conftest import run_cli


def inline(eval_id: str, *case_ids: str) -> str:
    cases = ", ".join(f'{{ id: "{c}", prompt: "p" }}' for c in case_ids)
    return f'export default {{ id: "{eval_id}", evaluate: {{ kind: "non_empty" }},\n  cases: [{cases}] }}\n'


def test_duplicate_case_id_across_eval_modules_names_both_places(bench):
    root = bench({"evals/a.ts": inline("a", "valid", "a.other"), "evals/b.ts": inline("b", "valid")})
    diag = expect_error(root, "duplicate-case-id", "evals/b.ts", message="'valid'", line=2)
    assert "evals/a.ts:2" in diag["message"]


def test_duplicate_case_id_within_one_eval(bench):
    root = bench({"evals/a.ts": inline("a", "same", "same")})
    diag = expect_error(root, "duplicate-case-id", "evals/a.ts", message="'same'")
    assert "cases[1]" in diag["message"] and "cases[0]" in diag["message"]


def test_duplicate_case_id_between_inline_and_jsonl_names_file_and_line(bench):
    root = bench(
        {
            "evals/a.ts": inline("a", "shared"),
            "evals/b.ts": 'export default { id: "b", evaluate: { kind: "non_empty" }, cases: "./b.jsonl" }\n',
            "evals/b.jsonl": '{"id": "b.1", "prompt": "p"}\n{"id": "shared", "prompt": "p"}\n',
        }
    )
    diag = expect_error(root, "duplicate-case-id", "evals/b.jsonl", message="'shared'", line=2)
    assert "evals/a.ts:2" in diag["message"]


def test_case_id_equal_to_a_one_case_eval_id_is_a_duplicate(bench):
    root = bench({"evals/a.ts": one_case("answer"), "evals/b.ts": inline("b", "answer")})
    diag = expect_error(root, "duplicate-case-id", "evals/b.ts", message="'answer'")
    assert "evals/a.ts" in diag["message"]


def test_duplicate_eval_ids_name_both_modules(bench):
    root = bench({"evals/a.ts": inline("same", "a.1"), "evals/b.ts": inline("same", "b.1")})
    diag = expect_error(root, "duplicate-eval-id", "evals/b.ts", message="'same'", line=1)
    assert "evals/a.ts" in diag["message"]


def jsonl_lines(count: int) -> str:
    return "".join(f'{{"id":"c{i}","prompt":"p"}}\n' for i in range(count))


def test_25000_cases_are_allowed(bench):
    root = bench(
        {
            "evals/big.ts": 'export default { id: "big", evaluate: { kind: "non_empty" }, cases: "./big.jsonl" }\n',
            "evals/big.jsonl": jsonl_lines(25_000),
        }
    )
    cases, manifest = build_ok(root)
    assert len(cases) == 25_000 and manifest["counts"]["cases"] == 25_000
    assert cases[-1]["id"] == "c24999" and cases[-1]["source"]["line"] == 25_000


def test_more_than_25000_cases_is_an_error(bench):
    root = bench(
        {
            "evals/big.ts": 'export default { id: "big", evaluate: { kind: "non_empty" }, cases: "./big.jsonl" }\n',
            "evals/one.ts": one_case("one"),
            "evals/big.jsonl": jsonl_lines(25_000),
            "benchmark.config.ts": "export default { protocolVersion: 1 }\n",
        }
    )
    diag = expect_error(root, "too-many-cases", "benchmark.config.ts")
    assert "25001" in diag["message"].replace(",", "")


def test_more_than_25000_cases_without_config(bench):
    root = bench(
        {
            "evals/big.ts": 'export default { id: "big", evaluate: { kind: "non_empty" }, cases: "./big.jsonl" }\n',
            "evals/big.jsonl": jsonl_lines(25_001),
        }
    )
    expect_error(root, "too-many-cases", None)


def test_all_problems_are_reported_in_one_run_sorted_by_path(bench):
    root = bench(
        {
            "evals/z.ts": 'export default { id: "Z", prompt: "p", evaluate: { kind: "non_empty" } }\n',
            "evals/a.ts": 'export default { id: "a", prompt: "", evaluate: { kind: "exact" } }\n',
            "evals/m.ts": 'export default { id: "m", evaluate: { kind: "contains" }, cases: "./m.csv" }\n',
            "evals/m.csv": "id,prompt,expected\nm.1,p,\n",
        }
    )
    errors = build_fail(root)
    assert [(d["file"], d["code"]) for d in errors] == [
        ("evals/a.ts", "case-prompt"),
        ("evals/a.ts", "evaluator-missing-expected"),
        ("evals/m.csv", "csv-expected"),
        ("evals/z.ts", "eval-id"),
    ]


def test_text_diagnostics_format_and_summary(bench, tmp_path):
    root = bench({"evals/a.ts": 'export default {\n  id: "a",\n  prompt: "p",\n  evaluate: { kind: "exct" },\n}\n'})
    result = run_cli("build", root, "-o", tmp_path / "out")
    assert result.code == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{root.as_posix()}/evals/a.ts:") and ": error[evaluator-kind]: " in first
    assert "hint: did you mean 'exact'?" in result.stderr
    assert "nothing was written" in result.stderr
    assert not (tmp_path / "out").exists()


def test_json_diagnostics_fields(bench, tmp_path):
    root = bench({"evals/a.ts": 'export default { id: "a", prompt: "p", evaluate: { kind: "exct" } }\n'})
    result = run_cli("build", root, "-o", tmp_path / "out", "--json")
    assert result.code == 1
    [diag] = orjson.loads(result.stdout)
    assert set(diag) == {"severity", "code", "file", "line", "col", "message", "hint"}
    assert (diag["severity"], diag["code"], diag["file"], diag["line"]) == ("error", "evaluator-kind", "evals/a.ts", 1)


def test_failed_build_leaves_a_previous_release_untouched(bench, tmp_path):
    root = bench({"evals/a.ts": one_case("a")})
    out = tmp_path / "out"
    assert run_cli("build", root, "-o", out).code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (root / "evals/a.ts").write_text(one_case("A"))
    assert run_cli("build", root, "-o", out).code == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench", "out"]


def test_check_validates_and_writes_nothing(bench):
    root = bench({"evals/a.ts": one_case("a")})
    result = run_cli("check", root)
    assert result.code == 0 and "1 eval, 1 case" in result.stdout
    assert not (root / "dist").exists()
    (root / "evals/a.ts").write_text(one_case("A"))
    result = run_cli("check", root, "--json")
    assert result.code == 1 and [d["code"] for d in orjson.loads(result.stdout)] == ["eval-id"]


def test_default_output_is_root_dist_release(bench):
    root = bench({"evals/a.ts": one_case("a")})
    assert run_cli("build", root).code == 0
    assert (root / "dist/release/release.json").is_file()


def test_usage_errors_exit_2(tmp_path):
    assert run_cli("build", tmp_path / "missing").code == 2
    (tmp_path / "file.txt").write_text("x")
    assert run_cli("build", tmp_path / "file.txt").code == 2
    assert run_cli("verify", tmp_path).code == 2
