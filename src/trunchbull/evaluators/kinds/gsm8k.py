"""`{ kind: "gsm8k", expected }` (SPEC §4): the extracted answer, normalized,
equals `expected`.

The extracted answer is the first number after the last `####` when the output
has a `####` followed by a number, else the last number in the output. A
number is an optional sign, an optional `$`, digits (plain, or grouped in
threes with commas), an optional fractional part and an optional `%`. This
avoids the known pitfalls of regex-based extraction:

* `#### $72` is 72 (the `$` is not part of the number);
* `18.00` equals `18` (trailing fractional zeros are dropped);
* `The answer is 72.` is 72 (a sentence period is never part of a number: a
  fractional part needs a digit after the dot);
* `...` and lone punctuation are not numbers (a number needs a digit);
* `1,2,3` is three numbers, not 123 (commas only group thousands);
* `3-5` is 3 and 5, not 3 and -5 (a sign must not follow a letter or digit).
"""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import Decimal
from typing import NamedTuple

from trunchbull.evaluators.normalize import GSM8K_NUMBER
from trunchbull.evaluators.inputs import OUTPUT, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind, Result
from trunchbull.evaluators.spec_checks import SpecProblem

# The digits of a number: every alternative starts with a digit or a dot, so
# the regex engine scans quickly; the optional sign and `$` before it are read
# by hand (see _read). Comma grouping must be exact (1-3 digits, then groups
# of three), else the digits are read as separate numbers.
_CORE = re.compile(r"(?:\.[0-9]+|[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)%?")
_MARKER = "####"
_SIGNS = "-+\u2212"


def _wordish(char: str) -> bool:
    return char.isalnum() or char in "._)]"


class Extraction(NamedTuple):
    answer: str | None  # normalized number string, None when no number was found
    raw: str | None  # the text the number was read from
    method: str  # "after ####" | "last number" | "none"


def normalize_number(sign: str, integer: str, fraction: str) -> str:
    """`-0012.500` → `-12.5`; `,` removed, no leading zeros, no trailing
    fractional zeros, no `+`, `-0` is `0`."""
    integer = integer.replace(",", "").lstrip("0") or "0"
    fraction = fraction[1:].rstrip("0") if fraction else ""
    text = f"{integer}.{fraction}" if fraction else integer
    if sign in ("-", "\u2212") and text != "0":
        return "-" + text
    return text


def _read(text: str, match: re.Match) -> tuple[str, str]:
    """(normalized number, raw text) of a _CORE match, with the `$` and the
    sign in front of it when they belong to it."""
    start, end = match.span()
    body = match.group()
    if body[0] == "." and start > 0 and _wordish(text[start - 1]):
        body, start = body[1:], start + 1  # "v2.0.1": the ".1" is not a number of its own
    if body.endswith("%"):
        body = body[:-1]
    begin = start
    if begin > 0 and text[begin - 1] == "$":
        begin -= 1
    sign = ""
    if begin > 0 and text[begin - 1] in _SIGNS and not (begin > 1 and _wordish(text[begin - 2])):
        sign = text[begin - 1]
        begin -= 1
    dot = body.find(".")
    integer, fraction = (body, "") if dot < 0 else (body[:dot], body[dot:])
    return normalize_number(sign, integer, fraction), text[begin:end]


def extract_gsm8k(output: str) -> Extraction:
    return Extraction._make(extract_answer(output))


def extract_answer(output: str) -> tuple[str | None, str | None, str]:
    """extract_gsm8k as a plain (answer, raw, method) tuple, for the grader."""
    text = unicodedata.normalize("NFKC", output) if not output.isascii() else output
    marker = text.rfind(_MARKER)
    if marker >= 0:
        match = _CORE.search(text, marker + len(_MARKER))
        if match:
            answer, raw = _read(text, match)
            return answer, raw, "after ####"
    last = None
    for last in _CORE.finditer(text):
        pass
    if last is None:
        return None, None, "none"
    answer, raw = _read(text, last)
    return answer, raw, "last number"


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


def check(spec, out, problems, case_tools):
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


_WHERE = {"after ####": "the first number after the last ####", "last number": "the last number in the output"}


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    expected = gsm8k_expected(spec["expected"])
    if expected is None:  # the compiler guarantees a normalized string; be safe on hand-edited releases
        raise ValueError(f"gsm8k expected {spec['expected']!r} is not a normalized number")

    def grade(output: str) -> Result:
        answer, raw, method = extract_answer(output)
        if answer is None:
            return "fail", 0.0, f"no number in the output (expected {expected})", {"extracted": None, "method": method}
        details = {"extracted": answer, "raw": raw, "method": method}
        if answer == expected:
            return "pass", 1.0, f"{_WHERE[method]} is {answer}, as expected", details
        return "fail", 0.0, f"{_WHERE[method]} is {answer} (from {raw!r}), expected {expected}", details

    return grade


KIND = Kind(
    name="gsm8k",
    order=5,
    keys=frozenset({"kind", "expected"}),
    reads=(OUTPUT,),
    prepare=prepare,
    check=check,
    example={"kind": "gsm8k", "expected": "41"},
    passes_when="the extracted answer (the first number after the last `####` if there is one, else the last "
    "number in the output), normalized (drop `,` `$` `%`, trailing `.`, trailing fractional zeros, leading `+`), "
    "equals `expected`",
)
