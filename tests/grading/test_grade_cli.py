"""`trunchbull grade` end to end on releases built by the real compiler."""

from __future__ import annotations

import shutil

import orjson
import pytest
from scipy.stats import binomtest

from tests.evaluators.conftest import FIXTURES, cli, read_jsonl, write_jsonl

GOOD = [
    {"caseId": "k.non-empty", "output": "hello"},
    {"caseId": "k.exact", "output": "  Paris\n"},
    {"caseId": "k.contains", "output": "Returns within 30 DAYS."},
    {"caseId": "k.bank", "output": "No refund, sorry."},
    {"caseId": "k.gsm8k", "output": "70 + 2 = 72\n#### $72"},
    {"caseId": "k.gsm8k-decimal", "output": "The change is 3.750."},
    {"caseId": "more", "output": "11"},
]


def test_grades_every_case_in_release_order(built, tmp_path):
    release = built("kinds")
    responses = write_jsonl(tmp_path / "responses.jsonl", list(reversed(GOOD)))
    run = cli("grade", release, responses, "-o", tmp_path / "results.jsonl")
    assert run.code == 0, run.stderr
    results = read_jsonl(tmp_path / "results.jsonl")
    digest = orjson.loads((release / "release.json").read_bytes())["digest"]
    assert [r["caseId"] for r in results] == [
        "k.non-empty",
        "k.exact",
        "k.contains",
        "k.bank",
        "k.gsm8k",
        "k.gsm8k-decimal",
        "more",
    ]
    assert [r["outcome"] for r in results] == ["pass", "pass", "pass", "fail", "pass", "pass", "fail"]
    for r in results:
        assert set(r) == {
            "caseId",
            "evalId",
            "outcome",
            "score",
            "message",
            "details",
            "evaluator",
            "durationMs",
            "releaseDigest",
        }
        assert r["releaseDigest"] == digest
        assert r["message"]
        assert r["score"] == (1.0 if r["outcome"] == "pass" else 0.0)
        assert r["durationMs"] >= 0
    by_id = {r["caseId"]: r for r in results}
    assert by_id["k.bank"]["message"] == "the output contains the forbidden answer 'no refund'"
    assert by_id["k.gsm8k"]["evaluator"] == "gsm8k" and by_id["k.gsm8k"]["details"]["raw"] == "$72"
    assert by_id["more"]["evalId"] == "more" and "does not contain '7'" in by_id["more"]["message"]
    # text summary: per eval and overall
    assert "kinds" in run.stdout and "overall" in run.stdout and digest in run.stdout
    assert "83.3%" in run.stdout  # kinds: 5 of 6


def test_json_summary_and_fail_under(built, tmp_path):
    release = built("kinds")
    responses = write_jsonl(tmp_path / "responses.jsonl", GOOD)
    run = cli("grade", release, responses, "--json")
    assert run.code == 0, run.stderr
    summary = orjson.loads(run.stdout)
    assert list(summary["evals"]) == ["kinds", "more"]
    kinds = summary["evals"]["kinds"]
    assert (kinds["samples"], kinds["cases"], kinds["passed"], kinds["failed"], kinds["errors"]) == (6, 6, 5, 1, 0)
    assert kinds["passRate"] == pytest.approx(5 / 6, abs=1e-6) and kinds["meanScore"] == pytest.approx(5 / 6, abs=1e-6)
    # one sample per case: the corrected Wilson interval for 5 of 6 (scipy's), and for 0 of 1
    ref = binomtest(5, 6).proportion_ci(0.95, method="wilsoncc")
    assert kinds["passRateCI"] == pytest.approx([ref.low, ref.high], abs=1e-6)
    one = binomtest(0, 1).proportion_ci(0.95, method="wilsoncc")
    assert summary["evals"]["more"]["passRateCI"] == pytest.approx([one.low, one.high], abs=1e-6)
    assert summary["overall"]["passRate"] == pytest.approx(5 / 7, abs=1e-6)
    assert summary["results"] is None and summary["release"]["digest"].startswith("sha256:")

    met = cli("grade", release, responses, "--fail-under", "0.7", "--json")
    assert met.code == 0 and orjson.loads(met.stdout)["failUnder"] == {"rate": 0.7, "met": True}
    missed = cli("grade", release, responses, "--fail-under", "0.75")
    assert missed.code == 1
    assert "below 0.75" in missed.stderr
    out_of_range = cli("grade", release, responses, "--fail-under", "1.5")
    assert out_of_range.code == 2
    assert out_of_range.stderr.startswith("trunchbull: error: --fail-under takes a pass rate between 0 and 1")


def test_unusable_responses_report_every_problem_with_line_numbers(built, tmp_path):
    release = built("kinds")
    rows = [
        GOOD[0],
        b'{"caseId": "k.exact", "output": "Paris"',  # line 2: truncated
        {"caseId": "k.exactt", "output": "x"},  # line 3: unknown, with a suggestion
        GOOD[0],  # line 4: duplicate of line 1
        [1, 2],  # line 5
        {"caseId": "k.contains", "output": None},  # line 6
        {"caseId": "k.bank", "output": "x", "toolCalls": {}},  # line 7
        {"output": "x"},  # line 8
    ]
    responses = write_jsonl(tmp_path / "responses.jsonl", rows)
    out = tmp_path / "results.jsonl"
    run = cli("grade", release, responses, "-o", out)
    assert run.code == 2
    assert not out.exists()
    err = run.stderr
    assert f"{responses}:2:" in err and "error[response-json]" in err
    assert (
        f"{responses}:3: error[response-unknown-case]: unknown caseId 'k.exactt'" in err
        and "did you mean 'k.exact'?" in err
    )
    assert (
        f"{responses}:4: error[response-duplicate]: duplicate response for case 'k.non-empty' (first at line 1)" in err
    )
    assert f"{responses}:5: error[response-invalid]: a response must be a JSON object, found an array" in err
    assert f"{responses}:6: error[response-invalid]" in err and "output must be a string, found null" in err
    assert f"{responses}:7: error[response-invalid]" in err and "toolCalls must be an array" in err
    assert f"{responses}:8: error[response-invalid]: a response needs a string caseId" in err
    assert f"trunchbull: error: {responses} cannot be graded: 7 problem(s); nothing was written" in err


