"""Models (SPEC §8.1): the built-in echo and replay models through the same
pipeline as every provider, the hosted providers' own protocols against the
local server, model SPEC and credential errors, and run TARGETs."""

from __future__ import annotations

import shutil
import subprocess
import sys

import orjson
import pytest

from tests.run.conftest import REPO, read_jsonl
from tests.support.chat_server import Reply


def test_echo_model(built, cli, tmp_path):
    release = built("agent")
    run = cli("run", release, "--model", "echo", "-o", tmp_path / "run", "--eval", "plain", "--json")
    assert run.code == 0, run.stderr
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    three = records["plain.three"]
    assert three["output"] == "[plain-three] please echo three"  # the case prompt
    assert three["finishReason"] == "stop" and three["steps"] == 1 and three["toolCalls"] == []
    # characters / 4, rounded up: system "Be terse." (9) + prompt (31) in, the prompt out
    assert three["usage"] == {"inputTokens": 10, "outputTokens": 8, "totalTokens": 18}
    assert run.json["evals"]["plain"]["passed"] == 3 and run.json["evals"]["plain"]["failed"] == 1


def test_replay_model_replays_outputs_and_tool_calls(built, cli, tmp_path):
    release = built("agent")
    responses = tmp_path / "recorded.jsonl"
    responses.write_bytes(
        b"".join(
            orjson.dumps(row) + b"\n"
            for row in [
                {
                    "caseId": "plain.one",
                    "output": "echo from the recording",
                    "usage": {"inputTokens": 3, "outputTokens": 4},
                },
                {
                    "caseId": "orders.calls",
                    "output": "looked it up",
                    "toolCalls": [{"toolCallId": "c1", "toolName": "lookup_order", "input": {"orderId": "C3"}}],
                },
            ]
        )
    )
    run = cli(
        "run",
        release,
        "--model",
        f"replay:{responses}",
        "-o",
        tmp_path / "run",
        "--case",
        "plain.one",
        "--case",
        "orders.calls",
        "--case",
        "plain.two",
    )
    assert run.code == 1  # plain.two is not in the recording
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    assert records["plain.one"]["output"] == "echo from the recording"
    assert records["plain.one"]["usage"] == {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}
    calls = records["orders.calls"]
    assert calls["steps"] == 2 and calls["output"] == "looked it up"
    assert calls["toolResults"] == [
        {
            "toolCallId": "c1",
            "toolName": "lookup_order",
            "output": {"orderId": "C3", "status": "shipped", "carrier": "DHL"},
        }
    ]  # really ran
    assert records["plain.two"]["error"]["kind"] == "replay-missing"
    results = {r["caseId"]: r["outcome"] for r in read_jsonl(tmp_path / "run" / "results.jsonl")}
    assert results == {"orders.calls": "pass", "plain.one": "pass", "plain.two": "error"}


@pytest.mark.parametrize(
    "provider,env,path,auth",
    [
        ("openai", "OPENAI_API_KEY", "/v1/chat/completions", ("authorization", "Bearer {key}")),
        ("anthropic", "ANTHROPIC_API_KEY", "/v1/messages", ("x-api-key", "{key}")),
        (
            "google",
            "GOOGLE_GENERATIVE_AI_API_KEY",
            "/v1/models/test-model:generateContent",
            ("x-goog-api-key", "{key}"),
        ),
    ],
)
def test_hosted_providers_speak_their_own_protocol(built, server, cli, tmp_path, provider, env, path, auth):
    release = built("agent")
    server.script(
        "[order-a1]", [Reply(tool_calls=[("lookup_order", {"orderId": "A1"})]), Reply(content="It has shipped.")]
    )
    run = cli(
        "run",
        release,
        "--model",
        f"{provider}:test-model",
        "--base-url",
        server.url,
        "-o",
        tmp_path / "run",
        "--case",
        "orders.a1",
        env={env: f"sk-{provider}-test"},
    )
    assert run.code == 0, run.stderr
    requests = server.received("[order-a1]")
    assert [r.path for r in requests] == [path, path]
    assert [r.headers.get(auth[0]) for r in requests] == [auth[1].format(key=f"sk-{provider}-test")] * 2
    assert not any(name.startswith("x-trunchbull") for r in requests for name in r.headers)  # ours, taken off
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["output"] == "It has shipped." and record["toolResults"][0]["output"]["status"] == "shipped"
    assert record["usage"]["totalTokens"] > 0


