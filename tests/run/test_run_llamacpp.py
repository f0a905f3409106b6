"""The local GGUF provider (`--model llamacpp:PATH.gguf`) end to end on a real
small model: SmolLM2-135M-Instruct from a PyPI wheel (tests/support/smollm2.py;
no model hub), run by node-llama-cpp in the run's workers, installed on first
use from its own lockfile into the cache directory (shared with later runs).
Token counts are kept small: a local model is CPU-heavy."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson
import pytest
from trunchbull.common.diagnostics import UsageError
from trunchbull.run.local_runtime import check_platform

from tests.run.conftest import read_jsonl
from tests.support.smollm2 import GGUF_SHA256, smollm2_gguf, with_chat_template

TOOLS_TEMPLATE = Path(__file__).resolve().parents[1] / "support" / "chatml_tools.jinja"

SETTINGS = ["--temperature", "0", "--seed", "1", "--max-tokens", "24"]
NO_TOOLS = "the model cannot call tools"


@pytest.fixture(scope="module")
def gguf():
    return smollm2_gguf()


def _records(run_dir) -> dict:
    return {r["caseId"]: r for r in read_jsonl(run_dir / "responses.jsonl")}


def _run_json(run_dir) -> dict:
    return orjson.loads((run_dir / "run.json").read_bytes())


@pytest.mark.slow
def test_a_real_local_model_end_to_end(built, cli, tmp_path, gguf):
    releases = {"minimal": built("minimal"), "local": built("local")}
    model = f"llamacpp:{gguf}"
    first, second = {}, {}
    for name, release in releases.items():
        # uncached, writing the cache; -j 4 on 2 cores loads a model in no more than one worker per core
        run = cli(
            "run", release, "--model", model, *SETTINGS, "-j", "4", "-o", tmp_path / "a" / name, "--json", timeout=600
        )
        assert run.code == 0, run.stderr
        assert run.json["overall"]["samples"] == run.json["overall"]["passed"] + run.json["overall"]["failed"]
        records = first[name] = _records(tmp_path / "a" / name)
        for record in records.values():
            assert record["error"] is None and record["cached"] is False
            assert isinstance(record["output"], str) and record["output"].strip(), record
            usage = record["usage"]
            assert usage["inputTokens"] > 0 and 0 < usage["outputTokens"] <= 24
            assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
            assert record["finishReason"] in ("stop", "length")
        results = read_jsonl(tmp_path / "a" / name / "results.jsonl")
        assert sorted(r["caseId"] for r in results) == sorted(records)
        assert {r["outcome"] for r in results} <= {"pass", "fail"}
        meta = _run_json(tmp_path / "a" / name)
        info = meta["modelInfo"]
        assert info["model"] == f"sha256:{GGUF_SHA256}" and info["file"] == gguf.name
        assert info["workers"] == min(len(os.sched_getaffinity(0)), 4, len(records), 8)
        assert info["contextSize"] > 0 and info["threads"] >= 1 and info["toolCalls"] is False
        assert info["rssBytesPerWorker"] > 0 and info["sizeBytes"] > 50_000_000
        assert "loaded in" in run.stderr

    # the fixture's tool case: said once, on stderr and in run.json, and run without the tool
    meta = _run_json(tmp_path / "a" / "local")
    assert [w for w in meta["warnings"] if NO_TOOLS in w] == [meta["warnings"][0]]
    orders = first["local"]["orders.a1"]
    assert orders["toolCalls"] == [] and orders["steps"] == 1
    assert len(first["local"]) == 4 and len(first["minimal"]) == 1

    # a second uncached run gives the same outputs (and the same token counts)
    for name, release in releases.items():
        run = cli("run", release, "--model", model, *SETTINGS, "--no-cache", "-o", tmp_path / "b" / name, timeout=600)
        assert run.code == 0, run.stderr
        assert run.stderr.count(NO_TOOLS) == (1 if name == "local" else 0)
        second[name] = _records(tmp_path / "b" / name)
        assert {k: (r["output"], r["usage"]) for k, r in second[name].items()} == {
            k: (r["output"], r["usage"]) for k, r in first[name].items()
        }

    # the cache key holds the GGUF's SHA-256, not its path: the same file under another name is a hit, and a
    # cached run starts no worker, so the model is never loaded
    elsewhere = tmp_path / "models" / "renamed.gguf"
    elsewhere.parent.mkdir()
    os.symlink(gguf, elsewhere)
    for name, release in releases.items():
        run = cli("run", release, "--model", f"llamacpp:{elsewhere}", *SETTINGS, "-o", tmp_path / "c" / name)
        assert run.code == 0, run.stderr
        assert "loaded in" not in run.stderr and NO_TOOLS not in run.stderr
        assert _run_json(tmp_path / "c" / name)["modelInfo"] is None
        cached = _records(tmp_path / "c" / name)
        assert all(r["cached"] for r in cached.values())
        assert {k: r["output"] for k, r in cached.items()} == {k: r["output"] for k, r in first[name].items()}


@pytest.mark.slow
def test_a_chat_template_with_tools_gets_the_tools(built, cli, tmp_path, gguf):
    """The same model with a ChatML template that handles tools (Qwen 2.5's
    format): the tools are offered through node-llama-cpp's function calling,
    in the prompt the template renders, and nothing is said about tools."""
    model = with_chat_template(gguf, TOOLS_TEMPLATE.read_text(), "SmolLM2-135M-Instruct.Q4_1.tools.gguf")
    out = tmp_path / "run"
    run = cli(
        "run",
        built("local"),
        "--model",
        f"llamacpp:{model}",
        "--temperature",
        "0",
        "--seed",
        "1",
        "--max-tokens",
        "8",
        "--eval",
        "orders",
        "--eval",
        "capitals",
        "-o",
        out,
        "--no-cache",
        timeout=600,
    )
    assert run.code == 0, run.stderr
    assert NO_TOOLS not in run.stderr
    meta = _run_json(out)
    assert meta["modelInfo"]["toolCalls"] is True and meta["warnings"] == []
    records = _records(out)
    assert all(r["error"] is None and r["output"].strip() for r in records.values())
    # the offered tool's name, description and schema are in the prompt: ~170 more tokens than a prompt without
    assert records["orders.a1"]["usage"]["inputTokens"] > records["capitals.france"]["usage"]["inputTokens"] + 100


def test_unsupported_platforms_are_a_usage_error(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(UsageError, match="run on Linux on x86-64 with glibc only"):
        check_platform()


@pytest.mark.slow
def test_a_real_local_model_judges_the_support_examples_rubric_eval(cli, tmp_path, gguf):
    """SmolLM2 as the judge of examples/support's model-graded eval, through
    the same trusted model caller as any judge: structure, not quality."""
    release = tmp_path / "release"
    assert cli("build", Path(__file__).resolve().parents[2] / "examples" / "support", "-o", release).code == 0
    judge = f"llamacpp:{gguf}"
    args = ["--model", "echo", "--eval", "replies", "--judge", judge, "--judge-max-tokens", "48", "-j", "2"]
    run = cli("run", release, *args, "-o", tmp_path / "run", "--json", timeout=600)
    assert run.code in (0, 1), run.stderr  # 1: a reply without a grade is an error sample
    results = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "results.jsonl")}
    judgments = {j["caseId"]: j for j in read_jsonl(tmp_path / "run" / "judgments.jsonl")}
    assert sorted(results) == sorted(judgments) == ["replies.damaged", "replies.refund", "replies.window"]
    for case, row in results.items():
        line = judgments[case]
        assert line["judge"] == judge
        assert line["error"] is None or line["error"]["kind"] == "judge-unparsable"  # never judge-failed
        assert line["reply"].strip() and line["attempts"] == 1 and line["cached"] is False
        assert 0 < line["usage"]["outputTokens"] <= 48 and line["usage"]["inputTokens"] > 200
        assert line["cost"] == 0.0  # a local model costs nothing
        assert row["outcome"] == line["outcome"] and row["score"] == line["score"]
        if row["outcome"] != "error":
            assert row["details"]["grade"] == line["grade"] in ("C", "I")
    assert _run_json(tmp_path / "run")["judge"]["settings"][judge] == {
        "temperature": 0,
        "seed": 0,
        "maxOutputTokens": 48,
    }
    judged = run.json["evals"]["replies"]["judge"]
    assert judged["requests"] == 3 and judged["cost"] == 0.0
    # the same run again: the verdicts that parsed from the response cache, the others asked again
    # (a reply without a grade is not cached), with the same replies (temperature 0, seed 0)
    again = cli("run", release, *args, "-o", tmp_path / "again", "--json", timeout=600)
    parsed = sum(1 for line in judgments.values() if line["outcome"] != "error")
    assert again.json["evals"]["replies"]["judge"]["cached"] == parsed
    assert {c: (line["reply"], line["outcome"]) for c, line in judgments.items()} == {
        line["caseId"]: (line["reply"], line["outcome"]) for line in read_jsonl(tmp_path / "again" / "judgments.jsonl")
    }
