"""The judge prompts of the model-graded kinds (SPEC §4.1): Inspect AI's
default templates and grading instructions, the placeholders a template may
use, and how a template is frozen into a release and rendered for a sample.

The default texts are Inspect AI 0.3.285's (`inspect_ai/scorer/_model.py`:
`DEFAULT_MODEL_GRADED_QA_TEMPLATE`, `DEFAULT_MODEL_GRADED_FACT_TEMPLATE`,
`default_instructions`), copied byte for byte, so that a judged Trunchbull
run and an Inspect run with the same judge send the judge the same prompt
(bench/judge_parity.py renders both and compares them).

A template is a Python format string, as Inspect's is, with four
placeholders: `{question}` (the case's prompt), `{answer}` (the model's
output), `{criterion}` (the rubric, or the reference answer) and
`{instructions}` (the grading instructions, which ask for `GRADE: C`/`I`,
or `C`/`P`/`I` with partial credit); `{{` and `}}` are literal braces.
`{instructions}` is filled in when the release is built, so the frozen
text holds the instructions too: a release grades with exactly the text it
was built with, whatever version of Trunchbull grades it. The three others
are filled in per sample, after `[BEGIN DATA]`/`[END DATA]` in them is
neutralized as Inspect does (`[END-DATA]`), so an output cannot close the
data block of the default templates."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from string import Formatter

QUESTION, ANSWER, CRITERION, INSTRUCTIONS = "question", "answer", "criterion", "instructions"
PLACEHOLDERS = (QUESTION, ANSWER, CRITERION, INSTRUCTIONS)
TEMPLATES_DIR = "templates"  # the release's directory of frozen default templates

# Inspect AI 0.3.285, DEFAULT_MODEL_GRADED_QA_TEMPLATE (the rubric kind's default).
MODEL_GRADED_QA_TEMPLATE = """
You are assessing a submitted answer on a given task based on a criterion. Here is the data:

[BEGIN DATA]
***
[Task]: {question}
***
[Submission]: {answer}
***
[Criterion]: {criterion}
***
[END DATA]

Does the submission meet the criterion?

{instructions}
"""

# Inspect AI 0.3.285, DEFAULT_MODEL_GRADED_FACT_TEMPLATE (the factuality kind's default).
MODEL_GRADED_FACT_TEMPLATE = """
You are comparing a submitted answer to an expert answer on a given question. Here is the data:

[BEGIN DATA]
************
[Question]: {question}
************
[Expert]: {criterion}
************
[Submission]: {answer}
************
[END DATA]

Compare the factual content of the submitted answer with the expert answer. Ignore any differences in style, grammar, or punctuation.

Does the submission contain the content in the expert answer?

{instructions}
"""


def default_instructions(partial_credit: bool) -> str:
    """Inspect AI 0.3.285's `default_instructions(partial_credit)`."""
    partial_letter = "P" if partial_credit else ""
    partial_prompt = '"P" for partially correct answers,' if partial_credit else ""
    return f"""
After assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) where LETTER is one of C{partial_letter}I.  Please choose ONE option for the grade: either "C" for correct answers, {partial_prompt}or "I" for incorrect answers.

For example, after reviewing a correct answer you might write 'GRADE: C' or after reviewing an incorrect answer you might write 'GRADE: I'.

First, write out in a step by step manner your reasoning about the criterion to be sure that your conclusion is correct. Avoid simply stating the correct answers at the outset. Then, end with your answer formatted as 'GRADE: $LETTER' (without quotes) where LETTER is one of C{partial_letter}I.
"""  # noqa: E501 - Inspect's text, byte for byte


class TemplateError(ValueError):
    """A template that is not a format string of the placeholders (the message says what to fix)."""


# A parsed template: literal text and placeholder names, alternating as they come.
Parsed = tuple[tuple[str, str | None], ...]


def parse_template(text: str) -> Parsed:
    """(literal, placeholder or None) pieces, by Python's own format-string
    grammar (what Inspect's `str.format` reads); TemplateError for anything
    but the four placeholders written plainly."""
    pieces = []
    try:
        for literal, name, spec, conversion in Formatter().parse(text):
            if name is not None:
                if name not in PLACEHOLDERS:
                    shown = "{" + name + "}" if name else "{}"
                    raise TemplateError(
                        f"unknown placeholder {shown}; a template may use "
                        + ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                        + " (write {{ and }} for literal braces)"
                    )
                if spec or conversion:
                    raise TemplateError(f"placeholder {{{name}}} takes no conversion or format (write just {{{name}}})")
            pieces.append((literal, name))
    except ValueError as err:
        if isinstance(err, TemplateError):
            raise
        raise TemplateError(f"{err} (write {{{{ and }}}} for literal braces)") from None
    return tuple(pieces)


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def freeze_template(text: str, partial_credit: bool) -> str:
    """The template as a release keeps it: `{instructions}` filled in
    (escaped, so the frozen text is a format string of the three per-sample
    placeholders and renders exactly as Inspect renders the original)."""
    pieces = parse_template(text)
    if all(name != INSTRUCTIONS for _, name in pieces):
        return text
    instructions = _escaped(default_instructions(partial_credit))
    out = []
    for literal, name in pieces:
        out.append(_escaped(literal))
        if name == INSTRUCTIONS:
            out.append(instructions)
        elif name is not None:
            out.append("{" + name + "}")
    return "".join(out)


@cache
def default_template(kind_default: str, partial_credit: bool) -> tuple[str, bytes]:
    """(release file name, bytes) of a default template, frozen."""
    frozen = freeze_template(kind_default, partial_credit).encode()
    return f"{TEMPLATES_DIR}/{hashlib.sha256(frozen).hexdigest()}.txt", frozen


# Inspect AI 0.3.285, _STRUCTURAL_DELIMITER_RE / neutralize_structural_delimiters.
_STRUCTURAL_DELIMITER = re.compile(r"\[(BEGIN|END) DATA\]", re.IGNORECASE)


def neutralize(text: str) -> str:
    """`[BEGIN DATA]`/`[END DATA]` (any case) as `[BEGIN-DATA]`/`[END-DATA]`."""
    if "[" not in text:
        return text
    return _STRUCTURAL_DELIMITER.sub(lambda m: m.group(0).replace(" ", "-"), text)


def render(pieces: Parsed, values: dict[str, str]) -> str:
    """The template with each placeholder replaced by its value (once: a
    value's own braces are text, as with str.format)."""
    out = []
    for literal, name in pieces:
        out.append(literal)
        if name is not None:
            out.append(values[name])
    return "".join(out)
