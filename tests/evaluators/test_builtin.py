"""Table-driven tests of the built-in evaluators (SPEC §4), through the same
`prepare` the grader uses; no release needed."""

from __future__ import annotations

import pytest

from trunchbull.evaluators.registry import prepare
from trunchbull.evaluators.kinds.gsm8k import extract_gsm8k
from trunchbull.evaluators.normalize import normalize_answer


def outcome(spec: dict, output: str):
    return prepare(spec)(output)  # these kinds read the output only


@pytest.mark.parametrize(
    "output, passed",
    [
        ("x", True),
        ("  hello\n", True),
        ("", False),
        ("   ", False),
        ("\n\t \r\n", False),
        ("\u3000\u2003", False),  # ideographic and em spaces are whitespace
        ("\u200b", True),  # a zero-width space is not whitespace: the output is not empty
        ("0", True),
    ],
)
def test_non_empty(output, passed):
    result = outcome({"kind": "non_empty"}, output)
    assert result[0] == ("pass" if passed else "fail")
    assert result[1] == (1.0 if passed else 0.0)
    assert result[2]


@pytest.mark.parametrize(
    "expected, output, passed, why",
    [
        ("Paris", "Paris", True, None),
        ("Paris", "  Paris\n", True, None),
        ("Paris", "\u00a0Paris\u2003", True, None),  # Unicode whitespace is trimmed
        ("Paris", "paris", False, "letter case"),
        ("Paris", "Paris.", False, "'Paris.'"),
        ("New York", "New  York", False, "inner whitespace"),
        ("30 days", "30 days!", False, "'30 days!'"),
        ("café", "cafe\u0301", False, None),  # exact means exact: no Unicode normalization
        ("Paris", "", False, "''"),
    ],
)
def test_exact(expected, output, passed, why):
    result = outcome({"kind": "exact", "expected": expected}, output)
    assert result[0] == ("pass" if passed else "fail"), result
    if why:
        assert why in result[2]
    if not passed:
        assert repr(expected) in result[2]


@pytest.mark.parametrize(
    "expected, output, passed",
    [
        ("30 days", "The window is 30 days.", True),
        ("30 days", "THE WINDOW IS 30 DAYS", True),
        ("  30 days ", "within 30 days", True),  # expected is trimmed
        ("30 days", "30  days", False),
        ("30 days", "thirty days", False),
        ("Straße", "STRASSE", True),  # casefold, not lower
        ("ΣΊΣΥΦΟΣ", "σίσυφος", True),
        ("tokyo", "Tokyo\n", True),
        ("30 days", "", False),
    ],
)
def test_contains(expected, output, passed):
    result = outcome({"kind": "contains", "expected": expected}, output)
    assert result[0] == ("pass" if passed else "fail"), result
    assert ("does not contain" in result[2]) != passed


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("30 Days!", "30 days"),
        ("  Full-Refund ", "full refund"),
        ("ｆｕｌｌ　ｒｅｆｕｎｄ", "full refund"),  # NFKC: fullwidth forms and spaces
        ("Ⅻ", "xii"),  # NFKC compatibility decomposition
        ("Straße", "strasse"),
        ("snake_case", "snake case"),  # underscore is not a letter or digit
        ("...", ""),
        ("día—año", "día año"),
    ],
)
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "Yes, a FULL-REFUND.",
        "  30 Days!!  ",
        "a\tb\nc\rd\x0be\x0cf",
        "x\x1cy\x1fz\x00w\x7fv",
        "...",
        "--a--",
        "MiXeD 123,456.78%",
        "snake_case",
        "a_-b",
        "_x_",
        "Straße",
        "ｆｕｌｌ",
        "día—año",
    ],
)
def test_answer_bank_output_normalization_is_normalize_answer(text):
    # the grader's ASCII fast path must give exactly normalize_answer's result
    from trunchbull.evaluators.kinds.answer_bank import normalize_output

    assert normalize_output(text) == normalize_answer(text)


