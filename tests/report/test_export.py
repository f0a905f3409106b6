"""`trunchbull export`: JUnit XML read back by junitparser (the parser CI
result publishers use) and ElementTree, CSV read back by the csv module."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import orjson
from junitparser import Error, Failure, JUnitXml

from tests.report.conftest import graded_run, read_jsonl

ANSWERS = {
    "alpha.1": "yes",
    "alpha.2": "no \x1b[31mred\x00 <b>&",
    "alpha.3": "yes",
    "alpha.4": "no",
    "beta.1": "yes",
    "beta.2": "yes",
}  # beta.3: no response, graded `error`


def test_junit_one_suite_per_eval_one_case_per_sample(release_of, tb, tmp_path):
    run = graded_run(tb, release_of("pairs"), ANSWERS, tmp_path / "r" / "run")
    out = tmp_path / "junit.xml"
    result = tb("export", run, "--format", "junit", "-o", out)
    assert result.code == 0, result.stderr
    xml = JUnitXml.fromfile(str(out))
    suites = {suite.name: suite for suite in xml}
    assert list(suites) == ["alpha", "beta"]
    assert (suites["alpha"].tests, suites["alpha"].failures, suites["alpha"].errors) == (4, 2, 0)
    assert (suites["beta"].tests, suites["beta"].failures, suites["beta"].errors) == (3, 0, 1)
    assert (xml.tests, xml.failures, xml.errors) == (7, 2, 1)
    cases = {case.name: case for suite in xml for case in suite}
    assert list(cases) == [*ANSWERS, "beta.3"]
    assert cases["alpha.1"].is_passed and cases["alpha.1"].classname == "alpha"
    (failure,) = cases["alpha.4"].result
    assert isinstance(failure, Failure)
    assert failure.message == "the output does not contain 'yes' (ignoring case)" and failure.type == "contains"
    (error,) = cases["beta.3"].result
    assert isinstance(error, Error) and "no response" in error.message
    # characters XML cannot carry are replaced, markup is escaped: the output is still there
    assert cases["alpha.2"].system_out == "no \ufffd[31mred\ufffd <b>&"
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "7"
    props = {p.get("name"): p.get("value") for p in root.find("testsuite/properties")}
    assert props["model"] == "recorded:answers.jsonl"
    assert props["release"] == orjson.loads((release_of("pairs") / "release.json").read_bytes())["digest"]


def test_junit_of_a_run_with_repeats_names_each_repeat_and_times_it(release_of, tb, tmp_path):
    result = tb("run", release_of("pairs"), "--model", "echo", "-o", tmp_path / "run", "--repeat", "2", "--no-cache")
    assert result.code == 0, result.stderr
    exported = tb("export", tmp_path / "run", "--format", "junit")  # to standard output
    assert exported.code == 0, exported.stderr
    root = ET.fromstring(exported.stdout.encode())
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases[:2]] == ["alpha.1 [repeat 0]", "alpha.1 [repeat 1]"]
    records = {(r["caseId"], r["repeat"]): r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    assert float(cases[0].get("time")) == round(records[("alpha.1", 0)]["latencyMs"] / 1000, 3)
    assert len(cases) == 14 and all(c.find("failure") is not None for c in cases)


def test_csv_one_row_per_sample(release_of, tb, tmp_path):
    run = graded_run(tb, release_of("pairs"), ANSWERS, tmp_path / "r" / "run")
    result = tb("export", run, "--format", "csv")
    assert result.code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout, newline="")))
    results = read_jsonl(run / "results.jsonl")
    assert [r["caseId"] for r in rows] == [r["caseId"] for r in results]
    by_id = {r["caseId"]: r for r in rows}
    assert by_id["alpha.2"]["output"] == ANSWERS["alpha.2"]  # control characters and all, quoted as CSV
    assert by_id["alpha.4"]["outcome"] == "fail" and by_id["alpha.4"]["score"] == "0.0"
    assert by_id["alpha.1"]["outcome"] == "pass" and by_id["alpha.1"]["evaluator"] == "contains"
    assert by_id["beta.3"]["outcome"] == "error" and by_id["beta.3"]["output"] == "" and by_id["beta.3"]["score"] == ""
    assert by_id["alpha.1"]["repeat"] == "0" and by_id["alpha.1"]["cached"] == "false"
    assert list(rows[0]) == [
        "caseId",
        "evalId",
        "repeat",
        "outcome",
        "score",
        "evaluator",
        "message",
        "details",
        "output",
        "toolCalls",
        "finishReason",
        "steps",
        "inputTokens",
        "outputTokens",
        "totalTokens",
        "costUsd",
        "latencyMs",
        "attempts",
        "cached",
        "errorKind",
        "errorMessage",
    ]


def test_csv_of_a_tool_run_keeps_the_calls_as_json(release_of, tb, tmp_path):
    answers = tmp_path / "calls.jsonl"
    answers.write_bytes(
        orjson.dumps(
            {
                "caseId": "orders.calls",
                "output": "done",
                "toolCalls": [
                    {"type": "tool-call", "toolCallId": "c1", "toolName": "lookup_order", "input": {"orderId": "C3"}}
                ],
            }
        )
        + b"\n"
    )
    graded = tb("grade", release_of("agent"), answers, "--run-dir", tmp_path / "run")
    assert graded.code == 2  # the other cases have no response
    out = tmp_path / "out.csv"
    assert tb("export", tmp_path / "run", "--format", "csv", "-o", out).code == 0
    rows = {r["caseId"]: r for r in csv.DictReader(out.open(newline=""))}
    assert rows["orders.calls"]["outcome"] == "pass"
    assert orjson.loads(rows["orders.calls"]["toolCalls"])[0]["input"] == {"orderId": "C3"}