@pytest.mark.parametrize(
    "args,env,message",
    [
        (["--model", "gpt4"], {}, "unknown provider 'gpt4'"),
        (["--model", "opnai:gpt-4o"], {}, "did you mean 'openai'"),
        (["--model", "openai:"], {}, "name the model after the colon"),
        (["--model", "echo:x"], {}, "echo takes no model name"),
        (["--model", "openai:gpt-4o"], {"OPENAI_API_KEY": ""}, "the environment variable OPENAI_API_KEY is not set"),
        (["--model", "openai-compatible:m"], {}, "needs --base-url"),
        (["--model", "openai-compatible:m", "--base-url", "localhost:8080"], {}, "is not an http(s) URL"),
        (
            [
                "--model",
                "openai-compatible:m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--api-key-env",
                "NOT_SET_ANYWHERE",
            ],
            {},
            "NOT_SET_ANYWHERE is not set",
        ),
        (["--model", "replay:/no/such/file.jsonl"], {}, "is not a file"),
        (["--model", "llamacpp:"], {}, "name the GGUF model file"),
        (["--model", "llamacpp:/no/such/model.gguf"], {}, "is not a file (the GGUF model file"),
        (["--model", f"llamacpp:{REPO / 'README.md'}"], {}, "is not a GGUF model file (it does not start with 'GGUF')"),
        (["--model", f"llamacpp:{REPO / 'README.md'}", "--base-url", "http://127.0.0.1:9/v1"], {}, "does not apply"),
        (["--model", "echo", "--eval", "nope"], {}, "--eval 'nope': the release has no such eval"),
        (["--model", "echo", "--case", "zzz*"], {}, "no case of the release matches"),
        (["--model", "echo", "--temperature", "-1"], {}, "--temperature takes a number ≥ 0"),
        (["--model", "echo", "--repeat", "0"], {}, "--repeat takes an integer ≥ 1"),
        (["--model", "echo", "--fail-under", "2"], {}, "--fail-under takes a pass rate between 0 and 1"),
        (["--model", "echo", "--rerun-errors"], {}, "add --resume"),
        (["--model", "echo", "--resume"], {}, "holds no run to resume"),
        ([], {}, "--model SPEC is required"),
    ],
)
def test_usage_errors_exit_2_before_anything_is_written(built, cli, tmp_path, args, env, message):
    release = built("agent")
    out = tmp_path / "run"
    run = cli("run", release, "-o", out, *args, env={"OPENAI_API_KEY": "", **env})
    assert run.code == 2, run.stderr
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert not out.exists()


def test_a_non_empty_run_directory_is_never_overwritten(built, cli, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    run = cli("run", built("agent"), "--model", "echo", "-o", out)
    assert run.code == 2 and "not empty" in run.stderr
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_run_a_benchmark_root_builds_it_first(cli, tmp_path):
    root = shutil.copytree(REPO / "examples" / "support", tmp_path / "support")
    # (the example's judged eval needs a judge: tests/run/test_run_judges.py runs it)
    run = cli("run", root, "--model", "echo", "--eval", "refunds", "-o", tmp_path / "run", "--json")
    assert run.code == 0, run.stderr
    built_release = root / "dist" / "release"
    manifest = orjson.loads((built_release / "release.json").read_bytes())
    assert run.json["release"]["digest"] == manifest["digest"]
    meta = orjson.loads((tmp_path / "run" / "run.json").read_bytes())
    assert meta["release"]["digest"] == manifest["digest"]
    (refunds,) = [ev for ev in manifest["evals"] if ev["id"] == "refunds"]
    assert len(read_jsonl(tmp_path / "run" / "responses.jsonl")) == refunds["caseCount"]


def test_run_a_release_tar(cli, tmp_path):
    root = shutil.copytree(REPO / "examples" / "support", tmp_path / "support")
    build = subprocess.run(
        [sys.executable, "-m", "trunchbull", "build", root, "-o", tmp_path / "rel", "--tar"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert build.returncode == 0, build.stderr
    run = cli("run", tmp_path / "rel.tar", "--model", "echo", "--eval", "refunds", "-o", tmp_path / "run", "--json")
    assert run.code == 0, run.stderr
    assert run.json["overall"]["samples"] == 3


def test_a_broken_benchmark_root_exits_1_with_its_diagnostics(cli, tmp_path):
    root = tmp_path / "broken"
    (root / "evals").mkdir(parents=True)
    (root / "evals" / "bad.ts").write_text(
        'export default { id: "Bad ID", prompt: "x", evaluate: { kind: "non_empty" } }\n'
    )
    run = cli("run", root, "--model", "echo", "-o", tmp_path / "run")
    assert run.code == 1
    assert "error[" in run.stderr and "bad.ts" in run.stderr
    assert not (tmp_path / "run").exists()
