"""normalizedToolCalls and the tool_call_syntax evaluator (SPEC §4), against
real JSON Schemas as the compiler stores them (AI SDK output, draft-07)."""

from __future__ import annotations

import pytest

from trunchbull.evaluators.inputs import Preparation
from trunchbull.evaluators.registry import prepare
from trunchbull.evaluators.tool_calls import ToolSchemas, json_equal, normalize_tool_call, normalize_tool_calls

WEATHER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "additionalProperties": False,
    "properties": {"city": {"type": "string", "minLength": 1}, "unit": {"type": "string", "enum": ["C", "F"]}},
    "required": ["city"],
}
HOTEL = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string"},
        "nights": {"type": "integer", "minimum": 1},
        "breakfast": {"type": "boolean"},
    },
    "required": ["city", "nights", "breakfast"],
}
SCHEMAS = ToolSchemas([{"name": "get_weather", "inputSchema": WEATHER}, {"name": "book_hotel", "inputSchema": HOTEL}])
PLANS = [
    [{"toolName": "get_weather", "input": {"city": "Paris"}}],
    [
        {"toolName": "get_weather", "input": {"city": "Paris"}},
        {"toolName": "book_hotel", "input": {"nights": 2, "breakfast": True}},
    ],
]


@pytest.mark.parametrize(
    "raw, normalized",
    [
        (
            {"type": "tool-call", "toolCallId": "c1", "toolName": "get_weather", "input": {"city": "Paris"}},
            {"toolName": "get_weather", "input": {"city": "Paris"}, "valid": True},
        ),  # AI SDK v5+
        (
            {"type": "tool-call", "toolCallId": "c1", "toolName": "get_weather", "args": {"city": "Paris"}},
            {"toolName": "get_weather", "input": {"city": "Paris"}, "valid": True},
        ),  # AI SDK v4
        (
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
            },
            {"toolName": "get_weather", "input": {"city": "Paris"}, "valid": True},
        ),  # OpenAI chat completions
        (
            {"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}},
            {"toolName": "get_weather", "input": None, "valid": False},
        ),  # truncated JSON string
        (
            {"type": "function", "function": {"name": "get_weather", "arguments": "[1, 2]"}},
            {"toolName": "get_weather", "input": [1, 2], "valid": False},
        ),  # parses, but not an object
        (
            {"toolName": "get_weather", "input": "{\"city\": \"Paris\"}"},
            {"toolName": "get_weather", "input": {"city": "Paris"}, "valid": True},
        ),  # JSON string input
        ({"toolName": "get_weather"}, {"toolName": "get_weather", "input": None, "valid": False}),
        (
            {"type": "tool_use", "id": "t", "name": "get_weather", "input": {"city": "Paris"}},
            {"toolName": "get_weather", "input": {"city": "Paris"}, "valid": True},
        ),  # Anthropic content block
        (
            {"type": "function_call", "name": "get_weather", "arguments": "{}"},
            {"toolName": "get_weather", "input": {}, "valid": True},
        ),  # OpenAI Responses
        ({"foo": 1}, {"toolName": None, "input": None, "valid": False}),
        ("get_weather", {"toolName": None, "input": None, "valid": False}),
        (
            {"toolName": "Ünïcode", "input": {"q": "日本"}},
            {"toolName": "Ünïcode", "input": {"q": "日本"}, "valid": True},
        ),
    ],
)
def test_normalize_tool_call(raw, normalized):
    assert normalize_tool_call(raw) == normalized


def test_normalize_keeps_order_and_handles_none():
    calls = [{"toolName": "a", "input": {}}, {"function": {"name": "b", "arguments": "{}"}}]
    assert [c["toolName"] for c in normalize_tool_calls(calls)] == ["a", "b"]
    assert normalize_tool_calls(None) == [] and normalize_tool_calls([]) == []


@pytest.mark.parametrize(
    "a, b, equal",
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, None, True),
        ("1", 1, False),
        ({"a": [1, {"b": True}]}, {"a": [1, {"b": True}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
        ({"x": 1, "y": 2}, {"y": 2, "x": 1}, True),
    ],
)
def test_json_equal(a, b, equal):
    assert json_equal(a, b) is equal


def grade_calls(raw_calls, *, tools=("get_weather", "book_hotel"), plans=PLANS, schemas=SCHEMAS):
    spec = {"kind": "tool_call_syntax", "version": 1, "alternatives": plans}
    evaluate = prepare(spec, Preparation(case_tools=list(tools), tool_schemas=schemas))
    return evaluate(normalize_tool_calls(raw_calls))


W_PARIS = {"toolName": "get_weather", "input": {"city": "Paris"}}
HOTEL_OK = {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 2, "breakfast": True}}


