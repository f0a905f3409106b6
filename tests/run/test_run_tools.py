"""The tool loop through the real openai-compatible provider: the model asks
for a tool, the release's real `execute` runs in the sandboxed worker, its
result goes back to the model, and the final answer is graded."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply

MODEL = "openai-compatible:test-model"


def run_args(release: Path, server, out: Path, *extra) -> list:
    return ["run", release, "--model", MODEL, "--base-url", server.url, "-o", out, *extra]


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def test_tool_call_is_executed_and_its_result_sent_back(built, server, cli, tmp_path):
    release = built("agent")
    server.script(
        "[order-a1]",
        [
            Reply(tool_calls=[("lookup_order", {"orderId": "A1"})], usage=(11, 5)),
            Reply(content="Order A1 has shipped.", usage=(20, 7)),
        ],
    )
    run = cli(*run_args(release, server, tmp_path / "run", "--case", "orders.a1", "--json"))
    assert run.code == 0, run.stderr

    first, second = server.received("[order-a1]")
    manifest = orjson.loads((release / "release.json").read_bytes())
    schema = next(t["inputSchema"] for t in manifest["tools"] if t["name"] == "lookup_order")
    offered = first.body["tools"]
    assert [t["function"]["name"] for t in offered] == ["lookup_order"]  # only the case's tools
    assert offered[0]["function"]["parameters"] == schema  # the release's JSON Schema
    assert offered[0]["function"]["description"] == "Look up an order's status by its ID."
    assert first.body["messages"][0] == {"role": "system", "content": "You are a support agent. Use the tools."}
    assert first.body["messages"][1]["content"] == "[order-a1] Where is order A1?"
    # the tool really ran, and its result is what the model got next
    (result,) = tool_messages(second.body)
    assert json.loads(result["content"]) == {"orderId": "A1", "status": "shipped", "carrier": "DHL"}
    call_id = second.body["messages"][2]["tool_calls"][0]["id"]
    assert result["tool_call_id"] == call_id

    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["caseId"] == "orders.a1" and record["repeat"] == 0
    assert record["output"] == "Order A1 has shipped."
    assert record["toolCalls"] == [
        {"type": "tool-call", "toolCallId": call_id, "toolName": "lookup_order", "input": {"orderId": "A1"}, "step": 0}
    ]
    assert record["toolResults"] == [
        {
            "toolCallId": call_id,
            "toolName": "lookup_order",
            "output": {"orderId": "A1", "status": "shipped", "carrier": "DHL"},
        }
    ]
    assert record["steps"] == 2 and record["finishReason"] == "stop"
    assert record["usage"] == {"inputTokens": 31, "outputTokens": 12, "totalTokens": 43}
    assert record["attempts"] == 1 and record["cached"] is False and record["error"] is None
    (graded,) = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert graded["outcome"] == "pass" and graded["repeat"] == 0 and graded["evaluator"] == "contains"
    assert run.json["overall"]["passed"] == 1


def test_case_data_is_never_sent(built, server, cli, tmp_path):
    release = built("agent")
    run = cli(*run_args(release, server, tmp_path / "run", "--eval", "orders"))
    assert run.code in (0, 1), run.stderr
    assert len(server.received()) >= 3
    for request in server.received():
        assert "DATA-SECRET" not in json.dumps(request.body)


def test_tool_call_syntax_graded_on_the_calls_made(built, server, cli, tmp_path):
    release = built("agent")
    server.script("[order-calls]", [Reply(tool_calls=[("lookup_order", {"orderId": "C3"})]), Reply(content="done")])
    run = cli(*run_args(release, server, tmp_path / "run", "--case", "orders.calls"))
    assert run.code == 0, run.stderr
    (graded,) = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert graded["evaluator"] == "tool_call_syntax" and graded["outcome"] == "pass"


def test_a_throwing_tool_is_a_tool_error_given_back_to_the_model(built, server, cli, tmp_path):
    release = built("agent")
    server.script("[fault-explode]", [Reply(tool_calls=[("explode", {})]), Reply(content="The system is down, sorry.")])
    run = cli(*run_args(release, server, tmp_path / "run", "--case", "faults.explode"))
    assert run.code == 0, run.stderr
    _, second = server.received("[fault-explode]")
    (result,) = tool_messages(second.body)
    assert "the order system is down" in result["content"]
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["error"] is None and record["output"] == "The system is down, sorry."
    (tool_result,) = record["toolResults"]
    assert tool_result["toolName"] == "explode" and "the order system is down" in tool_result["error"]
    assert "output" not in tool_result


def test_sandbox_forbids_file_writes_and_hides_the_api_key(built, server, cli, tmp_path):
    release = built("agent")
    marker = Path("/tmp/trunchbull-tool-wrote-this")
    marker.unlink(missing_ok=True)
    server.script(
        "[fault-write]", [Reply(tool_calls=[("write_note", {"text": "hi"})]), Reply(content="could not write")]
    )
    server.script("[fault-env]", [Reply(tool_calls=[("env_probe", {})]), Reply(content="listed")])
    run = cli(
        *run_args(
            release,
            server,
            tmp_path / "run",
            "--case",
            "faults.write",
            "--case",
            "faults.env",
            "--api-key-env",
            "RUN_TEST_KEY",
        ),
        env={"RUN_TEST_KEY": "sk-hidden-from-tools"},
    )
    assert run.code == 0, run.stderr
    assert not marker.exists()
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    (write,) = records["faults.write"]["toolResults"]
    assert "Access to this API has been restricted" in write["error"]  # Node's permission model
    (probe,) = records["faults.env"]["toolResults"]
    assert "RUN_TEST_KEY" not in probe["output"]["names"]
    assert all(r.headers["authorization"] == "Bearer sk-hidden-from-tools" for r in server.received())


def test_a_synchronous_infinite_loop_in_a_tool_ends_only_its_sample(built, server, cli, tmp_path):
    """One worker (-j 2), the looping tool and a slow sample in flight on it:
    the loop's sample ends as tool-timeout, the worker is replaced, and the
    slow sample is sent again and recorded once, its attempts counting the
    provider call it made on the worker that was replaced."""
    release = built("agent")
    server.script("[fault-spin]", [Reply(tool_calls=[("spin", {})]), Reply(content="never reached")])
    server.script("[plain-one]", [Reply(content="echo one, slowly", delay=2.5)])
    run = cli(
        *run_args(
            release,
            server,
            tmp_path / "run",
            "--case",
            "faults.spin",
            "--case",
            "plain.one",
            "-j",
            "2",
            "--tool-timeout",
            "1",
        )
    )
    assert run.code == 1  # a sample ended in error
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    assert len(read_jsonl(tmp_path / "run" / "responses.jsonl")) == 2  # no duplicate
    spin = records["faults.spin"]
    assert spin["error"]["kind"] == "tool-timeout" and "replaced" in spin["error"]["message"]
    plain = records["plain.one"]
    assert plain["error"] is None and plain["output"] == "echo one, slowly"
    assert len(server.received("[plain-one]")) == 2  # sent again after the replacement
    assert plain["attempts"] == 2  # both calls counted
    assert spin["attempts"] == 1  # its one call, on the worker that was replaced
    results = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "results.jsonl")}
    assert results["faults.spin"]["outcome"] == "error" and results["plain.one"]["outcome"] == "pass"


def test_an_asynchronous_tool_past_the_timeout_ends_its_sample(built, server, cli, tmp_path):
    release = built("agent")
    server.script("[fault-stall]", [Reply(tool_calls=[("stall", {})]), Reply(content="never reached")])
    run = cli(*run_args(release, server, tmp_path / "run", "--case", "faults.stall", "--tool-timeout", "0.5"))
    assert run.code == 1
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["error"]["kind"] == "tool-timeout"
    assert "0.5 s tool timeout" in record["error"]["message"]
    assert len(server.received("[fault-stall]")) == 1


def test_a_worker_that_dies_under_a_sample_twice_ends_it_as_worker_crash(built, server, cli, tmp_path):
    release = built("agent")
    server.script("[fault-quit]", [Reply(tool_calls=[("quit", {})]), Reply(content="never reached")])
    server.script("[plain-one]", [Reply(content="echo one, slowly", delay=1.5)])
    run = cli(*run_args(release, server, tmp_path / "run", "--case", "faults.quit", "--case", "plain.one", "-j", "2"))
    assert run.code == 1
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    assert len(records) == 2
    quit_record = records["faults.quit"]
    assert quit_record["error"]["kind"] == "worker-crash" and "exited with code 3" in quit_record["error"]["message"]
    assert len(server.received("[fault-quit]")) == 2  # tried on a fresh worker once more
    assert records["plain.one"]["error"] is None and records["plain.one"]["output"] == "echo one, slowly"


def test_reaching_max_steps_is_graded_on_the_last_step(built, server, cli, tmp_path):
    release = built("agent")
    server.script(
        "[fault-loop]",
        [Reply(content="checking", tool_calls=[("lookup_order", {"orderId": str(i)})]) for i in range(5)],
    )
    run = cli(*run_args(release, server, tmp_path / "run", "--case", "faults.loop", "--max-steps", "3"))
    assert run.code == 0, run.stderr
    (record,) = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert record["error"] is None and record["steps"] == 3 and len(server.received("[fault-loop]")) == 3
    assert record["finishReason"] == "tool-calls" and record["output"] == "checking"
    assert [c["input"]["orderId"] for c in record["toolCalls"]] == ["0", "1", "2"]
    assert len(record["toolResults"]) == 3
    (graded,) = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert graded["outcome"] == "pass"  # non_empty, on the last output
