"""What the grader hands each evaluator (evaluators/inputs.py): the sample
inputs its kind reads, taken from a case and its response, and the
preparation inputs, with the part of the prepared-evaluator cache's key that
each of those depends on. One table per sort of input: adding an input is
adding its row here and its name there."""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable, Mapping

from trunchbull.evaluators.inputs import (
    CASE_DATA,
    CASE_TOOLS,
    FINISH_REASON,
    MODEL,
    NORMALIZED_TOOL_CALLS,
    OUTPUT,
    PROMPT,
    RELEASE_FILES,
    TOOL_CALLS,
    USAGE,
    Preparation,
)
from trunchbull.evaluators.registry import Kind, Outcome, prepare_kind
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
    PROMPT: lambda case, response: case["prompt"],
}
# the sample inputs that are a field of the response as it is (read with one C call)
RESPONSE_FIELD = {OUTPUT: "output", TOOL_CALLS: "tool_calls", FINISH_REASON: "finish_reason", USAGE: "usage"}

# preparation input → what of a case a prepared evaluator depends on through it (its part of
# the cache key; None: the same for every case of a grading)
PREPARATION_KEY: dict[str, Callable[[dict], Any] | None] = {
    CASE_TOOLS: lambda case: entries_key(case.get("tools") or ()),
    MODEL: None,  # one judge per grading
    RELEASE_FILES: None,  # one release per grading
}

# A prepared evaluator and how the grader calls it, (evaluate, field): a kind that reads one
# field of the response as it is (most read the output alone) is called as
# `evaluate(field(response))`, with no function of ours in between; any other, with field
# None, through a function of (case, response) that passes the inputs it reads.
Bound = tuple[Callable[..., Outcome], "attrgetter | None"]


class KindInputs:
    """What the grader hands one kind, worked out once per grading: the
    getters of the sample inputs it reads, in its order; the preparation
    inputs it reads, and what of a case they depend on (the part of the
    prepared-evaluator cache's key besides the spec; empty: the spec alone)."""

    __slots__ = ("kind", "getters", "field", "case_keys", "case_tools", "tool_schemas", "judge_model", "files")

    def __init__(
        self, kind: Kind, schemas: ToolSchemas, judge_model: str | None, files: Mapping[str, bytes] | None = None
    ):
        self.kind = kind
        reads = kind.sample_inputs
        self.getters = tuple(SAMPLE_VALUE[name] for name in reads)
        one_field = len(reads) == 1 and reads[0] in RESPONSE_FIELD
        self.field = attrgetter(RESPONSE_FIELD[reads[0]]) if one_field else None
        keys = (PREPARATION_KEY[name] for name in kind.preparation_inputs)
        self.case_keys = tuple(key for key in keys if key is not None)
        self.case_tools = CASE_TOOLS in kind.reads
        self.tool_schemas = schemas if self.case_tools else None
        self.judge_model = judge_model if MODEL in kind.reads else None
        self.files = files if RELEASE_FILES in kind.reads else None

    def prepare(self, spec: dict, case: dict) -> Bound:
        """The kind's evaluator for `spec`, prepared with the preparation inputs it reads (and only
        those) and bound to the sample inputs it reads. Raises ValueError for a spec it refuses."""
        tools = list(case.get("tools") or ()) if self.case_tools else None
        evaluate = prepare_kind(self.kind, spec, Preparation(tools, self.tool_schemas, self.judge_model, self.files))
        if self.field is not None:
            return evaluate, self.field
        getters = self.getters
        if len(getters) == 1:
            (get,) = getters
            return (lambda case, response: evaluate(get(case, response))), None
        return (lambda case, response: evaluate(*[get(case, response) for get in getters])), None

    def key_of(self, case: dict) -> Any:
        """What of `case` its prepared evaluator depends on (with `case_keys`)."""
        keys = self.case_keys
        return keys[0](case) if len(keys) == 1 else tuple(key(case) for key in keys)
