"""`{ kind: "answer_bank", answers, forbiddenAnswers? }`: normalized,
case-insensitive substring matching; a forbidden answer fails first."""

from __future__ import annotations

from trunchbull.evaluators.messages import preview
from trunchbull.evaluators.normalize import normalize_answer
from trunchbull.evaluators.inputs import OUTPUT, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind, Result
from trunchbull.evaluators.spec_checks import SpecProblem


def check(spec, out, problems, case_tools):
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


# ASCII bytes that are not letters or digits (punctuation, symbols, whitespace,
# control characters) → space; `_` is left alone (see normalize_output)
_ASCII_NOT_ALNUM = bytes(c if chr(c).isalnum() or c == 0x5F or c > 0x7F else 0x20 for c in range(256))


def normalize_output(text: str) -> str:
    """normalize_answer(text), with a fast path for ASCII text without `_`
    (the common case): NFKC changes no ASCII character, casefold is lower,
    and each run of non-alphanumeric characters becomes one space, trimmed —
    exactly what the regex of normalize_answer does when there is no `_` (a
    run of `_` next to punctuation gives two spaces there, so text with `_`
    always takes the general path). Done on bytes: str.translate is slower."""
    if text.isascii() and "_" not in text:
        return b" ".join(text.encode().lower().translate(_ASCII_NOT_ALNUM).split()).decode()
    return normalize_answer(text)


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    answers = [(a, normalize_output(a)) for a in spec["answers"]]
    forbidden = [(a, norm) for a in spec.get("forbiddenAnswers") or [] if (norm := normalize_output(a))]

    def grade(output: str) -> Result:
        normalized = normalize_output(output)
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


KIND = Kind(
    name="answer_bank",
    order=4,
    keys=frozenset({"kind", "answers", "forbiddenAnswers"}),
    reads=(OUTPUT,),
    prepare=prepare,
    check=check,
    example={"kind": "answer_bank", "answers": ["30 days"], "forbiddenAnswers": ["60 days"]},
    passes_when="no normalized forbidden answer is a substring of the normalized output (checked first: fails "
    "naming it), and some normalized answer is",
)
