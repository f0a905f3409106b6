"""SPEC §3.6 / seed "CSV cases" and "JSONL cases": sibling data files."""

from __future__ import annotations

import pytest

from tests.compile.helpers import build_fail, build_ok, case, expect_error

CONTAINS = '{ kind: "contains" }'


def csv_bench(bench, csv: str | bytes, evaluate: str = CONTAINS, extra: str = ""):
    return bench(
        {
            "evals/qa.ts": f'export default {{ id: "qa", evaluate: {evaluate}, cases: "./qa.csv"{extra} }}\n',
            "evals/qa.csv": csv,
        }
    )


def csv_case(id, prompt, evaluate, line, description=None):
    return case(
        id,
        "qa",
        f"qa — {id}",
        prompt,
        evaluate,
        description=description,
        source={"module": "evals/qa.ts", "file": "evals/qa.csv", "line": line},
    )


# ---------------------------------------------------------------- CSV


def test_csv_rows_become_cases_with_row_expected(bench):
    root = csv_bench(
        bench, "id,prompt,expected,description\nqa.1,What is 2+2?,4,Arithmetic\nqa.2,Capital of France?,Paris,\n"
    )
    assert build_ok(root)[0] == [
        csv_case("qa.1", "What is 2+2?", {"kind": "contains", "expected": "4"}, 2, description="Arithmetic"),
        csv_case("qa.2", "Capital of France?", {"kind": "contains", "expected": "Paris"}, 3),
    ]


def test_csv_exact_evaluator(bench):
    root = csv_bench(bench, "id,prompt,expected\nqa.1,Say yes,Yes\n", evaluate='{ kind: "exact" }')
    assert build_ok(root)[0] == [csv_case("qa.1", "Say yes", {"kind": "exact", "expected": "Yes"}, 2)]


def test_csv_non_empty_evaluator_needs_no_expected(bench):
    root = csv_bench(bench, "id,prompt\nqa.1,Say anything\n", evaluate='{ kind: "non_empty" }')
    assert build_ok(root)[0] == [csv_case("qa.1", "Say anything", {"kind": "non_empty"}, 2)]


def test_csv_cells_are_strings_never_type_inferred(bench):
    root = csv_bench(bench, "id,prompt,expected\n007,1e3,007\n1.50,true,0.10\n")
    cases, _ = build_ok(root)
    assert [(c["id"], c["prompt"], c["evaluate"]["expected"]) for c in cases] == [
        ("007", "1e3", "007"),
        ("1.50", "true", "0.10"),
    ]


def test_csv_rfc4180_bom_crlf_quoted_newlines_and_commas(bench):
    data = '\ufeffid,prompt,expected\r\nqa.1,"Line one\r\nline two, with comma",ok\r\nqa.2,"She said ""hi""",hi\r\n'
    root = csv_bench(bench, data.encode("utf-8"))
    assert build_ok(root)[0] == [
        csv_case("qa.1", "Line one\r\nline two, with comma", {"kind": "contains", "expected": "ok"}, 2),
        csv_case("qa.2", 'She said "hi"', {"kind": "contains", "expected": "hi"}, 4),
    ]


def test_csv_eval_level_fields_are_inherited(bench):
    root = csv_bench(
        bench,
        "id,prompt\nqa.1,Q\n",
        evaluate='{ kind: "non_empty" }',
        extra=', title: "Quiz", description: "D", systemPrompt: "S"',
    )
    assert build_ok(root)[0] == [
        case(
            "qa.1",
            "qa",
            "Quiz — qa.1",
            "Q",
            {"kind": "non_empty"},
            description="D",
            systemPrompt="S",
            source={"module": "evals/qa.ts", "file": "evals/qa.csv", "line": 2},
        )
    ]


def test_csv_path_is_relative_to_the_eval_module(bench):
    root = bench(
        {
            "evals/quiz/qa.ts": 'export default { id: "qa", evaluate: { kind: "non_empty" }, cases: "../data/qa.csv" }\n',
            "evals/data/qa.csv": "id,prompt\nqa.1,Q\n",
            "benchmark.config.ts": 'export default { protocolVersion: 1, evals: ["evals/quiz/qa.ts"] }\n',
        }
    )
    cases, manifest = build_ok(root)
    assert cases[0]["source"] == {"module": "evals/quiz/qa.ts", "file": "evals/data/qa.csv", "line": 2}
    assert "evals/data/qa.csv" in manifest["inputs"]


@pytest.mark.parametrize(
    "header, message",
    [
        pytest.param("id,prompt,tools", "'tools'", id="unknown-column"),
        pytest.param("id,prompt,prompt", "twice", id="duplicate-column"),
        pytest.param("id,expected", "'prompt'", id="missing-prompt-column"),
        pytest.param("prompt,expected", "'id'", id="missing-id-column"),
    ],
)
def test_csv_header_rules(bench, header, message):
    root = csv_bench(bench, f"{header}\na,b,c\n")
    expect_error(root, "csv-column", "evals/qa.csv", message=message, line=1)


def test_csv_header_is_required(bench):
    root = csv_bench(bench, "")
    expect_error(root, "csv-header", "evals/qa.csv")