@pytest.mark.parametrize(
    "calls, outcome, message",
    [
        ([W_PARIS], "pass", "match plan 1 of 2"),
        (
            [{"toolName": "get_weather", "input": {"city": "Paris", "unit": "C"}}],
            "pass",
            "plan 1",
        ),  # extra key not in the plan
        ([W_PARIS, HOTEL_OK], "pass", "match plan 2 of 2"),
        (
            [{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}],
            "pass",
            "plan 1",
        ),
        (
            [{"toolName": "get_weather", "input": {"city": "paris"}}],
            "fail",
            "input.city is \"paris\", expected \"Paris\"",
        ),
        ([], "fail", "expects 1 call, got 0"),
        ([HOTEL_OK, W_PARIS], "fail", "call 1 should be get_weather, got book_hotel"),
        (
            [W_PARIS, {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 2, "breakfast": 1}}],
            "fail",
            "input.breakfast: 1 is not of type 'boolean'",
        ),  # schema: 1 is not a boolean
        (
            [W_PARIS, {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 0, "breakfast": True}}],
            "fail",
            "input.nights: 0 is less than the minimum of 1",
        ),
        ([{"toolName": "get_weather", "input": {}}], "fail", "'city' is a required property"),
        (
            [{"toolName": "get_weather", "input": {"city": "Paris", "zip": "75"}}],
            "fail",
            "Additional properties are not allowed",
        ),
        (
            [{"toolName": "get_weather", "input": "{\"city\":"}],
            "fail",
            "input must be a JSON object, found unparseable or missing",
        ),
        ([{"toolName": "get_weather", "input": [1]}], "fail", "found a JSON array"),
        ([{"toolName": "send_email", "input": {}}], "fail", "unknown tool 'send_email'"),
        ([{"nothing": True}], "fail", "not a recognizable tool call"),
    ],
)
def test_tool_call_syntax(calls, outcome, message):
    result = grade_calls(calls)
    assert result[0] == outcome, result
    assert message in result[2], result[2]
    assert result[1] == (1.0 if outcome == "pass" else 0.0)


def test_plan_booleans_are_not_numbers():
    result = grade_calls(
        [W_PARIS, {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 2.0, "breakfast": True}}]
    )
    assert result[0] == "pass"  # 2.0 == 2 as JSON numbers, and the schema accepts 2.0 as an integer


def test_tool_outside_the_case_tools_is_unknown():
    result = grade_calls([W_PARIS, HOTEL_OK], tools=("get_weather",))
    assert result[0] == "fail" and "unknown tool 'book_hotel' (the case's tools: get_weather)" in result[2]


def test_broken_schema_in_release_is_an_error_not_a_model_failure():
    broken = ToolSchemas([{"name": "get_weather", "inputSchema": {"type": "objekt"}}])
    result = grade_calls([W_PARIS], tools=("get_weather",), plans=[[{"toolName": "get_weather"}]], schemas=broken)
    assert result[0] == "error" and result[1] is None and "invalid" in result[2]


def test_remembered_validation_only_shares_identical_inputs():
    schemas = ToolSchemas([{"name": "book_hotel", "inputSchema": HOTEL}])
    plans = [[{"toolName": "book_hotel"}]]
    bad = {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 2, "breakfast": 1}}
    good = {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 2, "breakfast": True}}
    for _ in range(2):  # the second round is answered from the remembered results
        first = grade_calls([bad], tools=("book_hotel",), plans=plans, schemas=schemas)
        assert first[0] == "fail" and "input.breakfast: 1 is not of type 'boolean'" in first[2]
        assert grade_calls([good], tools=("book_hotel",), plans=plans, schemas=schemas)[0] == "pass"
        # 2.5 and 2 are different inputs: 2.5 is not an integer
        half = {"toolName": "book_hotel", "input": {"city": "Paris", "nights": 2.5, "breakfast": True}}
        assert grade_calls([half], tools=("book_hotel",), plans=plans, schemas=schemas)[0] == "fail"
