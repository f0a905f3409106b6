"""A judge's reply read as Inspect AI reads it (SPEC §4.1): the grade is the
word after the *last* `GRADE:` of the reply (earlier mentions, in the
judge's reasoning or echoed from the output, never win), spelled as a letter
or a word (`C`/`correct`, `P`/`partial`, `I`/`incorrect`, any case), and
only a grade the instructions offered counts (`C` or `I`; `P` too with
partial credit). Anything else is no grade: the sample is `error`
(`judge-unparsable`), never `fail` — where Inspect leaves it unscored.

The semantics are Inspect AI 0.3.285's (`_model_graded_qa_single` with its
default instructions and grade pattern); bench/judge_parity.py compares the
two on generated replies. Inspect finds the last `GRADE:` with a pattern that
starts with `.*`, which takes time quadratic in the reply's length when there
is none; here every place where the pattern's tail matches is found in one
linear scan and the last one is taken, which is the same match.

A grade is a result: `C` passes (score 1), `P` fails with score 0.5 (the
value Inspect gives a partial grade), `I` fails (score 0)."""

from __future__ import annotations

import re

from trunchbull.evaluators.judging import JudgeReply
from trunchbull.evaluators.messages import preview
from trunchbull.evaluators.result import Result

# Inspect AI 0.3.285: _GRADE_SPACING, and the tail of _PERMISSIVE_GRADE_PATTERN after its `(?is).*`.
_SPACING = r"[\s\u200b\u200c\u200d\u200e\u200f\u2060\u2063\ufeff]*"
_GRADE_AT = re.compile(rf"(?is)(?=(?<!\w)GRADE(?!\w){_SPACING}:{_SPACING}(\w*))")
# Inspect AI 0.3.285, _GRADE_WORD_VALUES.
_WORDS = {"c": "C", "correct": "C", "i": "I", "incorrect": "I", "p": "P", "partial": "P"}

OFFERED = ("C", "I")
OFFERED_PARTIAL = ("C", "P", "I")
SCORES = {"C": 1.0, "P": 0.5, "I": 0.0}
MEANING = {"C": "correct", "P": "partially correct", "I": "incorrect"}

UNPARSABLE = "judge-unparsable"


def parse_grade(reply: str, offered: tuple[str, ...]) -> str | None:
    """The grade of a reply (`C`, `P` or `I`), or None when it has none of `offered`."""
    last = None
    for last in _GRADE_AT.finditer(reply):
        pass
    if last is None:
        return None
    word = last.group(1)
    value = _WORDS.get(word.strip().lower())
    if value is None and len(word.strip()) == 1:
        value = word.strip().upper()
    return value if value in offered else None


def decide_grade(reply: JudgeReply, offered: tuple[str, ...]) -> Result:
    """The sample's result from the judge's reply text."""
    text = reply.text or ""
    grade = parse_grade(text, offered)
    if grade is None:
        ended = f" (it ended with finish reason {reply.finish_reason!r})" if reply.finish_reason == "length" else ""
        message = (
            f"the judge's reply has no grade (GRADE: followed by one of {'/'.join(offered)}){ended}: "
            f"{preview(text.strip()[-200:], 80)}"
        )
        return "error", None, message, {"error": {"kind": UNPARSABLE, "message": message}, "explanation": text}
    outcome = "pass" if grade == "C" else "fail"
    message = f"the judge graded the output {MEANING[grade]} (GRADE: {grade})"
    return outcome, SCORES[grade], message, {"grade": grade, "explanation": text}
