"""Release-wide check of the tool inputs evaluator specs name (a kind's `tool_inputs`, such as
tool_call_syntax's plan steps) against the tools' input schemas (a plan value the schema
rejects can never match any call: evaluators/plan_schema.py), reported at the plan's literal."""

from __future__ import annotations

from pathlib import Path

from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.common.diagnostics import Diagnostics
from trunchbull.evaluators.plan_schema import plan_input_problems
from trunchbull.compile.locate import find_in_line, refine

CODE = "evaluator-plan-schema"


def check_plan_inputs(ev: CompiledEval, schemas: dict[str, object], root: Path, diags: Diagnostics) -> None:
    for offered, tool, plan_input, where in ev.plan_inputs:
        if tool not in schemas:  # an unknown tool is reported on its own
            continue
        for key, why in plan_input_problems(schemas[tool], plan_input):
            at = where.at(key)
            line, col = at.line, at.col
            if at.file == ev.module:
                line, col = refine(root / at.file, line, col, at.path)
            elif line is not None:  # a data-file line: the key on it
                col = find_in_line(root / at.file, line, key) or col
            named = repr(offered) if offered == tool else f"{offered!r} (tool {tool!r})"
            diags.error(
                CODE,
                f"{at.label()}this plan value can never be valid for {named}: {why}",
                file=at.file,
                line=line,
                col=col,
                hint="every call's input must be valid against the tool's input schema, so no call can match "
                "this plan: fix the key or the value (the schema is the tool's inputSchema in release.json)",
            )
