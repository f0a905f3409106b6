"""`trunchbull export --format parquet`: a real run (the agent fixture through
the openai-compatible provider against the local model server, with a tool
call, a sample in error and repeats) read back by polars, row by row against
the run's own records and results, and the release's cases (prompt, system
prompt, expected answer, evaluator spec, data)."""

from __future__ import annotations

import orjson
import polars as pl

import shutil

from tests.report.conftest import read_jsonl
from tests.support.chat_server import ChatServer, Reply


def test_parquet_round_trip_of_a_run_with_errors_repeats_and_tool_calls(release_of, tb, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(release_of("agent"), release)
    with ChatServer() as server:
        server.script(
            "[order-a1]",
            [Reply(tool_calls=[("lookup_order", {"orderId": "A1"})], usage=(11, 5)), Reply(content="A1 shipped")],
        )
        server.script("[order-calls]", [Reply(status=400, error_body={"error": {"message": "bad request"}})])
        run = tb(
            "run",
            release,
            "--model",
            "openai-compatible:test-model",
            "--base-url",
            server.url,
            "-o",
            tmp_path / "run",
            "--case",
            "orders.*",
            "--case",
            "plain.one",
            "--repeat",
            "2",
            "--no-cache",
        )
    assert run.code == 1, run.stderr  # orders.calls is in error
    assert tb("export", tmp_path / "run", "--format", "parquet").code == 2  # a binary file needs -o
    out = tmp_path / "samples.parquet"
    exported = tb("export", tmp_path / "run", "--format", "parquet", "-o", out)
    assert exported.code == 0, exported.stderr

    frame = pl.read_parquet(out)
    assert frame.schema["outcome"] == pl.Enum(["pass", "fail", "error"])
    assert frame.schema["repeat"] == pl.Int64 and frame.schema["score"] == pl.Float64
    assert frame.schema["toolCalls"] == pl.List(
        pl.Struct({"toolCallId": pl.String, "toolName": pl.String, "input": pl.String})
    )
    results = read_jsonl(tmp_path / "run" / "results.jsonl")
    records = {(r["caseId"], r["repeat"]): r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    assert frame.height == len(results) == 8
    for row, result in zip(frame.iter_rows(named=True), results):
        record = records[(result["caseId"], result["repeat"])]
        assert (row["caseId"], row["repeat"], row["outcome"]) == (result["caseId"], result["repeat"], result["outcome"])
        assert row["score"] == result["score"] and row["message"] == result["message"]
        assert row["output"] == record["output"] and row["latencyMs"] == record["latencyMs"]
        assert row["totalTokens"] == (record["usage"] or {}).get("totalTokens")
        assert row["errorKind"] == ((record.get("error") or {}).get("kind"))
        assert [(c["toolName"], orjson.loads(c["input"])) for c in row["toolCalls"]] == [
            (c["toolName"], c["input"]) for c in record["toolCalls"]
        ]
        assert [orjson.loads(r["output"]) for r in row["toolResults"]] == [r["output"] for r in record["toolResults"]]
        assert row["model"] == "openai-compatible:test-model"
    a1 = frame.filter((pl.col("caseId") == "orders.a1") & (pl.col("repeat") == 1)).row(0, named=True)
    assert a1["toolCalls"][0]["toolName"] == "lookup_order"
    assert a1["inputTokens"] == records[("orders.a1", 1)]["usage"]["inputTokens"] > 11  # summed over both steps
    assert orjson.loads(a1["toolResults"][0]["output"])["status"] == "shipped"
    errors = frame.filter(pl.col("outcome") == "error")
    assert errors["caseId"].to_list() == ["orders.calls", "orders.calls"]
    assert set(errors["errorKind"].to_list()) == {"provider"} and errors["score"].is_null().all()
    # a notebook's first question, answered from the file alone
    rates = frame.filter(pl.col("outcome") != "error").group_by("evalId").agg((pl.col("outcome") == "pass").mean())
    assert dict(rates.iter_rows()) == {"orders": 0.5, "plain": 1.0}

    # the release's side of each case: what was asked and what was expected
    cases = {c["id"]: c for c in read_jsonl(release / "cases.jsonl")}
    for row in frame.iter_rows(named=True):
        case = cases[row["caseId"]]
        assert (row["prompt"], row["systemPrompt"]) == (case["prompt"], case["systemPrompt"])
        assert orjson.loads(row["evaluate"]) == case["evaluate"]
        assert (None if row["data"] is None else orjson.loads(row["data"])) == case["data"]  # null: no data
        spec = case["evaluate"]
        assert row["expected"] == (spec.get("expected") if isinstance(spec, dict) else None)
    assert set(frame.filter(pl.col("evalId") == "plain")["expected"].to_list()) == {"echo"}
    # a release that is gone: the columns are empty, and the export says why
    shutil.rmtree(release)
    gone = tb("export", tmp_path / "run", "--format", "parquet", "-o", tmp_path / "gone.parquet")
    assert gone.code == 0 and "no longer exists" in gone.stderr and "their columns are empty" in gone.stderr
    empty = pl.read_parquet(tmp_path / "gone.parquet")
    assert empty["prompt"].is_null().all() and empty["expected"].is_null().all() and empty.height == 8
