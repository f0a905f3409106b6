"""The `first_step_tools` kind of the tests (tests/evaluators/kinds/), added
as docs/architecture.md says a kind is added, sees the real tool calls of a
real run: a release built with it, run with `--model replay:FILE` (whose
tool calls the release's real tools execute), graded by `run`, and the
run's records graded again by `grade --run-dir`, with the same results."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import REPO, CliResult
from tests.run.conftest import cli_env, read_jsonl

AGENT = REPO / "tests" / "run" / "fixtures" / "agent"
CONFIG = """export default {
  protocolVersion: 1,
  title: "First-step tools",
  version: "1.0.0",
  evals: ["evals/steps.ts"],
  tools: ["tools/desk.ts"],
}
"""
EVAL = """export default {
  id: "steps",
  tools: ["lookup_order"],
  evaluate: { kind: "first_step_tools", tools: ["lookup_order"] },
  cases: [
    { id: "steps.lookup", prompt: "Where is order A1?" },
    { id: "steps.silent", prompt: "Say hello." },
    { id: "steps.twice", prompt: "Where are orders A1 and B2?" },
    {
      id: "steps.offered",
      prompt: "Try the broken tool.",
      tools: ["lookup_order", "explode"],
      evaluate: { kind: "first_step_tools", tools: ["explode"] },
    },
  ],
}
"""
LOOKUP_A1 = {"toolName": "lookup_order", "input": {"orderId": "A1"}}
REPLAY = [
    {"caseId": "steps.lookup", "output": "Order A1 has shipped.", "toolCalls": [LOOKUP_A1]},
    {"caseId": "steps.silent", "output": "Hello."},
    {
        "caseId": "steps.twice",
        "output": "Both have shipped.",
        "toolCalls": [LOOKUP_A1, {"toolName": "lookup_order", "input": {"orderId": "B2"}}],
    },
    {"caseId": "steps.offered", "output": "The system is down.", "toolCalls": [{"toolName": "explode", "input": {}}]},
]


def with_test_kinds(*args, cache: Path) -> CliResult:
    """The CLI with the kinds of tests/evaluators/kinds/ registered."""
    env = cli_env(cache, {"PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}"})
    proc = subprocess.run(
        [sys.executable, "-m", "tests.evaluators.kinds", *map(str, args)], capture_output=True, text=True, env=env
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def benchmark(root: Path, eval_source: str = EVAL) -> Path:
    root.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(AGENT / name, root / name)
    shutil.copytree(AGENT / "tools", root / "tools")
    (root / "benchmark.config.ts").write_text(CONFIG)
    (root / "evals").mkdir()
    (root / "evals" / "steps.ts").write_text(eval_source)
    return root


@pytest.fixture
def release(tmp_path) -> Path:
    built = with_test_kinds("build", benchmark(tmp_path / "bench"), "-o", tmp_path / "release", cache=tmp_path)
    assert built.code == 0, built.stdout + built.stderr
    return tmp_path / "release"


def test_the_kind_grades_the_tool_calls_of_a_run_and_of_grade(release, tmp_path):
    replay = tmp_path / "replay.jsonl"
    replay.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in REPLAY))
    run = with_test_kinds("run", release, "--model", f"replay:{replay}", "-o", tmp_path / "run", cache=tmp_path)
    assert run.code == 0, run.stderr
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    # the calls were made by the run: each has the ID the model gave it and its step; the tools ran
    assert [c["toolName"] for c in records["steps.twice"]["toolCalls"]] == ["lookup_order", "lookup_order"]
    assert all(c["step"] == 0 and c["toolCallId"] for c in records["steps.twice"]["toolCalls"])
    assert records["steps.lookup"]["toolResults"][0]["output"]["status"] == "shipped"
    assert "down" in records["steps.offered"]["toolResults"][0]["error"]

    results = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "results.jsonl")}
    assert {k: r["outcome"] for k, r in results.items()} == {
        "steps.lookup": "pass",
        "steps.silent": "fail",
        "steps.twice": "fail",
        "steps.offered": "pass",
    }
    assert {k: r["details"] for k, r in results.items()} == {
        "steps.lookup": {"firstStep": ["lookup_order"], "steps": [0], "offered": ["lookup_order"]},
        "steps.silent": {"firstStep": [], "steps": [], "offered": ["lookup_order"]},
        "steps.twice": {"firstStep": ["lookup_order"] * 2, "steps": [0, 0], "offered": ["lookup_order"]},
        # prepared for this case's own tools
        "steps.offered": {"firstStep": ["explode"], "steps": [0], "offered": ["lookup_order", "explode"]},
    }
    assert all(r["evaluator"] == "first_step_tools" for r in results.values())

    # the run's records, graded again as recorded responses: the same results
    graded = with_test_kinds(
        "grade", release, tmp_path / "run" / "responses.jsonl", "--run-dir", tmp_path / "graded", cache=tmp_path
    )
    assert graded.code == 0, graded.stderr
    regraded = {r["caseId"]: r for r in read_jsonl(tmp_path / "graded" / "results.jsonl")}
    same = ("outcome", "score", "message", "details")
    assert {k: [r[f] for f in same] for k, r in regraded.items()} == {
        k: [r[f] for f in same] for k, r in results.items()
    }


def test_the_kind_is_known_only_where_it_is_registered(release, tmp_path):
    replay = tmp_path / "replay.jsonl"
    replay.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in REPLAY))
    plain = subprocess.run(
        [sys.executable, "-m", "trunchbull", "grade", release, replay, "-o", tmp_path / "results.jsonl"],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path),
    )
    assert plain.returncode == 0 and "4 case(s) ended in error" in plain.stderr, plain.stderr
    messages = {r["message"] for r in read_jsonl(tmp_path / "results.jsonl")}
    assert messages == {"the release's evaluator spec cannot be graded: unknown evaluator kind 'first_step_tools'"}


def test_its_compile_time_check_sees_the_cases_tools(tmp_path):
    wrong = EVAL.replace('tools: ["explode"] }', 'tools: ["spin"] }')
    checked = with_test_kinds("check", benchmark(tmp_path / "bench", wrong), "--json", cache=tmp_path)
    assert checked.code == 1, checked.stdout + checked.stderr
    (problem,) = [d for d in orjson.loads(checked.stdout) if d["code"] == "evaluator-unknown-tool"]
    assert "'spin' is not among the case's tools" in problem["message"]
