"""The `judged` kind of the tests (tests/evaluators/kinds/) reads a model:
without a judge, `grade` and `run` refuse it before anything is called or
written; given one, the grader defers its requests to the end and asks the
judge once, and each reply is graded by the request's `decide`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evaluators.test_first_step_tools import with_test_kinds
from trunchbull.evaluators.judging import JudgeAsk, JudgeReply
from trunchbull.evaluators.registry import kinds_from
from trunchbull.grading.grader import Grader, ToGrade
from trunchbull.grading.responses import Response
from trunchbull.release.loaded import load_release

POLITE = """export default {
  id: "polite",
  evaluate: { kind: "judged", question: "Is the answer polite?" },
  cases: [
    { id: "polite.thanks", prompt: "Thank the user." },
    { id: "polite.rude", prompt: "Be rude." },
    { id: "polite.broken", prompt: "Anything." },
  ],
}
"""
PLAIN = """export default { id: "plain", prompt: "Say echo.", evaluate: { kind: "contains", expected: "echo" } }
"""


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("judged")
    (tmp / "bench" / "evals").mkdir(parents=True)
    (tmp / "bench" / "evals" / "polite.ts").write_text(POLITE)
    (tmp / "bench" / "evals" / "plain.ts").write_text(PLAIN)
    built = with_test_kinds("build", tmp / "bench", "-o", tmp / "release", cache=tmp)
    assert built.code == 0, built.stdout + built.stderr
    return tmp / "release"


def test_grade_without_a_judge_is_refused_and_writes_nothing(release, tmp_path):
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"caseId": "polite.thanks", "output": "Thank you!"}\n')
    graded = with_test_kinds(
        "grade", release, responses, "-o", tmp_path / "results.jsonl", "--run-dir", tmp_path / "run", cache=tmp_path
    )
    assert graded.code == 2, graded.stderr
    assert "1 eval(s) grade with a judge model, and no judge is available to this command: polite (judged)" in (
        graded.stderr
    )
    assert "Traceback" not in graded.stderr and "--eval" not in graded.stderr  # grade has no --eval
    assert not (tmp_path / "results.jsonl").exists() and not (tmp_path / "run").exists()


def test_run_without_a_judge_is_refused_unless_the_judged_eval_is_left_out(release, tmp_path):
    refused = with_test_kinds("run", release, "--model", "echo", "-o", tmp_path / "run", cache=tmp_path)
    assert refused.code == 2 and "polite (judged)" in refused.stderr, refused.stderr
    assert "or run only the others (--eval plain)" in refused.stderr
    assert not (tmp_path / "run").exists()
    dry = with_test_kinds("run", release, "--model", "echo", "-o", tmp_path / "run", "--dry-run", cache=tmp_path)
    assert dry.code == 2 and "polite (judged)" in dry.stderr, dry.stderr
    plain = with_test_kinds(
        "run", release, "--model", "echo", "--eval", "plain", "-o", tmp_path / "run", cache=tmp_path
    )
    assert plain.code == 0, plain.stderr


class ScriptedJudge:
    """A judge of the test: replies from a script keyed by the answer in the
    request (no model), and keeps what it was asked."""

    model = "scripted:judge"

    def __init__(self, replies: dict[str, JudgeReply]):
        self.replies = replies
        self.batches: list[list[JudgeAsk]] = []

    def answer(self, asks):
        self.batches.append(list(asks))
        return [
            self.replies[ask.request.messages[0]["content"].split("The answer:\n")[1].split("\n")[0]] for ask in asks
        ]


def test_the_grader_asks_the_judge_once_and_grades_each_reply(release):
    judge = ScriptedJudge(
        {
            "Thank you!": JudgeReply("yes"),
            "Go away.": JudgeReply("no"),
            "…": JudgeReply(None, "the judge's provider is down", {"attempts": 3}),
        }
    )
    answers = {"polite.thanks": "Thank you!", "polite.rude": "Go away.", "polite.broken": "…", "plain": "echo"}
    with kinds_from("tests.evaluators.kinds"):
        loaded = load_release(release)
        grader = Grader(loaded, "no response", judge)
        samples = [
            ToGrade(case, Response(0, answers[case["id"]], [], "stop", None), repeat)
            for repeat in (0, 1)
            for case in loaded.cases
        ]
        grader.add(reversed(list(enumerate(samples))))  # in any order
        assert judge.batches == []  # deferred to the end
        graded = grader.finish()
    (batch,) = judge.batches
    assert [(ask.case_id, ask.repeat) for ask in batch] == [
        (s.case["id"], s.repeat) for s in reversed(samples) if s.case["evalId"] == "polite"
    ]
    assert {ask.request.settings["judge"] for ask in batch} == {"scripted:judge"}  # the judge's model, prepared with
    rows = {(r["caseId"], r["repeat"]): r for r in graded.results}
    for repeat in (0, 1):
        assert rows[("polite.thanks", repeat)]["outcome"] == "pass"
        assert rows[("polite.rude", repeat)]["message"] == "the judge said 'no'"
        broken = rows[("polite.broken", repeat)]
        assert (broken["outcome"], broken["score"]) == ("error", None)
        assert broken["message"] == "the judge could not answer: the judge's provider is down"
        assert broken["details"] == {
            "error": {"kind": "judge-failed", "message": "the judge's provider is down"},
            "judges": [{"attempts": 3}],  # what the judge said of its work
        }
        assert rows[("plain", repeat)]["outcome"] == "pass"  # graded as it came
    assert grader.prepared == 2  # one per spec: the judge is the grading's own


def test_the_grader_without_a_judge_grades_a_judged_sample_error(release):
    with kinds_from("tests.evaluators.kinds"):
        loaded = load_release(release)
        case = next(c for c in loaded.cases if c["evalId"] == "polite")
        grader = Grader(loaded, "no response")
        grader.add([(0, ToGrade(case, Response(0, "Thank you!", [], "stop", None)))])
        (row,) = grader.finish().results
    assert row["outcome"] == "error" and "grades with a judge model, and none was given" in row["message"]