def test_csv_with_header_but_no_rows(bench):
    root = csv_bench(bench, "id,prompt,expected\n")
    expect_error(root, "cases-empty", "evals/qa.csv")


@pytest.mark.parametrize(
    "row, code",
    [
        pytest.param(",Prompt,x", "case-id", id="empty-id"),
        pytest.param("qa.2,,x", "case-prompt", id="empty-prompt"),
        pytest.param("QA.2,Prompt,x", "case-id", id="invalid-id"),
    ],
)
def test_csv_id_and_prompt_non_empty_on_every_row(bench, row, code):
    root = csv_bench(bench, f"id,prompt,expected\nqa.1,Fine,x\n{row}\n")
    expect_error(root, code, "evals/qa.csv", line=3)


@pytest.mark.parametrize("row", ["qa.2,Too,many,fields", "qa.2,Few"])
def test_csv_row_with_wrong_field_count_names_its_line(bench, row):
    root = csv_bench(bench, f'id,prompt,expected\nqa.1,"multi\nline",x\n{row}\n')
    expect_error(root, "csv-row", "evals/qa.csv", line=4)


def test_csv_not_utf8(bench):
    root = csv_bench(bench, "id,prompt,expected\nqa.1,caf\xe9,x\n".encode("latin-1"))
    expect_error(root, "csv-encoding", "evals/qa.csv", line=2)


@pytest.mark.parametrize("kind", ["exact", "contains"])
def test_csv_exact_and_contains_need_expected_on_every_row(bench, kind):
    root = csv_bench(bench, "id,prompt,expected\nqa.1,A,x\nqa.2,B,\n", evaluate=f'{{ kind: "{kind}" }}')
    expect_error(root, "csv-expected", "evals/qa.csv", line=3)


def test_csv_contains_without_expected_column(bench):
    root = csv_bench(bench, "id,prompt\nqa.1,A\n")
    expect_error(root, "csv-expected", "evals/qa.csv", line=2)


def test_csv_expected_on_the_eval_level_spec_is_an_error(bench):
    root = csv_bench(bench, "id,prompt,expected\nqa.1,A,x\n", evaluate='{ kind: "contains", expected: "x" }')
    expect_error(root, "csv-evaluator-expected", "evals/qa.ts")


@pytest.mark.parametrize(
    "evaluate",
    [
        '{ kind: "gsm8k" }',
        '{ kind: "answer_bank", answers: ["a"] }',
    ],
)
def test_csv_evaluator_kind_must_be_non_empty_exact_or_contains(bench, evaluate):
    root = csv_bench(bench, "id,prompt,expected\nqa.1,A,1\n", evaluate=evaluate)
    expect_error(root, "csv-evaluator", "evals/qa.ts")


def test_csv_evaluator_with_a_misspelt_kind_is_one_error(bench):
    root = csv_bench(bench, "id,prompt,expected\nqa.1,A,1\n", evaluate='{ kind: "contain" }')
    errors = build_fail(root)
    assert [d["code"] for d in errors] == ["evaluator-kind"], errors
    assert errors[0]["hint"].startswith("did you mean 'contains'? kinds: ")


def test_csv_custom_function_is_an_error(bench):
    root = csv_bench(bench, "id,prompt,expected\nqa.1,A,x\n", evaluate="({ output }) => true")
    expect_error(root, "csv-evaluator", "evals/qa.ts")


def test_csv_without_eval_level_evaluator_is_an_error(bench):
    root = bench(
        {"evals/qa.ts": 'export default { id: "qa", cases: "./qa.csv" }\n', "evals/qa.csv": "id,prompt\nqa.1,A\n"}
    )
    expect_error(root, "csv-evaluator", "evals/qa.ts")


# ---------------------------------------------------------------- data-file paths


@pytest.mark.parametrize(
    "path, code",
    [
        pytest.param("./missing.csv", "data-file-missing", id="missing"),
        pytest.param("./qa.txt", "data-file-type", id="not-csv-or-jsonl"),
        pytest.param("../../outside.jsonl", "data-file-path", id="leaves-root"),
        pytest.param("/abs/qa.csv", "data-file-path", id="absolute"),
    ],
)
def test_data_file_path_rules(bench, path, code):
    root = bench(
        {
            "evals/qa.ts": f'export default {{ id: "qa", evaluate: {{ kind: "non_empty" }}, cases: "{path}" }}\n',
            "evals/qa.txt": "id,prompt\nqa.1,A\n",
        }
    )
    expect_error(root, code, "evals/qa.ts")


def test_data_file_must_be_inside_the_benchmark_root_even_inside_the_repo(tmp_path):
    from tests.conftest import write_tree

    repo = write_tree(
        tmp_path / "repo",
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "shared/qa.jsonl": '{"id": "a", "prompt": "p"}\n',
            "bench/evals/qa.ts": 'export default { id: "qa", evaluate: { kind: "non_empty" }, cases: "../../shared/qa.jsonl" }\n',
        },
    )
    expect_error(repo / "bench", "data-file-path", "evals/qa.ts")