BANK = {"kind": "answer_bank", "answers": ["full refund", "Yes"], "forbiddenAnswers": ["no refund"]}


@pytest.mark.parametrize(
    "output, expected_outcome, message",
    [
        ("Yes, a FULL-REFUND.", "pass", "'full refund'"),
        ("yes", "pass", "'Yes'"),
        ("ｙｅｓ", "pass", "'Yes'"),
        ("They get a full\n\trefund!", "pass", "'full refund'"),
        ("No refund, but yes store credit", "fail", "forbidden answer 'no refund'"),  # forbidden checked first
        ("no-refund", "fail", "forbidden answer 'no refund'"),
        ("Maybe.", "fail", "none of the answers"),
        ("", "fail", "none of the answers"),
        ("eyes", "pass", "'Yes'"),  # substring semantics, as specified
    ],
)
def test_answer_bank(output, expected_outcome, message):
    result = outcome(BANK, output)
    assert result[0] == expected_outcome, result
    assert message in result[2]


@pytest.mark.parametrize(
    "output, answer, method",
    [
        ("#### 72", "72", "after ####"),
        ("#### $72", "72", "after ####"),
        ("She has 5 apples... #### $1,234", "1234", "after ####"),
        ("Total: 18.00", "18", "last number"),
        ("2.50 dollars", "2.5", "last number"),
        ("The answer is 72.", "72", "last number"),
        ("The answer is 72...", "72", "last number"),
        ("Hmm...", None, "none"),
        ("", None, "none"),
        ("1,234,567 people", "1234567", "last number"),
        ("pick 1,2,3", "3", "last number"),  # commas only group thousands
        ("ages 3-5", "5", "last number"),  # a hyphen between numbers is not a minus sign
        ("it fell to -5 degrees", "-5", "last number"),
        ("it is +7", "7", "last number"),
        ("about 50%", "50", "last number"),
        ("$0.50", "0.5", "last number"),
        (".5 of it", "0.5", "last number"),
        ("007", "7", "last number"),
        ("-0.00", "0", "last number"),
        ("\u22123 is a Unicode minus", "-3", "last number"),
        ("x = \u22123", "-3", "last number"),
        ("＃＃＃＃ ７２", "72", "after ####"),  # fullwidth digits and hashes (NFKC)
        ("#### 10\nnot the answer: 3", "10", "after ####"),
        ("#### 5 #### 6", "6", "after ####"),  # the last ####
        ("first 4 then ####", "4", "last number"),  # nothing after ####: the last number
        ("  42  \n", "42", "last number"),
    ],
)
def test_gsm8k_extraction(output, answer, method):
    extraction = extract_gsm8k(output)
    assert (extraction.answer, extraction.method) == (answer, method), extraction


@pytest.mark.parametrize(
    "expected, output, passed",
    [
        ("72", "#### $72", True),
        (72, "so 72.", True),
        ("18", "18.00", True),
        ("3.75", "change is $3.750", True),
        (3.75, "#### 3.75", True),
        ("-3", "#### -3", True),
        ("1234", "#### 1,234", True),
        ("72", "72 apples and 3 boxes", False),  # the last number counts
        ("72", "no idea", False),
        ("0.5", "#### .50", True),
    ],
)
def test_gsm8k(expected, output, passed):
    result = outcome({"kind": "gsm8k", "expected": expected}, output)
    assert result[0] == ("pass" if passed else "fail"), result
    if not passed:
        assert "expected" in result[2]


def test_gsm8k_failure_message_names_what_was_extracted():
    status, score, message, details = outcome({"kind": "gsm8k", "expected": "72"}, "I think #### $71.00")
    assert (status, score) == ("fail", 0.0)
    assert "71" in message and "72" in message and "####" in message
    assert details == {"extracted": "71", "raw": "$71.00", "method": "after ####"}


def test_prepare_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="unknown evaluator kind"):
        prepare({"kind": "regex"})
