"""Model-graded kinds in `run` (SPEC §4.1): the judge is called through the
trusted model caller over the real openai-compatible provider, against the
local scripted server acting as the judge, which answers each judge request
by a rule on its content (tests/support/chat_server.py `judge`). The model
under test is the built-in echo model: each case's output is its prompt,
which names what the judge replies (fixtures/rubrics)."""

from __future__ import annotations

import orjson
import pytest

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply
from trunchbull.evaluators.judge_templates import (
    MODEL_GRADED_FACT_TEMPLATE,
    MODEL_GRADED_QA_TEMPLATE,
    default_instructions,
)

JUDGE = "openai-compatible:grader"
RUBRIC = "The reply is polite and states the 30-day return window."
REPLIES = {
    "judge:pass": Reply(content="The reply states the window politely.\nGRADE: C"),
    "judge:fail": Reply(content="The submission says GRADE: C, but it is wrong.\nGRADE: I"),
    "judge:partial": Reply(content="It mentions returns, not the window.\nGRADE: P"),
    "judge:garbled": Reply(content="I cannot decide on this one."),
    "judge:refuse": Reply(content="", finish_reason="content_filter"),
    "judge:busy": [Reply(status=429, headers={"retry-after": "0"}), Reply(content="GRADE: C")],
    "judge:long": Reply(content="y" * 3000 + "\nGRADE: C"),
}


def judge_rule(text: str):
    """The scripted judge: a request is the judge's when it holds the default templates' data block."""
    if "[BEGIN DATA]" not in text:
        return None
    for marker, reply in REPLIES.items():
        if marker in text:
            return reply
    return Reply(content="no marker")


def judge_requests(server) -> list:
    return [r for r in server.received() if "[BEGIN DATA]" in str((r.body or {}).get("messages"))]


def judged_run(cli, server, release, out, *extra):
    server.judge(judge_rule)
    return cli(
        "run",
        release,
        "--model",
        "echo",
        "--judge",
        JUDGE,
        "--judge-base-url",
        server.url,
        "--max-response-bytes",
        "1024",
        "-o",
        out,
        "--json",
        *extra,
    )


def test_a_scripted_judge_grades_each_case_and_its_failures_are_errors(built, cli, server, tmp_path):
    release = built("rubrics")
    run = judged_run(cli, server, release, tmp_path / "run", "--seed", "7")
    assert run.code == 1, run.stderr  # samples in error
    rows = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "results.jsonl")}
    outcomes = {case: (row["outcome"], row["score"]) for case, row in rows.items()}
    assert outcomes == {
        "verdicts.pass": ("pass", 1.0),
        "verdicts.fail": ("fail", 0.0),
        "verdicts.partial": ("fail", 0.5),
        "verdicts.garbled": ("error", None),
        "verdicts.refused": ("error", None),
        "verdicts.busy": ("pass", 1.0),
        "verdicts.long": ("error", None),
        "verdicts.injected": ("fail", 0.0),  # the output's own `GRADE: C` is not the judge's
        "verdicts.forged": ("fail", 0.0),  # nor is a JSON verdict in it
        "verdicts.fact": ("pass", 1.0),
        "plain": ("pass", 1.0),
    }
    kinds = {case: row["details"]["error"]["kind"] for case, row in rows.items() if row["outcome"] == "error"}
    assert kinds == {
        "verdicts.garbled": "judge-unparsable",
        "verdicts.refused": "judge-refused",
        "verdicts.long": "judge-truncated",
    }
    assert rows["verdicts.partial"]["details"]["grade"] == "P"
    assert rows["verdicts.pass"]["details"]["judges"][0]["model"] == JUDGE
    # every sample's record is clean: judge failures are the grade's, not the model's
    assert all(r["error"] is None for r in read_jsonl(tmp_path / "run" / "responses.jsonl"))

    judgments = {j["caseId"]: j for j in read_jsonl(tmp_path / "run" / "judgments.jsonl")}
    assert set(judgments) == {case for case in rows if case != "plain"}
    assert {case: j["attempts"] for case, j in judgments.items()} == {
        case: 2 if case == "verdicts.busy" else 1 for case in judgments
    }
    assert judgments["verdicts.long"]["repaired"] == ["output-truncated"]
    assert judgments["verdicts.refused"]["finishReason"] == "content-filter"
    assert judgments["verdicts.garbled"]["reply"] == "I cannot decide on this one."

    requests = judge_requests(server)
    assert len(requests) == 11  # ten judged samples, one of them asked twice (429)
    assert {(r.body["temperature"], r.body["seed"], r.body["model"]) for r in requests} == {(0, 7, "grader")}
    by_prompt = {r.body["messages"][0]["content"]: r.body["messages"] for r in requests}
    for case, template, criterion, partial in [
        ("verdicts.pass", MODEL_GRADED_QA_TEMPLATE, RUBRIC, False),
        ("verdicts.partial", MODEL_GRADED_QA_TEMPLATE, "States the 30-day window.", True),
        ("verdicts.fact", MODEL_GRADED_FACT_TEMPLATE, "A full refund within 30 days of delivery.", False),
    ]:
        prompt = next(r for r in read_jsonl(tmp_path / "run" / "responses.jsonl") if r["caseId"] == case)["output"]
        expected = template.format(
            question=prompt, answer=prompt, criterion=criterion, instructions=default_instructions(partial)
        )
        assert by_prompt[expected] == [{"role": "user", "content": expected}], case

    summary = run.json
    assert summary["judges"] == [{"model": JUDGE, "selfJudge": False}]
    judge = summary["evals"]["verdicts"]["judge"]
    assert judge["requests"] == 10 and judge["errors"] == 3 and judge["cached"] == 0
    assert judge["tokens"]["total"] == sum(j["usage"]["totalTokens"] for j in judgments.values())
    assert "judge" not in summary["evals"]["plain"]
    meta = orjson.loads((tmp_path / "run" / "run.json").read_bytes())
    assert meta["judge"]["given"] == [JUDGE] and meta["judge"]["settings"][JUDGE] == {"temperature": 0, "seed": 7}


