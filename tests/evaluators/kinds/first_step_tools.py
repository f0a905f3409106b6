"""`{ kind: "first_step_tools", tools: [name, …] }`: the tools called in the
model's first step are exactly `tools`, in order. A kind of the tests that
reads tool calls both ways: the raw calls (a run's carry `step`, the model
call that made them) and the normalized ones (their names), with the case's
tools for its compile-time check and its details."""

from __future__ import annotations

from trunchbull.evaluators.inputs import CASE_TOOLS, NORMALIZED_TOOL_CALLS, TOOL_CALLS, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind, Result
from trunchbull.evaluators.spec_checks import SpecProblem
from trunchbull.release.tool_offers import offered_names


def check(spec, out, problems, case_tools) -> None:
    tools = spec.get("tools")
    if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
        problems.append(SpecProblem("tools", "evaluator-tools", "tools must be an array of tool names"))
        return
    for i, name in enumerate(tools):
        if case_tools is not None and name not in case_tools:
            problems.append(
                SpecProblem(f"tools[{i}]", "evaluator-unknown-tool", f"{name!r} is not among the case's tools")
            )


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    expected = list(spec["tools"])
    offered = offered_names(preparation.case_tools or [])

    def grade(raw_calls: list, calls: list) -> Result:
        steps = [raw.get("step", 0) if isinstance(raw, dict) else None for raw in raw_calls]
        first = [call["toolName"] for call, step in zip(calls, steps) if step == 0]
        details = {"firstStep": first, "steps": steps, "offered": offered}
        if first == expected:
            return "pass", 1.0, f"the first step called {', '.join(first) or 'no tool'}", details
        return "fail", 0.0, f"the first step called {first}, expected {expected}", details

    return grade


KIND = Kind(
    name="first_step_tools",
    order=101,
    keys=frozenset({"kind", "tools"}),
    reads=(TOOL_CALLS, NORMALIZED_TOOL_CALLS, CASE_TOOLS),
    prepare=prepare,
    check=check,
    example={"kind": "first_step_tools", "tools": ["lookup_order"]},
    passes_when="the tools called in the first model step (raw calls' `step` 0) are exactly `tools`, in order",
)
