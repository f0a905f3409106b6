"""`{ kind: "tool_call_syntax", version: 1, alternatives: [plan, …] }`: every
tool call is well formed (a known tool, an input object valid against the
tool's JSON Schema) and the normalized calls match one of the plans."""

from __future__ import annotations

from typing import Any, Iterator

from trunchbull.common.ids import suggest
from trunchbull.evaluators.inputs import CASE_TOOLS, NORMALIZED_TOOL_CALLS, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind
from trunchbull.evaluators.spec_checks import SpecProblem, join
from trunchbull.evaluators.tool_calls import ToolSchemas, json_equal, jsonschema_lib, short
from trunchbull.release.tool_offers import tools_by_offered_name


def check(spec, out, problems, case_tools):
    if spec.get("version") != 1 or isinstance(spec.get("version"), bool):
        problems.append(
            SpecProblem(
                "version",
                "evaluator-version",
                "tool_call_syntax requires version: 1",
                "add version: 1 (the only version of the plan format)",
            )
        )
    plans = spec.get("alternatives")
    if not isinstance(plans, list) or not plans:
        problems.append(
            SpecProblem(
                "alternatives",
                "evaluator-plans",
                "alternatives must be a non-empty array of plans",
                'for example alternatives: [[{ toolName: "lookup_policy", input: { topic: "refunds" } }]]',
            )
        )
        return
    for i, plan in enumerate(plans):
        plan_path = f"alternatives[{i}]"
        if not isinstance(plan, list):
            problems.append(
                SpecProblem(
                    plan_path,
                    "evaluator-plans",
                    "a plan must be an array of { toolName, input? } steps",
                    "each alternative is one acceptable sequence of tool calls",
                )
            )
            continue
        for j, step in enumerate(plan):
            step_path = f"{plan_path}[{j}]"
            if not isinstance(step, dict) or not isinstance(step.get("toolName"), str):
                problems.append(
                    SpecProblem(
                        step_path,
                        "evaluator-plans",
                        "a plan step must be an object with a string toolName",
                        'for example { toolName: "lookup_policy", input: { topic: "refunds" } }',
                    )
                )
                continue
            for key in sorted(set(step) - {"toolName", "input"}):
                problems.append(
                    SpecProblem(
                        join(step_path, key),
                        "evaluator-unknown-key",
                        f"unknown key {key!r} in a plan step",
                        "a step has toolName and optional input",
                    )
                )
            if "input" in step and not isinstance(step["input"], dict):
                problems.append(
                    SpecProblem(
                        join(step_path, "input"),
                        "evaluator-plans",
                        "a plan step's input must be an object",
                        "input lists the argument values the call must have; leave it out to accept any input",
                    )
                )
            if case_tools is not None and step["toolName"] not in case_tools:
                available = ", ".join(case_tools) if case_tools else "none"
                near = suggest(step["toolName"], case_tools)
                problems.append(
                    SpecProblem(
                        join(step_path, "toolName"),
                        "evaluator-unknown-tool",
                        f"plan step calls {step['toolName']!r}, which is not among the case's tools ({available})",
                        (f"did you mean {near!r}? " if near else "")
                        + "add the tool to the case's or eval's tools, or fix the name",
                    )
                )