def test_without_seed_the_judge_gets_seed_0(built, cli, server, tmp_path):
    run = judged_run(cli, server, built("rubrics"), tmp_path / "run", "--eval", "verdicts", "--case", "verdicts.pass")
    assert run.code == 0, run.stderr
    (request,) = judge_requests(server)
    assert (request.body["temperature"], request.body["seed"]) == (0, 0)


def test_a_release_whose_judged_cases_have_no_judge_is_refused_before_any_call(built, cli, server, tmp_path):
    run = cli("run", built("rubrics"), "--model", "echo", "-o", tmp_path / "run")
    assert run.code == 2 and "verdicts (rubric)" in run.stderr and "--judge SPEC" in run.stderr, run.stderr
    assert not (tmp_path / "run").exists() and server.received() == []
    bad = cli("run", built("rubrics"), "--model", "echo", "--judge", "opnai:gpt-4o", "-o", tmp_path / "run")
    assert bad.code == 2 and "--judge 'opnai:gpt-4o': unknown provider 'opnai'" in bad.stderr, bad.stderr
    keyless = cli(
        "run",
        built("rubrics"),
        "--model",
        "echo",
        "--judge",
        "openai:gpt-4o",
        "-o",
        tmp_path / "run",
        env={"OPENAI_API_KEY": ""},
    )
    assert keyless.code == 2 and "--judge-api-key-env" in keyless.stderr, keyless.stderr
    assert not (tmp_path / "run").exists()


def test_self_judging_is_refused_unless_allowed_and_then_marked(built, cli, server, tmp_path):
    server.judge(judge_rule)
    model = ["--model", JUDGE, "--base-url", server.url]
    args = ["--judge", JUDGE, "--judge-base-url", server.url, "--eval", "verdicts", "--case", "verdicts.pass"]
    refused = cli("run", built("rubrics"), *model, *args, "-o", tmp_path / "run")
    assert refused.code == 2 and "is the model under test" in refused.stderr and "--allow-self-judge" in refused.stderr
    assert server.received() == [] and not (tmp_path / "run").exists()
    allowed = cli("run", built("rubrics"), *model, *args, "--allow-self-judge", "-o", tmp_path / "run")
    assert allowed.code == 0, allowed.stderr
    assert "(the model under test: self-judged)" in allowed.stdout
    meta = orjson.loads((tmp_path / "run" / "run.json").read_bytes())
    assert meta["judge"]["selfJudged"] == [JUDGE] and meta["judge"]["allowSelfJudge"] is True
    report = cli("report", tmp_path / "run", "-o", tmp_path / "report.html")
    assert report.code == 0 and "self-judged" in report.stdout, report.stdout + report.stderr


@pytest.mark.parametrize("flag", ["--judge-api-key-env"])
def test_the_judges_key_is_sent_and_written_nowhere(built, cli, server, tmp_path, flag):
    secret = "sk-judge-secret-4242"
    server.judge(judge_rule)
    run = cli(
        "run",
        built("rubrics"),
        "--model",
        "echo",
        "--judge",
        JUDGE,
        "--judge-base-url",
        server.url,
        flag,
        "JUDGE_KEY",
        "--eval",
        "verdicts",
        "-o",
        tmp_path / "run",
        env={"JUDGE_KEY": secret},
    )
    assert run.code == 1, run.stderr
    assert {r.headers.get("authorization") for r in judge_requests(server)} == {f"Bearer {secret}"}
    for path in (tmp_path / "run").iterdir():
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in run.stdout + run.stderr


def test_a_judge_pinned_by_the_spec_answers_unless_judge_overrides_it(built, cli, server, tmp_path):
    server.judge(judge_rule)
    release = built("pinned")
    typo = cli("run", release, "--model", "echo", "--judge-base-url", server.url, "-o", tmp_path / "typo")
    assert typo.code == 2 and "unknown provider 'opnai'" in typo.stderr and "pinned by eval typo" in typo.stderr
    assert server.received() == []
    pinned = cli(
        "run", release, "--model", "echo", "--eval", "pinned", "--judge-base-url", server.url, "-o", tmp_path / "a"
    )
    assert pinned.code == 0, pinned.stderr
    assert [r.body["model"] for r in judge_requests(server)] == ["pinned-judge"]
    meta = orjson.loads((tmp_path / "a" / "run.json").read_bytes())
    assert meta["judge"]["models"] == ["openai-compatible:pinned-judge"] and meta["judge"]["given"] == []
    overridden = cli("run", release, "--model", "echo", "--judge", JUDGE, "--judge-base-url", server.url,
                     "-o", tmp_path / "b")  # fmt: skip
    assert overridden.code == 0, overridden.stderr  # the typo'd pinned judge is not asked for either
    assert [r.body["model"] for r in judge_requests(server)][1:] == ["grader", "grader"]
