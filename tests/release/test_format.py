"""SPEC §5-6: the release directory, release.json, read-only files, verify,
inspect, diff and init."""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile

import orjson

from tests.compile.helpers import build_ok, one_case, tool_module, with_deps
from tests.conftest import run_cli

EVAL = (
    'export default { id: "refunds", title: "Refund policy", description: "D", tools: ["lookup"],\n'
    '  evaluate: { kind: "contains", expected: "30 days" },\n'
    '  cases: [{ id: "refunds.a", prompt: "A" }, { id: "refunds.b", prompt: "B", evaluate: { kind: "exact", expected: "x" } }] }\n'
)
CUSTOM = 'export default { id: "custom", prompt: "p", evaluate: ({ output }) => output === "ok" }\n'


def full_bench(bench, name="bench"):
    return bench(
        with_deps(
            {
                "benchmark.config.ts": 'export default { protocolVersion: 1, title: "Support", version: "1.0.0" }\n',
                "evals/refunds.ts": EVAL,
                "evals/custom.ts": CUSTOM,
                "tools/t.ts": tool_module("lookup"),
            }
        ),
        name=name,
    )


def test_release_layout_and_manifest(bench, tmp_path):
    root = full_bench(bench)
    out = tmp_path / "out"
    cases, manifest = build_ok(root, out)
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    bundles = sorted(n for n in names if n.startswith("modules/"))
    assert names == sorted(["release.json", "cases.jsonl", "package.json", "package-lock.json", *bundles])
    assert len(bundles) == 2 and all(n.endswith(".mjs") for n in bundles)
    for name in bundles:  # content-addressed
        assert name == f"modules/{hashlib.sha256((out / name).read_bytes()).hexdigest()}.mjs"
    assert manifest["format"] == "trunchbull.release" and manifest["protocolVersion"] == 1
    assert (manifest["title"], manifest["version"]) == ("Support", "1.0.0")
    assert manifest["counts"] == {"evals": 2, "cases": 3, "tools": 1, "modules": 2}
    assert manifest["compiler"]["name"] == "trunchbull" and manifest["compiler"]["version"]
    assert manifest["files"] == {
        n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in names if n != "release.json"
    }
    assert manifest["digest"].startswith("sha256:")
    assert set(manifest["inputs"]) == {
        "benchmark.config.ts",
        "evals/custom.ts",
        "evals/refunds.ts",
        "tools/t.ts",
        "package.json",
        "package-lock.json",
    }
    assert manifest["inputs"]["evals/refunds.ts"] == hashlib.sha256(EVAL.encode()).hexdigest()
    custom_entry, refunds_entry = manifest["evals"]  # discovery order: custom.ts < refunds.ts
    assert refunds_entry["id"] == "refunds" and refunds_entry["title"] == "Refund policy"
    assert refunds_entry["description"] == "D" and refunds_entry["module"] == "evals/refunds.ts"
    assert refunds_entry["caseCount"] == 2 and refunds_entry["evaluatorKinds"] == ["contains", "exact"]
    assert custom_entry["evaluatorKinds"] == ["custom"] and custom_entry["bundle"] in bundles
    assert [c["id"] for c in cases] == ["custom", "refunds.a", "refunds.b"]


def test_release_bytes_are_canonical_and_free_of_paths(bench, tmp_path):
    root = full_bench(bench)
    out = tmp_path / "out"
    build_ok(root, out)
    manifest_bytes = (out / "release.json").read_bytes()
    assert manifest_bytes == orjson.dumps(orjson.loads(manifest_bytes), option=orjson.OPT_SORT_KEYS) + b"\n"
    for line in (out / "cases.jsonl").read_bytes().splitlines():
        assert line == orjson.dumps(orjson.loads(line), option=orjson.OPT_SORT_KEYS)
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert str(tmp_path).encode() not in data, path
            assert b"\r\n" not in data or path.suffix == ".mjs"
            if os.environ.get("USER"):
                assert f"/{os.environ['USER']}/".encode() not in data


def test_release_files_are_read_only(bench, tmp_path):
    root = full_bench(bench)
    out = tmp_path / "out"
    build_ok(root, out)
    for path in [out, *out.rglob("*")]:
        assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path


def test_rebuild_replaces_the_read_only_release(bench, tmp_path):
    root = bench({"evals/a.ts": one_case("a")})
    out = tmp_path / "out"
    build_ok(root, out)
    (root / "evals/b.ts").write_text(one_case("b"))
    cases, _ = build_ok(root, out)
    assert [c["id"] for c in cases] == ["a", "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench", "out"]


