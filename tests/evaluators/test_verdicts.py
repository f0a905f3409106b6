"""Reading a judge's reply (evaluators/verdicts.py) and rendering its prompt
(evaluators/judge_templates.py), against hand-written expectations and
Python's own `str.format` (what Inspect AI renders with). The parity with
Inspect's code itself, on thousands of generated replies and prompts, is
bench/judge_parity.py's."""

from __future__ import annotations

import pytest

from trunchbull.evaluators.judge_templates import (
    MODEL_GRADED_FACT_TEMPLATE,
    MODEL_GRADED_QA_TEMPLATE,
    default_instructions,
    freeze_template,
    neutralize,
    parse_template,
    render,
)
from trunchbull.evaluators.judging import JudgeReply
from trunchbull.evaluators.verdicts import OFFERED, OFFERED_PARTIAL, decide_grade, parse_grade

CASES = [
    ("Reasoning...\nGRADE: C", OFFERED, "C"),
    ("GRADE: I", OFFERED, "I"),
    ("grade: c", OFFERED, "C"),  # any case
    ("GRADE:C", OFFERED, "C"),
    ("GRADE :  I", OFFERED, "I"),
    ("GRADE:\u200bC", OFFERED, "C"),  # zero-width space around the colon
    ("GRADE: Correct", OFFERED, "C"),
    ("GRADE: incorrect.", OFFERED, "I"),
    ("GRADE: Partial", OFFERED_PARTIAL, "P"),
    ("GRADE: P", OFFERED, None),  # not offered without partial credit
    ("GRADE: P", OFFERED_PARTIAL, "P"),
    ("The answer says GRADE: C but I disagree. GRADE: I", OFFERED, "I"),  # the last one wins
    ("GRADE: I\nOn reflection: GRADE: C", OFFERED, "C"),
    ("GRADE: CI", OFFERED, None),  # not a grade word
    ("GRADE: B", OFFERED, None),
    ("GRADE: $LETTER", OFFERED, None),  # the instructions' own text
    ("no verdict here", OFFERED, None),
    ("", OFFERED, None),
    ("downgrade: C", OFFERED, None),  # GRADE inside a word
    ("GRADES: C", OFFERED, None),
    ("GRADE: C GRADE:", OFFERED, None),  # the last GRADE: has no word
    ("**GRADE: C**", OFFERED, "C"),
    ("GRADE - C", OFFERED, None),
]


@pytest.mark.parametrize("reply, offered, grade", CASES)
def test_the_grade_is_the_last_offered_word_after_grade(reply, offered, grade):
    assert parse_grade(reply, offered) == grade


def test_a_grade_decides_the_result_and_no_grade_is_an_error():
    assert decide_grade(JudgeReply("ok GRADE: C"), OFFERED)[:2] == ("pass", 1.0)
    assert decide_grade(JudgeReply("meh GRADE: P"), OFFERED_PARTIAL)[:2] == ("fail", 0.5)
    assert decide_grade(JudgeReply("bad GRADE: I"), OFFERED)[:2] == ("fail", 0.0)
    outcome, score, message, details = decide_grade(JudgeReply("I think it is fine", finish_reason="length"), OFFERED)
    assert (outcome, score) == ("error", None) and details["error"]["kind"] == "judge-unparsable"
    assert "finish reason 'length'" in message


def test_a_long_reply_without_a_grade_is_read_in_linear_time():
    # Inspect's pattern takes minutes on this; the scan here, milliseconds (no timing asserted: it returns)
    assert parse_grade("word " * 400_000, OFFERED) is None
    assert parse_grade("word " * 400_000 + "GRADE: C", OFFERED) == "C"


@pytest.mark.parametrize("template", [MODEL_GRADED_QA_TEMPLATE, MODEL_GRADED_FACT_TEMPLATE])
@pytest.mark.parametrize("partial", [False, True])
def test_a_frozen_template_renders_as_str_format_renders_the_original(template, partial):
    values = {"question": "What {is} it? }{", "answer": "It is {answer} {{x}}", "criterion": "Be {criterion}."}
    expected = template.format(instructions=default_instructions(partial), **values)
    assert render(parse_template(freeze_template(template, partial)), values) == expected


def test_a_template_with_braces_in_its_instructions_stays_literal():
    text = "Q: {question} A: {answer} {{literal}} {instructions}"
    frozen = freeze_template(text, False)
    assert render(parse_template(frozen), {"question": "q", "answer": "a"}) == text.format(
        question="q", answer="a", instructions=default_instructions(False)
    )


def test_data_delimiters_are_neutralized_as_inspect_does():
    assert neutralize("x [END DATA] y [begin data] [END  DATA]") == "x [END-DATA] y [begin-data] [END  DATA]"
    assert neutralize("no brackets") == "no brackets"
