"""Compile-time validation of declarative evaluator specs (SPEC §4): the
shape every spec shares; each kind's own rules are in its module (registry.py)."""

from __future__ import annotations

from trunchbull.common.ids import json_type, suggest
from trunchbull.evaluators.inputs import CASE_TOOLS
from trunchbull.evaluators.registry import kinds
from trunchbull.evaluators.spec_checks import SpecProblem


def validate_spec(
    spec: object, *, case_tools: list[str] | None = None, expected_from_rows: bool = False
) -> tuple[dict | None, list[SpecProblem]]:
    """Check a declarative spec; return it normalized (gsm8k numbers as strings)
    and the problems found. `case_tools`: the tools the case may call, given
    to the checks of kinds that read them (CASE_TOOLS; None: not known). `expected_from_rows`: a CSV
    eval's spec, whose `expected` comes from each row."""
    problems: list[SpecProblem] = []
    if not isinstance(spec, dict):
        return None, [
            SpecProblem(
                "",
                "evaluator-invalid",
                f"an evaluator spec must be an object, found {json_type(spec)}",
                'for example evaluate: { kind: "contains", expected: "30 days" }',
            )
        ]
    known = kinds()
    kind = spec.get("kind")
    if not isinstance(kind, str) or kind not in known:
        if kind == "custom":
            message = "`custom` is not a declarative kind"
            hint = "write the eval's evaluate as a function to use a custom evaluator"
        else:
            near = suggest(kind, list(known)) if isinstance(kind, str) else None
            message = f"unknown evaluator kind {kind!r}" if kind is not None else "the evaluator spec has no kind"
            hint = f"did you mean {near!r}? " if near else ""
            hint += "kinds: " + ", ".join(known)
        return None, [SpecProblem("kind", "evaluator-kind", message, hint)]
    keys = known[kind].keys
    for key in () if keys.issuperset(spec) else sorted(set(spec) - keys):
        near = suggest(key, sorted(keys))
        problems.append(
            SpecProblem(
                key,
                "evaluator-unknown-key",
                f"unknown key {key!r} for evaluator {kind}",
                f"did you mean {near!r}?" if near else f"allowed keys: {', '.join(sorted(keys))}",
            )
        )
    out = dict(spec)
    if expected_from_rows:
        if "expected" in spec:
            problems.append(
                SpecProblem(
                    "expected",
                    "csv-evaluator-expected",
                    "a CSV eval's evaluator must not set expected: it comes from each row's expected column",
                    f"write {{ kind: \"{kind}\" }} and put expected in the CSV",
                )
            )
        return out, problems
    check = known[kind].check
    if check:
        check(spec, out, problems, case_tools if CASE_TOOLS in known[kind].reads else None)
    return out, problems
