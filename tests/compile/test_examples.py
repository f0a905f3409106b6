"""The shipped examples build, with the compiled cases the docs promise."""

from __future__ import annotations

import orjson

from tests.conftest import EXAMPLES, read_cases, run_cli


def test_support_example_inherits_eval_fields_and_lists_tool_schema(tmp_path):
    out = tmp_path / "release"
    result = run_cli("build", EXAMPLES / "support", "-o", out)
    assert result.code == 0, result.stderr
    cases = {c["id"]: c for c in read_cases(out)}
    standard = cases["refunds.standard"]
    assert standard["title"] == "Refund policy — refunds.standard"
    assert standard["systemPrompt"] == "Answer briefly."
    assert standard["tools"] == ["lookup_policy"]
    assert standard["evaluate"] == {"kind": "contains", "expected": "30 days"}
    assert standard["description"] == "Checks policy accuracy."
    manifest = orjson.loads((out / "release.json").read_bytes())
    [tool] = manifest["tools"]
    assert tool["name"] == "lookup_policy"
    assert tool["inputSchema"]["properties"] == {"topic": {"type": "string"}}
    assert tool["inputSchema"]["required"] == ["topic"]
    assert (out / tool["bundle"]).is_file()
    assert manifest["dependencies"]["locked"] is True
    assert (out / "package-lock.json").is_file()


def test_minimal_example_one_case_eval(tmp_path):
    out = tmp_path / "release"
    result = run_cli("build", EXAMPLES / "minimal", "-o", out)
    assert result.code == 0, result.stderr
    [case] = read_cases(out)
    assert case["id"] == "answer" and case["evalId"] == "answer"
    assert case["title"] == "The answer"
    assert case["tools"] == [] and case["systemPrompt"] is None and case["data"] is None
    manifest = orjson.loads((out / "release.json").read_bytes())
    assert manifest["title"] == "minimal" and manifest["version"] is None
    assert verify_ok(out)


def verify_ok(out) -> bool:
    return run_cli("verify", out).code == 0