def test_missing_responses_are_reported_and_recorded_as_errors(built, tmp_path):
    release = built("kinds")
    responses = write_jsonl(tmp_path / "responses.jsonl", [r for r in GOOD if r["caseId"] not in ("k.exact", "more")])
    out = tmp_path / "results.jsonl"
    run = cli("grade", release, responses, "-o", out, "--json")
    assert run.code == 2
    assert "error[response-missing]: no response for 2 of 7 case(s): 'k.exact', 'more'" in run.stderr
    results = {r["caseId"]: r for r in read_jsonl(out)}
    assert len(results) == 7
    assert results["k.exact"]["outcome"] == "error" and results["k.exact"]["score"] is None
    assert "no response" in results["k.exact"]["message"]
    summary = orjson.loads(run.stdout)
    assert summary["missing"] == 2 and summary["overall"]["errors"] == 2


def test_empty_lines_and_extra_fields_are_accepted(built, tmp_path):
    release = built("kinds")
    plain = cli("grade", release, write_jsonl(tmp_path / "plain.jsonl", GOOD), "-o", tmp_path / "plain-results.jsonl")
    assert plain.code == 0, plain.stderr
    rows = [dict(r, model="gpt-x", latencyMs=12) for r in GOOD]
    path = tmp_path / "responses.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n\n  \n")
    run = cli("grade", release, path, "-o", tmp_path / "results.jsonl", "--json")
    assert run.code == 0, run.stderr
    # every response graded, as without the blank lines and the extra fields, which change nothing
    results = read_jsonl(tmp_path / "results.jsonl")
    expected = read_jsonl(tmp_path / "plain-results.jsonl")
    assert [r["caseId"] for r in results] == [r["caseId"] for r in expected] and len(results) == len(GOOD)
    assert [(r["outcome"], r["score"], r["message"]) for r in results] == [
        (r["outcome"], r["score"], r["message"]) for r in expected
    ]
    summary = orjson.loads(run.stdout)
    assert summary["overall"]["samples"] == len(GOOD) and summary["overall"]["errors"] == 0
    assert summary["missing"] == 0


def test_a_release_that_does_not_verify_is_refused(built, tmp_path):
    release = tmp_path / "tampered"
    shutil.copytree(built("kinds"), release)
    cases = release / "cases.jsonl"
    cases.chmod(0o644)
    cases.write_bytes(cases.read_bytes().replace(b'"Paris"', b'"Lyon"'))
    run = cli("grade", release, write_jsonl(tmp_path / "r.jsonl", GOOD))
    assert run.code == 2 and "does not verify" in run.stderr
    assert run.stderr.startswith(f"trunchbull: error: {release} does not verify")


def test_tar_release(tmp_path):
    build = cli("build", FIXTURES / "kinds", "-o", tmp_path / "rel", "--tar")
    assert build.code == 0, build.stderr
    run = cli("grade", tmp_path / "rel.tar", write_jsonl(tmp_path / "r.jsonl", GOOD), "--json")
    assert run.code == 0, run.stderr
    assert orjson.loads(run.stdout)["overall"]["passed"] == 5


def test_tool_call_syntax_against_the_release_schemas(built, tmp_path):
    release = built("tools")
    rows = [
        {
            "caseId": "t.weather",
            "output": "",
            "finishReason": "tool-calls",
            "toolCalls": [
                {
                    "type": "tool-call",
                    "toolCallId": "1",
                    "toolName": "get_weather",
                    "input": {"city": "Paris", "unit": "C"},
                }
            ],
        },
        {
            "caseId": "t.trip",
            "output": "",
            "toolCalls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {
                        "name": "book_hotel",
                        "arguments": "{\"city\":\"Paris\",\"nights\":2,\"breakfast\":1}",
                    },
                },
            ],
        },
        {
            "caseId": "t.weather-only",
            "output": "",
            "toolCalls": [{"toolName": "get_weather", "args": {"city": "Rome"}}],
        },
        {"caseId": "zodcheck", "output": "{\"answer\": 4}"},
    ]
    out = tmp_path / "results.jsonl"
    run = cli("grade", release, write_jsonl(tmp_path / "r.jsonl", rows), "-o", out)
    assert run.code == 0, run.stderr
    results = {r["caseId"]: r for r in read_jsonl(out)}
    assert results["t.weather"]["outcome"] == "pass" and results["t.weather"]["details"] == {"plan": 1}
    assert results["t.trip"]["outcome"] == "fail"
    assert (
        "call 2 (book_hotel) does not match the tool's input schema: input.breakfast: 1 is not of type 'boolean'"
        in results["t.trip"]["message"]
    )
    assert results["t.weather-only"]["outcome"] == "pass"
    # a custom evaluator bundle importing zod from the release's dependencies
    assert results["zodcheck"]["outcome"] == "pass" and results["zodcheck"]["message"] == "valid"
