"""The model-graded kinds at build time: their specs are checked (with a
diagnostic naming file, line and rule), usable inline, in JSONL and from a
transformer but not in CSV evals, and the exact judge prompt each case is
graded with is frozen into the release: a default template as a hashed file
of the release that the compiled spec names, a benchmark's own template in
the spec with its `{instructions}` filled in."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from tests.compile.helpers import build_fail, build_ok
from tests.conftest import run_cli
from trunchbull.evaluators.judge_templates import default_instructions

RUBRIC = "The reply is polite."


def bench(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "bench"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_default_template_is_a_file_of_the_release_named_by_its_hash(tmp_path):
    root = bench(
        tmp_path,
        {
            "evals/polite.ts": 'export default { id: "polite", evaluate: { kind: "rubric", rubric: "%s" }, cases: ['
            '{ id: "polite.a", prompt: "Hi" }, { id: "polite.b", prompt: "Yo", evaluate: { kind: "rubric", '
            'rubric: "Short.", partialCredit: true } }, { id: "polite.c", prompt: "Q?", evaluate: '
            '{ kind: "factuality", expected: "42" } }] }\n' % RUBRIC
        },
    )
    cases, manifest = build_ok(root, tmp_path / "release")
    out = tmp_path / "release"
    names = {c["id"]: c["evaluate"]["templateFile"] for c in cases}
    assert len(set(names.values())) == 3  # qa, qa with partial credit, fact
    for case in cases:
        name = case["evaluate"]["templateFile"]
        data = (out / name).read_bytes()
        assert name == f"templates/{hashlib.sha256(data).hexdigest()}.txt"
        assert manifest["files"][name] == hashlib.sha256(data).hexdigest()  # hashed into the digest
        text = data.decode()
        assert "{instructions}" not in text and all(p in text for p in ("{question}", "{answer}", "{criterion}"))
    qa = (out / names["polite.a"]).read_text()
    assert qa.startswith("\nYou are assessing a submitted answer on a given task based on a criterion.")
    assert default_instructions(False) in qa and "one of CI." in qa
    assert "one of CPI." in (out / names["polite.b"]).read_text()
    assert "[Expert]: {criterion}" in (out / names["polite.c"]).read_text()
    assert cases[0]["evaluate"] == {"kind": "rubric", "rubric": RUBRIC, "templateFile": names["polite.a"]}
    assert sorted(manifest["evals"][0]["evaluatorKinds"]) == ["factuality", "rubric"]
    assert run_cli("verify", out).code == 0
    again = tmp_path / "again"
    build_ok(root, again)
    assert orjson.loads((again / "release.json").read_bytes())["digest"] == manifest["digest"]


def test_a_benchmarks_own_template_is_frozen_with_its_instructions(tmp_path):
    template = "Task: {question}\\nReply: {answer}\\nRubric: {criterion}\\nBraces {{ok}}\\n{instructions}"
    root = bench(
        tmp_path,
        {
            "evals/own.ts": 'export default { id: "own", prompt: "Hi", evaluate: { kind: "rubric", rubric: "x", '
            f'judge: "openai:gpt-4o-mini", template: "{template}" }} }}\n'
        },
    )
    (case,), manifest = build_ok(root, tmp_path / "release")
    spec = case["evaluate"]
    assert "templateFile" not in spec and not any(name.startswith("templates/") for name in manifest["files"])
    assert spec["judge"] == "openai:gpt-4o-mini"
    assert spec["template"] == (
        "Task: {question}\nReply: {answer}\nRubric: {criterion}\nBraces {{ok}}\n" + default_instructions(False)
    )


def test_jsonl_cases_and_transformers_may_use_them(tmp_path):
    line = {"id": "j.one", "prompt": "Hi", "evaluate": {"kind": "factuality", "expected": "Hello"}}
    root = bench(
        tmp_path,
        {
            "evals/j.ts": 'export default { id: "j", cases: "./j.jsonl" }\n',
            "evals/j.jsonl": orjson.dumps(line).decode() + "\n",
            "evals/t.ts": 'export default { id: "t", cases: { transformer: "./t/make.ts", sources: '
            '{ s: "./t/s.txt" } } }\n',
            "evals/t/s.txt": "one\n",
            "evals/t/make.ts": 'export default { name: "make", transform({ s }: any) { return [{ id: "t.one", '
            'prompt: s.content, evaluate: { kind: "rubric", rubric: "Echoes the text." } }] } }\n',
        },
    )
    cases, manifest = build_ok(root, tmp_path / "release")
    kinds = {c["id"]: c["evaluate"]["kind"] for c in cases}
    assert kinds == {"j.one": "factuality", "t.one": "rubric"}
    assert all((tmp_path / "release" / c["evaluate"]["templateFile"]).is_file() for c in cases)


def test_bad_specs_are_diagnosed_and_nothing_is_written(tmp_path):
    root = bench(
        tmp_path,
        {
            "evals/bad.ts": "export default { id: \"bad\", cases: [\n"
            '  { id: "bad.a", prompt: "x", evaluate: { kind: "rubric" } },\n'
            '  { id: "bad.b", prompt: "x", evaluate: { kind: "rubric", rubric: " ", judge: "Open AI" } },\n'
            '  { id: "bad.c", prompt: "x", evaluate: { kind: "factuality", expected: "y", template: "{question}" } },\n'
            '  { id: "bad.d", prompt: "x", evaluate: { kind: "rubric", rubric: "y", template: "{answer} {score}" } },\n'
            '  { id: "bad.e", prompt: "x", evaluate: { kind: "rubric", rubric: "y", template: "{answer!r} }" } },\n'
            '  { id: "bad.f", prompt: "x", evaluate: { kind: "rubric", rubric: "y", partialCredit: "yes" } },\n'
            "] }\n",
        },
    )
    errors = build_fail(root)
    found = {(d["line"], d["code"]) for d in errors}
    assert found == {
        (2, "evaluator-missing-rubric"),
        (3, "evaluator-rubric"),
        (3, "evaluator-judge"),
        (4, "evaluator-template"),
        (5, "evaluator-template"),
        (6, "evaluator-template"),
        (7, "evaluator-partial-credit"),
    }, errors
    by_line = {d["line"]: d["message"] for d in errors if d["code"] == "evaluator-template"}
    assert "no {answer}" in by_line[4]
    assert "unknown placeholder {score}" in by_line[5]
    assert all(d["file"] == "evals/bad.ts" for d in errors)


def test_csv_evals_cannot_use_them(tmp_path):
    root = bench(
        tmp_path,
        {
            "evals/c.ts": 'export default { id: "c", cases: "./c.csv", evaluate: { kind: "rubric" } }\n',
            "evals/c.csv": "id,prompt,expected\nc.one,Hi,Hello\n",
        },
    )
    errors = build_fail(root)
    assert errors and all(d["file"].startswith("evals/c.") for d in errors)
    assert any("rubric" in d["message"] or "rubric" in (d.get("hint") or "") for d in errors), errors