# ---------------------------------------------------------------- JSONL


def jsonl_bench(bench, data: str | bytes, evaluate: str = '{ kind: "non_empty" }', extra: str = ""):
    return bench(
        {
            "evals/qa.ts": f'export default {{ id: "qa", evaluate: {evaluate}, cases: "./qa.jsonl"{extra} }}\n',
            "evals/qa.jsonl": data,
        }
    )


def jsonl_src(line):
    return {"module": "evals/qa.ts", "file": "evals/qa.jsonl", "line": line}


def test_jsonl_lines_are_complete_cases_with_every_field(bench):
    data = (
        '{"id": "qa.1", "prompt": "One"}\n'
        '\n'
        '{"id": "qa.2", "prompt": "Two", "description": "D", "systemPrompt": "S", "tools": [], '
        '"data": {"k": [1, "x"]}, "evaluate": {"kind": "gsm8k", "expected": 41}}\n'
        '   \n'
    )
    root = jsonl_bench(bench, data, extra=', title: "Quiz", systemPrompt: "Eval S"')
    assert build_ok(root)[0] == [
        case("qa.1", "qa", "Quiz — qa.1", "One", {"kind": "non_empty"}, systemPrompt="Eval S", source=jsonl_src(1)),
        case(
            "qa.2",
            "qa",
            "Quiz — qa.2",
            "Two",
            {"kind": "gsm8k", "expected": "41"},
            description="D",
            systemPrompt="S",
            data={"k": [1, "x"]},
            source=jsonl_src(3),
        ),
    ]


def test_jsonl_crlf_lines(bench):
    root = jsonl_bench(bench, '{"id": "a", "prompt": "A"}\r\n{"id": "b", "prompt": "B"}\r\n')
    assert [(c["id"], c["source"]["line"]) for c in build_ok(root)[0]] == [("a", 1), ("b", 2)]


def test_jsonl_invalid_json_names_line_and_column(bench):
    bad = '{"id": "b", "prompt": }'
    root = jsonl_bench(bench, '{"id": "a", "prompt": "A"}\n' + bad + "\n")
    diag = expect_error(root, "jsonl-syntax", "evals/qa.jsonl", line=2)
    assert diag["col"] == bad.index("}") + 1  # the character where a value was expected


def test_jsonl_line_must_be_a_case_object(bench):
    root = jsonl_bench(bench, '["a", "A"]\n')
    expect_error(root, "case-type", "evals/qa.jsonl", line=1)


def test_jsonl_case_rules_apply_per_line(bench):
    root = jsonl_bench(bench, '{"id": "a", "prompt": "A"}\n{"id": "b", "prompt": "B", "expected": "x"}\n')
    expect_error(root, "case-unknown-key", "evals/qa.jsonl", line=2)


@pytest.mark.parametrize("data", ["", "\n\n  \n"])
def test_jsonl_must_contain_at_least_one_case(bench, data):
    root = jsonl_bench(bench, data)
    expect_error(root, "cases-empty", "evals/qa.jsonl")


def test_jsonl_case_evaluator_kinds_may_differ(bench):
    data = (
        '{"id": "a", "prompt": "A", "evaluate": {"kind": "exact", "expected": "x"}}\n'
        '{"id": "b", "prompt": "B", "evaluate": {"kind": "answer_bank", "answers": ["y"]}}\n'
    )
    root = bench({"evals/qa.ts": 'export default { id: "qa", cases: "./qa.jsonl" }\n', "evals/qa.jsonl": data})
    cases, manifest = build_ok(root)
    assert [c["evaluate"] for c in cases] == [
        {"kind": "exact", "expected": "x"},
        {"kind": "answer_bank", "answers": ["y"]},
    ]
    assert manifest["evals"][0]["evaluatorKinds"] == ["answer_bank", "exact"]


def test_data_file_symlink_resolving_outside_the_root_is_rejected(bench, tmp_path):
    import os

    (tmp_path / "outside.jsonl").write_text('{"id": "a", "prompt": "p"}\n')
    root = jsonl_bench(bench, '{"id": "placeholder", "prompt": "p"}\n')
    (root / "evals/qa.jsonl").unlink()
    os.symlink(tmp_path / "outside.jsonl", root / "evals/qa.jsonl")
    expect_error(root, "data-file-path", "evals/qa.ts", message="symlink")


def test_csv_empty_description_is_absent_so_the_eval_description_is_inherited(bench):
    root = csv_bench(
        bench,
        "id,prompt,description\nqa.1,P,\nqa.2,Q,Own\n",
        evaluate='{ kind: "non_empty" }',
        extra=', description: "Eval D"',
    )
    assert [c["description"] for c in build_ok(root)[0]] == ["Eval D", "Own"]


@pytest.mark.parametrize("data, expected", [('"text"', "text"), ("0", 0), ("[1, 2]", [1, 2]), ("false", False)])
def test_case_data_may_be_any_json_value(bench, data, expected):
    root = jsonl_bench(bench, f'{{"id": "a", "prompt": "p", "data": {data}}}\n')
    assert build_ok(root)[0][0]["data"] == expected
