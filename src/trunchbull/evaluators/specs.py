"""Compile-time validation of declarative evaluator specs (SPEC §4)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from trunchbull.common.ids import json_type, suggest
from trunchbull.evaluators.normalize import GSM8K_NUMBER, normalize_answer

KINDS = ("non_empty", "exact", "contains", "answer_bank", "gsm8k", "tool_call_syntax")
KEYS = {
    "non_empty": {"kind"},
    "exact": {"kind", "expected"},
    "contains": {"kind", "expected"},
    "answer_bank": {"kind", "answers", "forbiddenAnswers"},
    "gsm8k": {"kind", "expected"},
    "tool_call_syntax": {"kind", "version", "alternatives"},
}


@dataclass(frozen=True)
class SpecProblem:
    path: str  # relative to the spec, "" for the spec itself
    code: str
    message: str
    hint: str | None = None


def _join(path: str, key: str | int) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)


def validate_spec(
    spec: object, *, case_tools: list[str] | None = None, expected_from_rows: bool = False
) -> tuple[dict | None, list[SpecProblem]]:
    """Check a declarative spec; return it normalized (gsm8k numbers as strings)
    and the problems found. `case_tools`: the tools the case may call, for
    tool_call_syntax (None skips that check). `expected_from_rows`: a CSV
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
    kind = spec.get("kind")
    if kind not in KINDS:
        if kind == "custom":
            message = "`custom` is not a declarative kind"
            hint = "write the eval's evaluate as a function to use a custom evaluator"
        else:
            near = suggest(kind, list(KINDS)) if isinstance(kind, str) else None
            message = f"unknown evaluator kind {kind!r}" if kind is not None else "the evaluator spec has no kind"
            hint = f"did you mean {near!r}? " if near else ""
            hint += "kinds: " + ", ".join(KINDS)
        return None, [SpecProblem("kind", "evaluator-kind", message, hint)]
    for key in () if KEYS[kind].issuperset(spec) else sorted(set(spec) - KEYS[kind]):
        near = suggest(key, sorted(KEYS[kind]))
        problems.append(
            SpecProblem(
                key,
                "evaluator-unknown-key",
                f"unknown key {key!r} for evaluator {kind}",
                f"did you mean {near!r}?" if near else f"allowed keys: {', '.join(sorted(KEYS[kind]))}",
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
    check = _CHECKS.get(kind)
    if check:
        check(spec, out, problems, case_tools)
    return out, problems


def _expected_string(spec: dict, problems: list[SpecProblem], *, strict_whitespace: bool) -> None:
    expected = spec.get("expected")
    if "expected" not in spec:
        problems.append(
            SpecProblem(
                "",
                "evaluator-missing-expected",
                f"evaluator {spec['kind']} requires expected",
                f'write {{ kind: "{spec["kind"]}", expected: "…" }}',
            )
        )
    elif not isinstance(expected, str) or not expected.strip():
        problems.append(
            SpecProblem(
                "expected",
                "evaluator-expected",
                "expected must be a non-empty string",
                "use non_empty to accept any answer",
            )
        )
    elif strict_whitespace and expected != expected.strip():
        problems.append(
            SpecProblem(
                "expected",
                "evaluator-expected",
                "expected of an exact evaluator must not start or end with whitespace",
                "exact compares the trimmed output, so surrounding whitespace can never match",
            )
        )


def _check_exact(spec, out, problems, case_tools):
    _expected_string(spec, problems, strict_whitespace=True)


def _check_contains(spec, out, problems, case_tools):
    _expected_string(spec, problems, strict_whitespace=False)


def _check_answer_bank(spec, out, problems, case_tools):
    answers = spec.get("answers")
    normalized_answers: dict[str, int] = {}
    if not isinstance(answers, list) or not answers:
        problems.append(
            SpecProblem(
                "answers",
                "evaluator-answers",
                "answers must be a non-empty array of strings",
                'for example answers: ["30 days", "thirty days"]',
            )
        )
    else:
        for i, answer in enumerate(answers):
            if not isinstance(answer, str) or not normalize_answer(answer):
                problems.append(
                    SpecProblem(
                        f"answers[{i}]",
                        "evaluator-answers",
                        "every answer must be a string with at least one letter or digit",
                        "answers are compared after removing punctuation, so punctuation alone can never match",
                    )
                )
            else:
                normalized_answers.setdefault(normalize_answer(answer), i)
    forbidden = spec.get("forbiddenAnswers", [])
    if not isinstance(forbidden, list):
        problems.append(
            SpecProblem(
                "forbiddenAnswers",
                "evaluator-answers",
                "forbiddenAnswers must be an array of strings",
                'for example forbiddenAnswers: ["60 days"]',
            )
        )
        return
    for i, answer in enumerate(forbidden):
        if not isinstance(answer, str) or not normalize_answer(answer):
            problems.append(
                SpecProblem(
                    f"forbiddenAnswers[{i}]",
                    "evaluator-answers",
                    "every forbidden answer must be a string with at least one letter or digit",
                    "answers are compared after removing punctuation, so punctuation alone can never match",
                )
            )
        elif normalize_answer(answer) in normalized_answers:
            problems.append(
                SpecProblem(
                    f"forbiddenAnswers[{i}]",
                    "evaluator-answer-forbidden",
                    f"{answer!r} is both an answer and a forbidden answer",
                    "forbidden answers are checked first, so this answer could never pass: remove one of the two",
                )
            )


def gsm8k_expected(value: object) -> str | None:
    """The normalized number string of a gsm8k expected value, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return None
        text = format(Decimal(repr(value)) if isinstance(value, float) else Decimal(value), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if text == "-0":
            text = "0"
        return text
    if isinstance(value, str) and GSM8K_NUMBER.fullmatch(value) and value != "-0":
        return value
    return None


def _check_gsm8k(spec, out, problems, case_tools):
    if "expected" not in spec:
        problems.append(SpecProblem("", "evaluator-missing-expected", "evaluator gsm8k requires expected"))
        return
    normalized = gsm8k_expected(spec["expected"])
    if normalized is None:
        problems.append(
            SpecProblem(
                "expected",
                "evaluator-gsm8k-expected",
                f"expected {spec['expected']!r} is not a normalized number",
                "write it like \"41\", \"-3\" or \"2.5\": no separators, units, '+' or trailing zeros",
            )
        )
    else:
        out["expected"] = normalized


def _check_tool_call_syntax(spec, out, problems, case_tools):
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
                        _join(step_path, key),
                        "evaluator-unknown-key",
                        f"unknown key {key!r} in a plan step",
                        "a step has toolName and optional input",
                    )
                )
            if "input" in step and not isinstance(step["input"], dict):
                problems.append(
                    SpecProblem(
                        _join(step_path, "input"),
                        "evaluator-plans",
                        "a plan step's input must be an object",
                        "input lists the argument values the call must have; leave it out to accept any input",
                    )
                )
            if case_tools is not None and step["toolName"] not in case_tools:
                available = ", ".join(case_tools) if case_tools else "none"
                problems.append(
                    SpecProblem(
                        _join(step_path, "toolName"),
                        "evaluator-unknown-tool",
                        f"plan step calls {step['toolName']!r}, which is not among the case's tools ({available})",
                        "add the tool to the case's or eval's tools, or fix the name",
                    )
                )


_CHECKS = {
    "exact": _check_exact,
    "contains": _check_contains,
    "answer_bank": _check_answer_bank,
    "gsm8k": _check_gsm8k,
    "tool_call_syntax": _check_tool_call_syntax,
}
