"""What the grader hands each evaluator (evaluators/inputs.py): the sample
inputs its kind reads, taken from a case and its response, and the
preparation inputs, with the part of the prepared-evaluator cache's key that
each of those depends on. One table per sort of input: adding an input is
adding its row here and its name there."""

from __future__ import annotations

from typing import Any, Callable

from trunchbull.evaluators.inputs import (
    CASE_DATA,
    CASE_TOOLS,
    FINISH_REASON,
    MODEL,
    NORMALIZED_TOOL_CALLS,
    OUTPUT,
    SAMPLE_INPUTS,
    TOOL_CALLS,
    USAGE,
    Preparation,
)
from trunchbull.evaluators.registry import Evaluate, Kind, Outcome
from trunchbull.evaluators.tool_calls import ToolSchemas, normalize_tool_calls
from trunchbull.grading.responses import Response
from trunchbull.release.tool_offers import entries_key

# sample input → its value for a case and its response
SAMPLE_VALUE: dict[str, Callable[[dict, Response], Any]] = {
    OUTPUT: lambda case, response: response.output,
    CASE_DATA: lambda case, response: case.get("data"),
    TOOL_CALLS: lambda case, response: response.tool_calls,
    NORMALIZED_TOOL_CALLS: lambda case, response: normalize_tool_calls(response.tool_calls),
    FINISH_REASON: lambda case, response: response.finish_reason,
    USAGE: lambda case, response: response.usage,
}
assert tuple(SAMPLE_VALUE) == SAMPLE_INPUTS

# preparation input → what of a case a prepared evaluator depends on through it (its part of
# the cache key; None: the same for every case of a grading)
PREPARATION_KEY: dict[str, Callable[[dict], Any] | None] = {
    CASE_TOOLS: lambda case: entries_key(case.get("tools") or ()),
    MODEL: None,  # one judge per grading
}

# A prepared evaluator bound to its inputs: (case, response) → Outcome
Bound = Callable[[dict, Response], Outcome]


def bind(kind: Kind, evaluate: Evaluate) -> Bound:
    """`evaluate` called with the sample inputs `kind` reads, in its order."""
    getters = [SAMPLE_VALUE[name] for name in kind.sample_inputs]
    if len(getters) == 1:  # most kinds read one input (the output): no argument list per sample
        (get,) = getters
        return lambda case, response: evaluate(get(case, response))
    return lambda case, response: evaluate(*[get(case, response) for get in getters])


def case_keys(kind: Kind) -> list[Callable[[dict], Any]]:
    """What of a case `kind`'s prepared evaluator depends on, besides the spec (empty: only the spec)."""
    keys = [PREPARATION_KEY[name] for name in kind.preparation_inputs]
    return [key for key in keys if key is not None]


def preparation(kind: Kind, case: dict, schemas: ToolSchemas, judge_model: str | None) -> Preparation:
    """The preparation inputs `kind` reads, and only those."""
    reads = kind.preparation_inputs
    tools = CASE_TOOLS in reads
    return Preparation(
        case_tools=list(case.get("tools") or ()) if tools else None,
        tool_schemas=schemas if tools else None,
        judge_model=judge_model if MODEL in reads else None,
    )