def test_verify_accepts_an_intact_release_and_its_tar(bench, tmp_path):
    root = full_bench(bench)
    out = tmp_path / "out"
    build_ok(root, out, "--tar")
    assert run_cli("verify", out).code == 0
    assert run_cli("verify", tmp_path / "out.tar").code == 0
    with tarfile.open(tmp_path / "out.tar") as tar:
        members = tar.getmembers()
        assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 and m.uname == "" for m in members)
        files = {m.name: tar.extractfile(m).read() for m in members if m.isfile()}
    assert files == {f"release/{p.relative_to(out).as_posix()}": p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_verify_detects_tampering(bench, tmp_path):
    root = bench({"evals/a.ts": one_case("a")})
    out = tmp_path / "out"
    build_ok(root, out)
    cases = out / "cases.jsonl"
    os.chmod(out, 0o755)
    os.chmod(cases, 0o644)
    cases.write_bytes(cases.read_bytes().replace(b"Say hi", b"Say ho"))
    result = run_cli("verify", out)
    assert result.code == 1 and "cases.jsonl" in result.stderr
    (out / "extra.txt").write_text("x")
    assert "extra.txt: not listed" in run_cli("verify", out).stderr


def test_inspect_summarizes_evals_cases_tools_kinds(bench, tmp_path):
    root = full_bench(bench)
    out = tmp_path / "out"
    build_ok(root, out)
    result = run_cli("inspect", out, "--json")
    assert result.code == 0
    summary = orjson.loads(result.stdout)
    assert summary["title"] == "Support" and summary["counts"]["cases"] == 3
    assert summary["tools"] == ["lookup"]
    assert [(e["id"], e["caseCount"], e["evaluatorKinds"]) for e in summary["evals"]] == [
        ("custom", 1, ["custom"]),
        ("refunds", 2, ["contains", "exact"]),
    ]
    text = run_cli("inspect", out)
    assert text.code == 0 and "Support 1.0.0" in text.stdout and "lookup" in text.stdout


def test_diff_reports_added_removed_changed_cases_and_tools(bench, tmp_path):
    root = bench(
        with_deps(
            {
                "evals/e.ts": 'export default { id: "e", evaluate: { kind: "non_empty" },\n'
                '  cases: [{ id: "keep", prompt: "p" }, { id: "gone", prompt: "p" }, { id: "edit", prompt: "old" }] }\n',
                "tools/t.ts": tool_module("old_tool"),
            }
        )
    )
    build_ok(root, tmp_path / "a")
    (root / "evals/e.ts").write_text(
        'export default { id: "e", evaluate: { kind: "non_empty" },\n'
        '  cases: [{ id: "keep", prompt: "p" }, { id: "edit", prompt: "new" }, { id: "new", prompt: "p" }] }\n'
    )
    (root / "tools/t.ts").write_text(tool_module("new_tool"))
    build_ok(root, tmp_path / "b")
    result = run_cli("diff", tmp_path / "a", tmp_path / "b", "--json")
    assert result.code == 0
    diff = orjson.loads(result.stdout)
    assert diff["cases"] == {
        "added": ["new"],
        "removed": ["gone"],
        "changed": [{"id": "edit", "fields": ["prompt"], "values": {"prompt": {"a": "old", "b": "new"}}}],
    }
    assert diff["tools"] == {"added": ["new_tool"], "removed": ["old_tool"], "changed": []}
    text = run_cli("diff", tmp_path / "a", tmp_path / "b").stdout
    assert text.splitlines() == [
        "+ case new",
        "- case gone",
        "~ case edit: prompt",
        '    prompt  - "old"',
        '            + "new"',
        "+ tool new_tool",
        "- tool old_tool",
    ]


def test_diff_shows_long_values_around_their_first_difference(bench, tmp_path):
    """A changed value longer than a line is cut to a window that starts a
    little before the first difference (the same window for old and new)."""
    long_prompt = "Context: " + "lorem ipsum " * 40 + "Question: what is six times seven?"
    root = bench({"evals/e.ts": one_case("e").replace('"Say hi"', orjson.dumps(long_prompt).decode())})
    build_ok(root, tmp_path / "a")
    source = (root / "evals/e.ts").read_text()
    source = source.replace("six times seven", "six times eight")
    (root / "evals/e.ts").write_text(source.replace('kind: "non_empty"', 'kind: "exact", expected: "48"'))
    build_ok(root, tmp_path / "b")
    lines = run_cli("diff", tmp_path / "a", tmp_path / "b").stdout.splitlines()
    quoted = orjson.dumps(long_prompt).decode()
    first = quoted.index("seven")
    assert lines == [
        "~ case e: evaluate, prompt",
        '    evaluate  - {"kind": "non_empty"}',
        '              + {"expected": "48", "kind": "exact"}',
        "    prompt    - …" + quoted[first - 32 :],
        "              + …" + quoted[first - 32 :].replace("seven", "eight"),
    ]
    changed = orjson.loads(run_cli("diff", tmp_path / "a", tmp_path / "b", "--json").stdout)["cases"]["changed"]
    assert changed[0]["values"]["prompt"] == {"a": long_prompt, "b": long_prompt.replace("seven", "eight")}


def test_init_scaffolds_a_benchmark_that_builds(tmp_path):
    target = tmp_path / "fresh"
    result = run_cli("init", target)
    assert result.code == 0, result.stderr
    cases, manifest = build_ok(target, tmp_path / "out")
    assert cases and manifest["counts"]["cases"] == len(cases)
    assert run_cli("verify", tmp_path / "out").code == 0
