"""Which evaluator each case gets (SPEC §3.6): its own spec, its data-file
row's `expected` under the eval's kind, the eval's shared spec, or the eval
module's custom evaluator; each checked before it is kept."""

from __future__ import annotations

from typing import Callable

from trunchbull.compile.cases.fields import CaseDraft, Where
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.evaluators.inputs import CASE_TOOLS
from trunchbull.evaluators.registry import kinds
from trunchbull.evaluators.specs import validate_spec
from trunchbull.release.tool_offers import offered_names, tools_by_offered_name

Problem = Callable[[Where, str, str, "str | None"], None]  # (where, code, message, hint)


def _record_tool_inputs(result: CompiledEval, spec: dict, tools: list, where: Where) -> None:
    """Each tool input the spec names (its kind's `tool_inputs`), for the release-wide check
    against the tool's schema."""
    named = kinds()[spec["kind"]].tool_inputs
    if named is None:
        return
    release_tool = tools_by_offered_name(tools)
    for path, offered, tool_input in named(spec):
        if offered in release_tool:
            result.add_plan_input(offered, release_tool[offered], tool_input, where.at(path))


def case_evaluator(
    draft: CaseDraft,
    value: dict,
    result: CompiledEval,
    eval_spec: dict | None,
    tools: list,
    problem: Problem,
    custom_module: str | None,
) -> dict | None:
    """The checked evaluator spec of one case: its own, its row's (a data file's `expected`), its
    eval's, or the eval module's custom evaluator (`custom_module`: its bundle's name); None, with
    the problems reported, when it has none that is valid."""
    if draft.evaluate is not None:
        spec, problems = validate_spec(draft.evaluate, case_tools=offered_names(tools))
        for p in problems:
            problem(draft.where.at("evaluate").at(p.path), p.code, p.message, p.hint)
        if spec is not None and not problems:
            _record_tool_inputs(result, spec, tools, draft.where.at("evaluate"))
        return spec if not problems else None
    if "expected" in draft.extra and eval_spec is not None:
        return _row_spec(draft, eval_spec, problem)
    if eval_spec is not None:
        if CASE_TOOLS in kinds()[eval_spec["kind"]].reads:  # checked again against this case's tools
            _, problems = validate_spec(eval_spec, case_tools=offered_names(tools))
            for p in problems:
                problem(draft.where.at("evaluate").at(p.path), p.code, f"(inherited from the eval) {p.message}", p.hint)
            if problems:
                return None
            _record_tool_inputs(result, eval_spec, tools, (result.where or draft.where).at("evaluate"))
        return eval_spec
    if result.custom:
        assert custom_module is not None  # a module with an evaluator of its own was bundled
        return {"kind": "custom", "module": custom_module}
    if "evaluate" not in value:
        problem(
            draft.where,
            "case-no-evaluator",
            f"case {draft.id!r} has no evaluator",
            "give the case an evaluate spec, or the eval a shared evaluate",
        )
    return None


def _row_spec(draft: CaseDraft, eval_spec: dict, problem: Problem) -> dict | None:
    """A data-file row's spec: the eval's kind with the row's `expected`."""
    kind = eval_spec["kind"]
    expected = draft.extra["expected"]
    from_rows = kinds()[kind].from_rows if kind in kinds() else None
    if from_rows is None:
        return None
    if from_rows == "nothing":
        return {"kind": kind}
    if not expected:
        problem(
            draft.where,
            "csv-expected",
            f"row {draft.id!r} needs a non-empty expected for evaluator {kind}",
            "fill the expected column on every row",
        )
        return None
    spec, problems = validate_spec({"kind": kind, "expected": expected})
    for p in problems:
        problem(draft.where, p.code, f"expected: {p.message}", p.hint)
    return spec if not problems else None
