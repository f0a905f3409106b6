"""The built-in evaluators of SPEC §4, graded in Python.

`prepare(spec, case_tools, schemas)` turns a case's declarative spec into a
grader once (normalizing expected values up front); the grader takes the
response's output and normalized tool calls and returns
`(outcome, score, message, details)` with outcome "pass" or "fail" (or
"error" when the release itself cannot be used, e.g. a broken tool schema).
"""

from __future__ import annotations

from typing import Any, Callable

from trunchbull.evaluators.gsm8k import extract_answer
from trunchbull.evaluators.normalize import normalize_answer
from trunchbull.evaluators.specs import gsm8k_expected
from trunchbull.evaluators.toolcalls import ToolCallSyntax, ToolSchemas

Result = tuple[str, "float | None", str, Any]
Grader = Callable[[str, list], Result]

_PREVIEW = 60


def preview(text: str, limit: int = _PREVIEW) -> str:
    """A short quoted excerpt for messages."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(text)


def _non_empty(spec: dict) -> Grader:
    def grade(output: str, calls: list) -> Result:
        if output.strip():
            return "pass", 1.0, "the output is not empty", None
        return "fail", 0.0, "the output is empty or only whitespace" if output else "the output is empty", None

    return grade


def _exact(spec: dict) -> Grader:
    expected = spec["expected"]
    pass_message = f"the trimmed output equals {preview(expected)}"

    def grade(output: str, calls: list) -> Result:
        trimmed = output.strip()
        if trimmed == expected:
            return "pass", 1.0, pass_message, None
        if trimmed.casefold() == expected.casefold():
            why = "differs only in letter case"
        elif " ".join(trimmed.split()) == " ".join(expected.split()):
            why = "differs only in inner whitespace"
        else:
            why = f"is {preview(trimmed)}"
        return "fail", 0.0, f"expected exactly {preview(expected)}; the trimmed output {why}", None

    return grade


def _contains(spec: dict) -> Grader:
    needle = spec["expected"].strip().casefold()
    pass_message = f"the output contains {preview(spec['expected'].strip())} (ignoring case)"
    fail_message = f"the output does not contain {preview(spec['expected'].strip())} (ignoring case)"

    def grade(output: str, calls: list) -> Result:
        if needle in output.casefold():
            return "pass", 1.0, pass_message, None
        return "fail", 0.0, fail_message, None

    return grade


# ASCII bytes that are not letters or digits (punctuation, symbols, whitespace,
# control characters) → space; `_` is left alone (see _normalize_output)
_ASCII_NOT_ALNUM = bytes(c if chr(c).isalnum() or c == 0x5F or c > 0x7F else 0x20 for c in range(256))


def _normalize_output(text: str) -> str:
    """normalize_answer(text), with a fast path for ASCII text without `_`
    (the common case): NFKC changes no ASCII character, casefold is lower,
    and each run of non-alphanumeric characters becomes one space, trimmed —
    exactly what the regex of normalize_answer does when there is no `_` (a
    run of `_` next to punctuation gives two spaces there, so text with `_`
    always takes the general path). Done on bytes: str.translate is slower."""
    if text.isascii() and "_" not in text:
        return b" ".join(text.encode().lower().translate(_ASCII_NOT_ALNUM).split()).decode()
    return normalize_answer(text)


def _answer_bank(spec: dict) -> Grader:
    answers = [(a, _normalize_output(a)) for a in spec["answers"]]
    forbidden = [(a, norm) for a in spec.get("forbiddenAnswers") or [] if (norm := _normalize_output(a))]

    def grade(output: str, calls: list) -> Result:
        normalized = _normalize_output(output)
        for original, norm in forbidden:
            if norm in normalized:
                return (
                    "fail",
                    0.0,
                    f"the output contains the forbidden answer {preview(original)}",
                    {"forbidden": original},
                )
        for original, norm in answers:
            if norm in normalized:
                return "pass", 1.0, f"the output contains the answer {preview(original)}", {"matched": original}
        return (
            "fail",
            0.0,
            "the output contains none of the answers "
            + ", ".join(preview(a, 30) for a, _ in answers[:5])
            + (" …" if len(answers) > 5 else ""),
            None,
        )

    return grade


_WHERE = {"after ####": "the first number after the last ####", "last number": "the last number in the output"}


def _gsm8k(spec: dict) -> Grader:
    expected = gsm8k_expected(spec["expected"])
    if expected is None:  # the compiler guarantees a normalized string; be safe on hand-edited releases
        raise ValueError(f"gsm8k expected {spec['expected']!r} is not a normalized number")

    def grade(output: str, calls: list) -> Result:
        answer, raw, method = extract_answer(output)
        if answer is None:
            return "fail", 0.0, f"no number in the output (expected {expected})", {"extracted": None, "method": method}
        details = {"extracted": answer, "raw": raw, "method": method}
        if answer == expected:
            return "pass", 1.0, f"{_WHERE[method]} is {answer}, as expected", details
        return "fail", 0.0, f"{_WHERE[method]} is {answer} (from {raw!r}), expected {expected}", details

    return grade


def _tool_call_syntax(spec: dict, case_tools: list, schemas: ToolSchemas) -> Grader:
    evaluator = ToolCallSyntax(spec, case_tools, schemas)

    def grade(output: str, calls: list) -> Result:
        return evaluator.grade(calls)

    return grade


_SIMPLE = {
    "non_empty": _non_empty,
    "exact": _exact,
    "contains": _contains,
    "answer_bank": _answer_bank,
    "gsm8k": _gsm8k,
}
KINDS = (*_SIMPLE, "tool_call_syntax")


def prepare(spec: dict, case_tools: list | None = None, schemas: ToolSchemas | None = None) -> Grader:
    """A grader for one declarative spec. Raises ValueError for a spec that is
    not a valid built-in spec (the release is then unusable)."""
    kind = spec.get("kind")
    try:
        if kind == "tool_call_syntax":
            if not isinstance(spec.get("alternatives"), list):
                raise ValueError("tool_call_syntax needs alternatives")
            return _tool_call_syntax(spec, list(case_tools or []), schemas or ToolSchemas([]))
        if kind not in _SIMPLE:
            raise ValueError(f"unknown evaluator kind {kind!r}")
        return _SIMPLE[kind](spec)
    except KeyError as err:
        raise ValueError(f"evaluator {kind!r}: missing {err}") from None
