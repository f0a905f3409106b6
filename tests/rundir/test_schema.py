"""The record schema is defined once (rundir/schema.py); the Node run worker
writes the same shape. Records of every kind the worker and the Python side
make (a plain answer, a tool loop, a tool that throws, a provider error, a
worker stopped by the tool timeout, a cached replay) all have exactly the
schema's fields, with the schema's types."""

from __future__ import annotations

import orjson

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply
from trunchbull.rundir.schema import FIELDS, error_record, record_problem, recorded_response


def check(records: list[dict]) -> None:
    for record in records:
        assert tuple(record) == FIELDS, record
        assert record_problem(record) is None, (record_problem(record), record)


def test_worker_records_match_the_schema(built, server, cli, tmp_path):
    release = built("agent")
    server.script(
        "[order-a1]",
        [
            Reply(tool_calls=[("lookup_order", {"orderId": "A1"})], usage=(11, 5)),
            Reply(content="shipped", usage=(2, 1)),
        ],
    )
    server.script("[fault-explode]", [Reply(tool_calls=[("explode", {})]), Reply(content="it failed")])
    server.script("[fault-spin]", [Reply(tool_calls=[("spin", {})])])
    server.script("[order-b2]", [Reply(status=400, error_body={"error": {"message": "bad request"}})])
    args = ["--model", "openai-compatible:m", "--base-url", server.url, "--tool-timeout", "1", "--retries", "0"]
    cases = ["--case", "orders.a1", "--case", "orders.b2", "--case", "faults.explode", "--case", "faults.spin"]
    run = cli("run", release, *args, *cases, "-o", tmp_path / "run")
    assert run.code == 1, run.stderr  # two samples in error
    records = read_jsonl(tmp_path / "run" / "responses.jsonl")
    kinds = {r["caseId"]: (r["error"] or {}).get("kind") for r in records}
    assert kinds == {"orders.a1": None, "faults.explode": None, "orders.b2": "provider", "faults.spin": "tool-timeout"}
    assert any(result.get("error") for r in records for result in r["toolResults"])  # the tool that threw
    check(records)

    echo = cli("run", release, "--model", "echo", "--eval", "plain", "-o", tmp_path / "echo")
    again = cli("run", release, "--model", "echo", "--eval", "plain", "-o", tmp_path / "cached")
    assert echo.code == again.code == 0, echo.stderr  # one plain case fails, none is in error
    cached = read_jsonl(tmp_path / "cached" / "responses.jsonl")
    assert cached and all(r["cached"] for r in cached)
    check(read_jsonl(tmp_path / "echo" / "responses.jsonl") + cached)


def test_python_made_records_match_the_schema():
    check([error_record("a", 0, "timeout", "late", 1.5, priced=True), recorded_response("b", "out", [], "stop", None)])
    assert orjson.loads(orjson.dumps(error_record("a", 2, "x", "y", float("inf"), priced=False)))["latencyMs"] == 0.0


def test_schema_rejects_wrong_shapes():
    good = recorded_response("b", "out", [], "stop", None)
    assert record_problem([]) and record_problem({**good, "repeat": -1})
    assert record_problem({k: v for k, v in good.items() if k != "cached"}) == "a record needs the fields cached"
    assert record_problem({**good, "output": None}) and record_problem({**good, "usage": {"inputTokens": "3"}})
    assert record_problem({**good, "error": {"kind": "x"}}) and record_problem({**good, "latencyMs": float("nan")})


def test_batch_mode_records_match_the_schema(built, batch_server, cli, tmp_path):
    """`run --batch` records (a tool loop across two batches, a tool that throws, a request that
    fails in every batch) have the schema's fields, with `batch` naming each request's batch."""
    batch_server.script(
        "[order-a1]", [Reply(tool_calls=[("lookup_order", {"orderId": "A1"})]), Reply(content="shipped")]
    )
    batch_server.script("[fault-explode]", [Reply(tool_calls=[("explode", {})]), Reply(content="it failed")])
    batch_server.script("[order-b2]", [Reply(status=400)])
    cases = ["--case", "orders.a1", "--case", "orders.b2", "--case", "faults.explode"]
    run = cli(
        "run",
        built("agent"),
        "--model",
        "openai:m",
        "--base-url",
        batch_server.url,
        "--batch",
        "--batch-poll",
        "0.02",
        "--retries",
        "0",
        *cases,
        "-o",
        tmp_path / "run",
        env={"OPENAI_API_KEY": "sk-test"},
    )
    assert run.code == 1, run.stderr
    records = read_jsonl(tmp_path / "run" / "responses.jsonl")
    check(records)
    kinds = {r["caseId"]: (r["error"] or {}).get("kind") for r in records}
    assert kinds == {"orders.a1": None, "faults.explode": None, "orders.b2": "provider"}
    assert all(type(r["batch"]) is list and r["batch"] for r in records)
