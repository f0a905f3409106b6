"""Retries, backoff and deadlines (SPEC §8.2) over real HTTP: 429 with
retry-after honored, 5xx and dropped connections retried, other 4xx not
retried, and the per-sample timeout."""

from __future__ import annotations

import threading

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply

MODEL = "openai-compatible:test-model"


def run_one(cli, server, release, out, case: str, *extra):
    return cli("run", release, "--model", MODEL, "--base-url", server.url, "-o", out, "--case", case, *extra)


def test_429_waits_as_long_as_retry_after_says(built, server, cli, tmp_path):
    release = built("agent")
    server.script(
        "[plain-one]", [[Reply(status=429, headers={"retry-after": "1"}), Reply(content="echo after waiting")]]
    )
    run = run_one(cli, server, release, tmp_path / "run", "plain.one")
    assert run.code == 0, run.stderr
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["output"] == "echo after waiting" and record["attempts"] == 2
    assert record["latencyMs"] >= 1000  # retry-after: 1 second, honored (not the shorter first backoff step)
    assert len(server.received("[plain-one]")) == 2


def test_retry_after_ms_and_5xx_are_retried(built, server, cli, tmp_path):
    release = built("agent")
    # the first wait asked for is longer than any first backoff step (0.5-1 s): only the header gives it
    waits = [2.5, 0.05, 0.05]
    server.script(
        "[plain-one]",
        [
            [
                Reply(status=500, headers={"retry-after-ms": "2500"}),
                Reply(status=503, headers={"retry-after-ms": "50"}),
                Reply(status=429, headers={"retry-after-ms": "50"}),
                Reply(content="echo at last"),
            ]
        ],
    )
    run = run_one(cli, server, release, tmp_path / "run", "plain.one")
    assert run.code == 0, run.stderr
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["attempts"] == 4 and record["output"] == "echo at last"
    requests = server.received("[plain-one]")
    assert len(requests) == 4
    # each retry came at least as long after the reply before it as that reply asked
    assert all(b.started - a.ended >= wait for a, b, wait in zip(requests, requests[1:], waits))


def test_backoff_without_retry_after_and_a_dropped_connection(built, server, cli, tmp_path):
    release = built("agent")
    server.script("[plain-one]", [[Reply(drop=True), Reply(content="echo after a drop")]])
    run = run_one(cli, server, release, tmp_path / "run", "plain.one")
    assert run.code == 0, run.stderr
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["attempts"] == 2 and record["error"] is None
    assert record["latencyMs"] >= 500  # the first backoff step: 1 s with equal jitter, so 0.5-1 s


def test_retries_run_out(built, server, cli, tmp_path):
    release = built("agent")
    server.script("[plain-one]", [[Reply(status=429, headers={"retry-after-ms": "10"})]])
    run = run_one(cli, server, release, tmp_path / "run", "plain.one", "--retries", "2")
    assert run.code == 1
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["error"]["kind"] == "rate-limit" and record["attempts"] == 3
    assert len(server.received("[plain-one]")) == 3
    (graded,) = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert graded["outcome"] == "error" and graded["score"] is None


def test_400_is_not_retried(built, server, cli, tmp_path):
    release = built("agent")
    server.script("[plain-one]", [Reply(status=400, error_body={"error": {"message": "bad request: unknown field"}})])
    run = run_one(cli, server, release, tmp_path / "run", "plain.one")
    assert run.code == 1
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["error"]["kind"] == "provider" and "HTTP 400" in record["error"]["message"]
    assert record["attempts"] == 1 and len(server.received("[plain-one]")) == 1


def test_per_sample_timeout_covers_the_whole_sample(built, server, cli, tmp_path):
    release = built("agent")
    # a tool step (fast), then a model reply that comes too late
    never = threading.Event()  # the model's reply is held until the run is over
    server.script(
        "[order-b2]", [Reply(tool_calls=[("lookup_order", {"orderId": "B2"})]), Reply(content="too late", hold=never)]
    )
    try:
        run = run_one(cli, server, release, tmp_path / "run", "orders.b2", "--timeout", "1")
        requests = server.received("[order-b2]")
        assert len(requests) == 2 and requests[1].ended is None  # the run ended with the model still answering
    finally:
        never.set()
    assert run.code == 1
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["error"]["kind"] == "timeout" and "1 s timeout" in record["error"]["message"]
    assert record["latencyMs"] >= 1000
    assert record["steps"] == 1 and record["toolCalls"][0]["toolName"] == "lookup_order"  # the step that finished