class ToolCallSyntax:
    """A prepared `tool_call_syntax` evaluator for one case. `case_tools`: the case's tools
    entries (names, or {tool, as} for a tool offered under another name): calls and plans use
    the offered names, schemas are the release tools'."""

    __slots__ = ("plans", "case_tools", "release_tool", "schemas")

    def __init__(self, spec: dict, case_tools: list, schemas: ToolSchemas):
        self.plans = spec["alternatives"]
        self.release_tool = tools_by_offered_name(case_tools)
        self.case_tools = list(self.release_tool)
        self.schemas = schemas

    def grade(self, calls: list[dict]) -> tuple[str, float | None, str, Any]:
        problems: list[str] = []
        for i, call in enumerate(calls, 1):
            name = call["toolName"]
            if name is None:
                problems.append(f"call {i} is not a recognizable tool call (no toolName, function.name or name)")
                continue
            if name not in self.release_tool:
                available = ", ".join(self.case_tools) or "none"
                problems.append(f"call {i} calls unknown tool {name!r} (the case's tools: {available})")
                continue
            if not call["valid"]:
                what = "unparseable or missing" if call["input"] is None else f"a JSON {_json_kind(call['input'])}"
                problems.append(f"call {i} ({name}): input must be a JSON object, found {what}")
                continue
            tool = self.release_tool[name]
            if tool not in self.schemas:
                return "error", None, f"tool {tool!r} is not in the release's tool set", None
            validator, broken = self.schemas.validator(tool)
            if broken:
                return "error", None, broken, None
            try:
                problem = self.schemas.problem(tool, validator, call["input"])
            except (
                jsonschema_lib.Unresolvable,
                jsonschema_lib.exceptions.RefResolutionError,
            ) as err:  # a $ref the schema cannot resolve
                return "error", None, f"the JSON Schema of tool {tool!r} cannot be used: {err}", None
            if problem:
                problems.append(f"call {i} ({name}) does not match the tool's input schema: {problem}")
        if problems:
            message = "malformed tool calls: " + "; ".join(problems)
            return "fail", 0.0, message, {"problems": problems}
        mismatches: list[str] = []
        for p, plan in enumerate(self.plans, 1):
            why = _plan_mismatch(plan, calls)
            if why is None:
                return "pass", 1.0, f"tool calls match plan {p} of {len(self.plans)}", {"plan": p}
            mismatches.append(f"plan {p}: {why}")
        got = ", ".join(c["toolName"] for c in calls) or "no calls"
        return "fail", 0.0, f"tool calls ({got}) match no plan: " + "; ".join(mismatches), {"mismatches": mismatches}


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else type(value).__name__


def _plan_mismatch(plan: list[dict], calls: list[dict]) -> str | None:
    if len(plan) != len(calls):
        return f"expects {len(plan)} call{'s' if len(plan) != 1 else ''}, got {len(calls)}"
    for i, (step, call) in enumerate(zip(plan, calls), 1):
        if step["toolName"] != call["toolName"]:
            return f"call {i} should be {step['toolName']}, got {call['toolName']}"
        for key, want in (step.get("input") or {}).items():
            actual = call["input"]
            if key not in actual:
                return f"call {i} ({call['toolName']}) has no input.{key} (expected {short(want)})"
            if not json_equal(want, actual[key]):
                return f"call {i} ({call['toolName']}) input.{key} is {short(actual[key])}, expected {short(want)}"
    return None


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    if not isinstance(spec.get("alternatives"), list):
        raise ValueError("tool_call_syntax needs alternatives")
    schemas = preparation.tool_schemas if preparation.tool_schemas is not None else ToolSchemas([])
    return ToolCallSyntax(spec, preparation.case_tools or [], schemas).grade


def tool_inputs(spec: dict) -> Iterator[tuple[str, str, dict]]:
    """Each plan step's input: a value the tool's schema rejects can never match a call."""
    for i, plan in enumerate(spec["alternatives"]):
        for j, step in enumerate(plan):
            if step.get("input"):
                yield f"alternatives[{i}][{j}].input", step["toolName"], step["input"]


KIND = Kind(
    name="tool_call_syntax",
    order=6,
    keys=frozenset({"kind", "version", "alternatives"}),
    reads=(NORMALIZED_TOOL_CALLS, CASE_TOOLS),
    prepare=prepare,
    check=check,
    example={"kind": "tool_call_syntax", "version": 1, "alternatives": [[{"toolName": "lookup_policy"}]]},
    passes_when="every tool call is well formed (known tool, input a JSON object valid against the tool's JSON "
    "Schema) and the normalized calls match some plan: same length, same `toolName` at each position, and each "
    "`input` key the plan gives deep-equals the actual one",
    tool_inputs=tool_inputs,
)
