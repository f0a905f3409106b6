"""Pairwise judging of two runs (`compare BASE RUN --judge SPEC`, SPEC §9):
which run's output a judge prefers, case by case, asked in both orders.

A *pair* is a case and a repeat that both runs answered (a record with no
error: a sample that failed to reach the model has no output to judge). For
each pair the judge is asked twice with the template of
evaluators/pairwise.py: once with A's output shown first (as "assistant A")
and once with B's first. Each verdict is mapped back to a run; the pair's
winner is that run when both orders agree, a tie when they said tie or
disagree (MT-Bench's rule: a preference that follows the position is not a
preference), and an error when either reply could not be used. The figures
are stats/pairwise.py's."""

from __future__ import annotations

from typing import Iterator, NamedTuple, Sequence

from trunchbull.common.diagnostics import UsageError
from trunchbull.evaluators.judging import JudgeAsk, JudgeReply, judged_result
from trunchbull.evaluators.pairwise import pairwise_request
from trunchbull.rundir.reader import RunDirectory

# A verdict ("A": the first output shown is better, "B": the second, "C": a tie) → the run it
# prefers, for each order.
A_FIRST = {"A": "a", "B": "b", "C": "tie"}
B_FIRST = {"A": "b", "B": "a", "C": "tie"}


class Pair(NamedTuple):
    case: dict  # the release's case (its prompt, evalId)
    repeat: int
    output_a: str
    output_b: str


def _answered(run: RunDirectory) -> dict[tuple[str, int], str]:
    """(case ID, repeat) → the output of each sample the model answered."""
    out = {}
    for key, record in run.records.items():
        if record.get("error") is None:
            output = record.get("output")
            out[key] = output if isinstance(output, str) else ""
    return out


def find_pairs(a: RunDirectory, b: RunDirectory, cases: Sequence[dict], allow_release_change: bool) -> list[Pair]:
    """The pairs of two runs, in the release's case order (`cases`: the
    release's, whose prompts the judge is shown), then by repeat."""
    if a.digest != b.digest and not allow_release_change:
        raise UsageError(
            f"{a.path} and {b.path} ran different releases ({a.digest} and {b.digest}), so their cases "
            "may not be the same. Judge runs of one release, or pass --allow-release-change to pair "
            "cases by ID (the prompt shown is from RUN's release)"
        )
    answered_a, answered_b = _answered(a), _answered(b)
    repeats: dict[str, list[int]] = {}
    for case_id, repeat in answered_a.keys() & answered_b.keys():
        repeats.setdefault(case_id, []).append(repeat)
    pairs = [
        Pair(case, repeat, answered_a[(case["id"], repeat)], answered_b[(case["id"], repeat)])
        for case in cases
        for repeat in sorted(repeats.get(case["id"], ()))
    ]
    if not pairs:
        raise UsageError(f"{a.path} and {b.path} have no case that both answered: there is nothing to judge")
    return pairs


def prompt_text(case: dict) -> str:
    """The case's prompt as the judge is shown it (the question)."""
    prompt = case.get("prompt")
    return prompt if isinstance(prompt, str) else str(prompt)


def pair_asks(pairs: Sequence[Pair], template: dict, rubric: str | None) -> Iterator[JudgeAsk]:
    """Two asks per pair, in order: A's output first, then B's first."""
    for pair in pairs:
        question = prompt_text(pair.case)
        case_id, eval_id = pair.case["id"], pair.case.get("evalId")
        for first, second in ((pair.output_a, pair.output_b), (pair.output_b, pair.output_a)):
            request = pairwise_request(template, question, first, second, rubric)
            yield JudgeAsk(case_id, pair.repeat, request, eval_id)


def _verdict(ask: JudgeAsk, reply: JudgeReply, mapping: dict) -> tuple[str | None, str | None]:
    """(the run the verdict prefers, or "tie"; None for an error), and the error's message."""
    outcome, _score, message, details = judged_result(ask.request, reply)
    if outcome == "error" or not isinstance(details, dict):
        return None, message
    return mapping[details["grade"]], None


def pair_lines(pairs: Sequence[Pair], asks: Sequence[JudgeAsk], replies: Sequence[JudgeReply]) -> list[dict]:
    """pairs.jsonl's lines (rundir/comparison_dir.py) from the two replies of each pair."""
    out = []
    for i, pair in enumerate(pairs):
        first, first_error = _verdict(asks[2 * i], replies[2 * i], A_FIRST)
        second, second_error = _verdict(asks[2 * i + 1], replies[2 * i + 1], B_FIRST)
        failed = first is None or second is None
        out.append(
            {
                "caseId": pair.case["id"],
                "repeat": pair.repeat,
                "evalId": pair.case.get("evalId"),
                "first": first,
                "second": second,
                "winner": None if failed else (first if first == second else "tie"),
                "consistent": None if failed else first == second,
                "error": first_error or second_error,
            }
        )
    return out
