"""The grader itself (grading/grader.py), in-process on releases built by the
real compiler: rows in index order whatever order samples come in, errors
and missing responses, one prepared evaluator per distinct spec and what its
preparation reads, each kind handed what it reads, custom evaluators
deferred to the pool."""

from __future__ import annotations

import pytest

from trunchbull.evaluators.inputs import PREPARATION_INPUTS, SAMPLE_INPUTS
from trunchbull.grading.evaluator_inputs import PREPARATION_KEY, SAMPLE_VALUE
from trunchbull.grading.grader import Grader, ToGrade, grade
from trunchbull.grading.responses import Response
from trunchbull.release.loaded import load_release

WEATHER = {"toolName": "get_weather", "input": {"city": "Paris"}}
HOTEL = {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 2, "breakfast": True}}


def answer(output: str, calls: list | None = None) -> Response:
    return Response(0, output, calls or [], "stop", {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5})


def test_every_input_has_its_row():
    assert tuple(SAMPLE_VALUE) == SAMPLE_INPUTS and tuple(PREPARATION_KEY) == PREPARATION_INPUTS


@pytest.fixture(scope="module")
def kinds_release(built):
    return load_release(built("kinds"))


@pytest.fixture(scope="module")
def tools_release(built):
    return load_release(built("tools"))


def test_rows_come_back_in_index_order_whatever_order_they_were_added_in(kinds_release):
    cases = kinds_release.cases
    grader = Grader(kinds_release, "no response")
    order = list(range(len(cases)))
    grader.add([(i, ToGrade(cases[i], answer("Paris, 30 days, 72, yes"))) for i in order[1::2]])
    grader.add([(i, ToGrade(cases[i], answer("Paris, 30 days, 72, yes"))) for i in reversed(order[::2])])
    graded = grader.finish()
    assert [r["caseId"] for r in graded.results] == [c["id"] for c in cases]
    assert all(r["releaseDigest"] == kinds_release.digest and "repeat" not in r for r in graded.results)


def test_an_index_never_added_is_an_error_of_the_caller(kinds_release):
    grader = Grader(kinds_release, "no response")
    grader.add([(1, ToGrade(kinds_release.cases[0], answer("x")))])
    with pytest.raises(KeyError):
        grader.finish()


def test_samples_in_error_and_without_a_response_are_graded_error(kinds_release):
    first, second, third = kinds_release.cases[:3]
    samples = [
        ToGrade(first, None, 0),
        ToGrade(second, answer(""), 1, {"kind": "timeout", "message": "no reply in 300 s"}),
        ToGrade(third, answer("Returns within 30 days."), 2),
        ToGrade(first, None, 3),
    ]
    graded = grade(kinds_release, samples, "no response for this case")
    rows = graded.results
    assert [r["repeat"] for r in rows] == [0, 1, 2, 3]
    assert (rows[0]["outcome"], rows[0]["score"], rows[0]["message"]) == ("error", None, "no response for this case")
    assert rows[1]["message"] == "the sample could not be completed (timeout): no reply in 300 s"
    assert rows[1]["details"] == {"error": {"kind": "timeout", "message": "no reply in 300 s"}}
    assert rows[2]["outcome"] == "pass" and rows[2]["evaluator"] == "contains"
    assert graded.missing == [first["id"], first["id"]]


def test_one_evaluator_is_prepared_per_distinct_spec(kinds_release):
    case = next(c for c in kinds_release.cases if c["evaluate"]["kind"] == "contains")
    same = [{**case, "id": f"same-{i}"} for i in range(50)]
    own = [{**case, "id": f"own-{i}", "evaluate": {"kind": "contains", "expected": f"{i} days"}} for i in range(50)]
    grader = Grader(kinds_release, "no response")
    grader.add(enumerate(ToGrade(c, answer("7 days")) for c in same + own))
    graded = grader.finish()
    assert grader.prepared == 51
    assert [r["outcome"] for r in graded.results[:50]] == ["fail"] * 50
    assert [r["caseId"] for r in graded.results[50:] if r["outcome"] == "pass"] == ["own-7"]


def test_a_kind_reading_the_cases_tools_is_prepared_per_tool_set(tools_release):
    by_id = {c["id"]: c for c in tools_release.cases}
    shared = by_id["t.weather"]  # the eval's spec, inherited; the eval's tools
    assert shared["tools"] == ["get_weather", "book_hotel"]
    narrower = {**shared, "id": "t.narrower", "tools": ["get_weather"]}
    samples = [
        ToGrade(shared, answer("", [WEATHER, HOTEL])),
        ToGrade(narrower, answer("", [WEATHER, HOTEL])),
        ToGrade({**shared, "id": "t.again"}, answer("", [WEATHER])),
    ]
    grader = Grader(tools_release, "no response")
    grader.add(enumerate(samples))
    rows = grader.finish().results
    assert grader.prepared == 2  # one spec, two tool sets
    assert rows[0]["outcome"] == "pass" and rows[2]["outcome"] == "pass"
    assert rows[1]["outcome"] == "fail"
    assert "unknown tool 'book_hotel' (the case's tools: get_weather)" in rows[1]["message"]


def test_a_spec_that_cannot_be_prepared_is_its_samples_error(kinds_release):
    case = kinds_release.cases[0]
    broken = [
        {**case, "id": "unknown", "evaluate": {"kind": "regex", "pattern": "x"}},
        {**case, "id": "gsm8k", "evaluate": {"kind": "gsm8k", "expected": "seventy"}},
        {**case, "id": "custom", "evaluate": {"kind": "custom"}},
    ]
    rows = grade(kinds_release, [ToGrade(c, answer("72")) for c in broken], "no response").results
    assert [r["message"] for r in rows] == [
        "the release's evaluator spec cannot be graded: unknown evaluator kind 'regex'",
        "the release's evaluator spec cannot be graded: gsm8k expected 'seventy' is not a normalized number",
        "the release's evaluator spec cannot be graded: evaluator 'custom': missing 'module'",
    ]
    assert {(r["outcome"], r["score"]) for r in rows} == {("error", None)}


def test_custom_evaluators_are_deferred_and_given_every_sample_input(built):
    release = load_release(built("custom"))
    by_mode = {c["data"]["mode"]: c for c in release.cases if c["evalId"] == "custom"}
    calls = [{"type": "tool-call", "toolCallId": "c1", "toolName": "get_weather", "input": '{"city": "Oslo"}'}]
    samples = [
        ToGrade(by_mode["echo"], Response(0, "out", calls, "tool-calls", {"inputTokens": 1}), 4),
        ToGrade(by_mode["pass"], answer("ok"), 5),
        ToGrade(by_mode["fail-score"], answer("meh"), 6),
    ]
    grader = Grader(release, "no response")
    grader.add(enumerate(samples))
    assert all(row["outcome"] == "error" and row["message"] is None for row in grader.rows.values())  # not yet
    rows = grader.finish().results
    assert rows[0]["outcome"] == "pass"
    assert rows[0]["details"] == {
        "toolCalls": calls,
        "normalizedToolCalls": [{"toolName": "get_weather", "input": {"city": "Oslo"}, "valid": True}],
        "finishReason": "tool-calls",
        "usage": {"inputTokens": 1},
    }
    assert [r["outcome"] for r in rows[1:]] == ["pass", "fail"] and rows[2]["score"] == 0.4
    assert [r["repeat"] for r in rows] == [4, 5, 6]
