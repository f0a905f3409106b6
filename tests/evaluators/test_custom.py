"""Custom evaluators in the persistent Node worker pool: every outcome of SPEC
§4, the 5-second deadline against a synchronous infinite loop, and isolation
(one bad call never stops the others)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.evaluators.conftest import cli, read_jsonl, write_jsonl


@pytest.fixture(scope="module")
def graded(built, tmp_path_factory):
    release = built("custom")
    tmp = tmp_path_factory.mktemp("custom")
    rows = [
        {
            "caseId": f"c.{mode}",
            "output": "ok",
            "finishReason": "tool-calls",
            "usage": {"inputTokens": 3, "outputTokens": 1},
            "toolCalls": [
                {"type": "function", "function": {"name": "lookup", "arguments": "{\"q\": 1}"}},
                {"toolName": "broken", "input": "{nope"},
            ],
        }
        for mode in [
            "pass",
            "fail-score",
            "async",
            "echo",
            "throw",
            "loop",
            "hang",
            "string",
            "score-2",
            "nan",
            "function-details",
            "unknown-key",
            "exit",
            "write",
            "forge",
        ]
    ]
    rows.insert(0, {"caseId": "c.after", "output": "ok"})
    rows.append({"caseId": "plain", "output": "hi"})
    out = tmp / "results.jsonl"
    run = cli("grade", release, write_jsonl(tmp / "responses.jsonl", rows), "-o", out, "--json")
    return run, {r["caseId"]: r for r in read_jsonl(out)}


def test_every_case_gets_a_result(graded):
    run, results = graded
    assert run.code == 0, run.stderr  # errors are infrastructure failures, reported, not a usage problem
    assert len(results) == 17
    summary = orjson.loads(run.stdout)
    assert summary["overall"]["errors"] == 11
    assert "11 case(s) ended in error" in run.stderr


def test_pass_fail_with_score_and_async(graded):
    _, results = graded
    assert (results["c.pass"]["outcome"], results["c.pass"]["score"]) == ("pass", 1.0)
    fail = results["c.fail-score"]
    assert (fail["outcome"], fail["score"], fail["message"], fail["details"]) == (
        "fail",
        0.4,
        "partially right",
        {"got": "ok"},
    )
    assert (results["c.async"]["outcome"], results["c.async"]["message"]) == ("pass", "async ok")
    assert results["c.async"]["durationMs"] >= 15
    assert all(results[c]["evaluator"] == "custom" for c in results if c.startswith("c."))


def test_evaluator_receives_the_response(graded):
    _, results = graded
    details = results["c.echo"]["details"]
    assert details["finishReason"] == "tool-calls"
    assert details["usage"] == {"inputTokens": 3, "outputTokens": 1}
    assert details["toolCalls"][0]["function"]["name"] == "lookup"  # raw, as recorded
    assert details["normalizedToolCalls"] == [
        {"toolName": "lookup", "input": {"q": 1}, "valid": True},
        {"toolName": "broken", "input": None, "valid": False},
    ]


@pytest.mark.parametrize(
    "case, message",
    [
        ("c.throw", "the evaluator threw Error: evaluator exploded"),
        ("c.string", 'returned the string "yes"'),
        ("c.score-2", "score = the number 2; score must be a number in [0, 1]"),
        ("c.nan", "score = NaN"),
        ("c.function-details", "details with a function at details.check"),
        ("c.unknown-key", 'unknown key "pass"'),
        ("c.exit", "the evaluator worker crashed: the process exited with code 7"),
        ("c.write", "Access to this API has been restricted"),  # Node's permission model: no file writes
        ("c.hang", "did not finish within the 5 s deadline"),
        # node/protocol.py: what is not an answer of this call ends it, and its worker is replaced
        ("c.forge", "the evaluator worker's answer could not be read"),
    ],
)
def test_errors_carry_the_reason(graded, case, message):
    _, results = graded
    result = results[case]
    assert result["outcome"] == "error" and result["score"] is None
    assert message in result["message"], result["message"]


def test_infinite_loop_times_out_and_the_other_cases_finish(graded):
    _, results = graded
    loop = results["c.loop"]
    hang = results["c.hang"]
    assert loop["outcome"] == "error" and "5 s deadline" in loop["message"] and "replaced" in loop["message"]
    assert hang["outcome"] == "error" and "5 s deadline" in hang["message"]
    # each was given its whole deadline (a lower bound: a busy machine only lengthens it)
    assert loop["durationMs"] >= 4900 and hang["durationMs"] >= 4900
    # the cases queued behind the loop (and the other eval) still got graded
    assert results["c.after"]["outcome"] == "pass"
    assert results["plain"]["outcome"] == "pass"
    assert results["c.write"]["outcome"] == "error"
    assert results["c.forge"]["outcome"] == "error"  # the forged answer was not taken for another call's


def test_permission_model_blocked_the_write(graded):
    assert not Path("/tmp/trunchbull-evaluator-escape").exists()
