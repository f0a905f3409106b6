"""Pairwise judging in `compare` (SPEC §9): two runs of fixtures/pairwise
(recorded responses, graded into run directories), judged by the local
scripted server through the trusted model caller over the real
openai-compatible provider. The server's judge reads which output each
position holds and answers by a rule: a fair judge prefers the better
output wherever it stands, a biased one always prefers the first it is
shown. Every figure is checked against the outcome the rule implies."""

from __future__ import annotations

import threading

import orjson
import pytest

from tests.run.conftest import kill_group, read_jsonl, start_cli, wait_until
from tests.support.chat_server import Reply

JUDGE = "openai-compatible:pair-judge"
START_A, END_A = "[The Start of Assistant A's Answer]\n", "\n[The End of Assistant A's Answer]"
START_B, END_B = "[The Start of Assistant B's Answer]\n", "\n[The End of Assistant B's Answer]"
# Which run's output is the better one, per case: B on 6, A on 2, neither on 2.
BETTER = {
    "answers.q0": "b",
    "answers.q1": "b",
    "answers.q2": "b",
    "answers.q3": "b",
    "answers.q4": "a",
    "answers.q5": None,
    "tasks.t0": "b",
    "tasks.t1": "b",
    "tasks.t2": "a",
    "tasks.t3": None,
}


def outputs(run: str) -> dict[str, str]:
    """Each case's output in run `run`: a good one where it is the better (or neither is)."""
    return {
        case: ("good" if better in (run, None) else "poor") + f" answer from {run} to {case}"
        for case, better in BETTER.items()
    }


def shown(text: str) -> tuple[str, str]:
    """(assistant A's answer, assistant B's answer) in a pairwise prompt."""
    a = text.split(START_A, 1)[1].split(END_A, 1)[0]
    b = text.split(START_B, 1)[1].split(END_B, 1)[0]
    return a, b


def is_pairwise(text: str) -> bool:
    return text.startswith("[User Question]")


def fair(text: str):
    if not is_pairwise(text):
        return None
    a, b = shown(text)
    if a.startswith("good") and not b.startswith("good"):
        return Reply(content="Assistant A answers the question; B does not.\n\n[[A]]")
    if b.startswith("good") and not a.startswith("good"):
        return Reply(content="Assistant A misses the point, as the format \"[[A]]\" would not say.\n\n[[B]]")
    return Reply(content="Both answers are equally good.\n\n[[C]]")


def first_always(text: str):
    return Reply(content="The first answer is better.\n[[A]]") if is_pairwise(text) else None


def judge_requests(server) -> list:
    return [r for r in server.received() if "[User Question]" in str((r.body or {}).get("messages"))]


@pytest.fixture
def runs(built, cli, tmp_path):
    """Run directories A and B of fixtures/pairwise, each graded from its responses file."""
    release = built("pairwise")
    dirs = {}
    for run in ("a", "b"):
        responses = tmp_path / f"{run}.jsonl"
        lines = [orjson.dumps({"caseId": case, "output": text}) for case, text in outputs(run).items()]
        responses.write_bytes(b"\n".join(lines) + b"\n")
        graded = cli("grade", release, responses, "--run-dir", tmp_path / run)
        assert graded.code == 0, graded.stderr
        dirs[run] = tmp_path / run
    return dirs


def compare(cli, server, runs, out, *extra, env=None):
    args = ["compare", runs["a"], runs["b"], "--judge", JUDGE, "--judge-base-url", server.url, "-o", out, "--json"]
    return cli(*args, *extra, env=env)


def test_a_fair_judge_gives_the_expected_win_rate_asking_both_orders(cli, server, runs, tmp_path):
    server.judge(fair)
    result = compare(cli, server, runs, tmp_path / "cmp")
    assert result.code == 0, result.stderr
    figures = result.json["pairwise"]["figures"]
    assert figures["overall"] | {"winRateCI": None} == {
        "pairs": 10,
        "cases": 10,
        "errors": 0,
        "bWins": 6,
        "aWins": 2,
        "ties": 2,
        "winRate": 0.7,
        "winRateCI": None,
        "positionConsistency": 1.0,
    }
    low, high = figures["overall"]["winRateCI"]
    assert 0 < low < 0.7 < high < 1
    assert figures["evals"]["answers"]["winRate"] == 0.75 and figures["evals"]["tasks"]["winRate"] == 0.625
    assert figures["requests"] == {"total": 20, "replayed": 0, "cached": 0, "asked": 20}

    requests = judge_requests(server)
    assert len(requests) == 20
    # each pair in both orders: A's output first once, B's first once
    orders = {
        (r.body["messages"][1]["content"].split("\n", 2)[1], shown(r.body["messages"][1]["content"])) for r in requests
    }
    for case in BETTER:
        a, b = outputs("a")[case], outputs("b")[case]
        prompts = {question for question, pair in orders if pair in ((a, b), (b, a))}
        assert len(prompts) == 1 and sum(pair in ((a, b), (b, a)) for _, pair in orders) == 2
    body = requests[0].body
    assert body["temperature"] == 0 and body["seed"] == 0
    assert body["messages"][0]["content"].startswith("Please act as an impartial judge")

    pairs = read_jsonl(tmp_path / "cmp" / "pairs.jsonl")
    assert {p["caseId"]: p["winner"] for p in pairs} == {case: better or "tie" for case, better in BETTER.items()}
    assert len(read_jsonl(tmp_path / "cmp" / "judgments.jsonl")) == 20
    meta = orjson.loads((tmp_path / "cmp" / "comparison.json").read_bytes())
    assert meta["finishedAt"] is not None and meta["judge"]["models"] == [JUDGE]
    template = orjson.loads((tmp_path / "cmp" / "pairwise-template.json").read_bytes())
    assert template["name"] == "mt-bench-pair-v2" and template["system"] == body["messages"][0]["content"]

    text = cli(
        "compare", runs["a"], runs["b"], "--judge", JUDGE, "--judge-base-url", server.url, "-o", tmp_path / "cmp"
    )
    assert text.code == 0, text.stderr
    assert "70.0%" in text.stdout and "position" not in text.stderr
    assert len(judge_requests(server)) == 20  # replayed


def test_a_judge_biased_to_the_first_position_yields_ties_not_wins(cli, server, runs, tmp_path):
    server.judge(first_always)
    result = compare(cli, server, runs, tmp_path / "cmp")
    assert result.code == 0, result.stderr
    overall = result.json["pairwise"]["figures"]["overall"]
    assert (overall["bWins"], overall["aWins"], overall["ties"]) == (0, 0, 10)
    assert overall["winRate"] == 0.5 and overall["positionConsistency"] == 0.0
    assert {(p["first"], p["second"]) for p in read_jsonl(tmp_path / "cmp" / "pairs.jsonl")} == {("a", "b")}


def test_a_rerun_replays_every_verdict_and_another_directory_is_served_by_the_cache(cli, server, runs, tmp_path):
    server.judge(fair)
    first = compare(cli, server, runs, tmp_path / "cmp")
    assert first.code == 0, first.stderr
    assert len(judge_requests(server)) == 20
    again = compare(cli, server, runs, tmp_path / "cmp")
    assert again.code == 0, again.stderr
    assert len(judge_requests(server)) == 20  # zero requests: CMP_DIR's verdicts
    assert again.json["pairwise"]["figures"]["requests"] == {"total": 20, "replayed": 20, "cached": 0, "asked": 0}
    assert again.json["pairwise"]["figures"]["overall"] == first.json["pairwise"]["figures"]["overall"]
    assert again.json["pairwise"]["resumes"] == 1
    assert len(read_jsonl(tmp_path / "cmp" / "judgments.jsonl")) == 20  # nothing appended

    cached = compare(cli, server, runs, tmp_path / "cmp2")
    assert cached.code == 0 and len(judge_requests(server)) == 20
    assert cached.json["pairwise"]["figures"]["requests"]["cached"] == 20
    fresh = compare(cli, server, runs, tmp_path / "cmp3", "--no-cache")
    assert fresh.code == 0 and len(judge_requests(server)) == 40

    other = cli(
        "compare",
        runs["a"],
        runs["b"],
        "--judge",
        "openai-compatible:other",
        "--judge-base-url",
        server.url,
        "-o",
        tmp_path / "cmp",
    )
    assert other.code == 2 and "is not this comparison (judge differ)" in other.stderr
    rubric = compare(cli, server, runs, tmp_path / "cmp", "--rubric", "Prefer the shorter answer.")
    assert rubric.code == 2 and "rubric differ" in rubric.stderr
    assert len(judge_requests(server)) == 40


def test_unusable_replies_are_errors_asked_again_with_rerun_errors(cli, server, runs, tmp_path):
    def garbled(text):
        if is_pairwise(text) and "Question 5" in text:
            return Reply(content="I cannot tell.")
        return fair(text)

    server.judge(garbled)
    result = compare(cli, server, runs, tmp_path / "cmp")
    assert result.code == 1 and "--rerun-errors" in result.stderr
    overall = result.json["pairwise"]["figures"]["overall"]
    assert (overall["pairs"], overall["errors"], overall["winRate"]) == (9, 1, round(6.5 / 9, 6))
    bad = [p for p in read_jsonl(tmp_path / "cmp" / "pairs.jsonl") if p["winner"] is None]
    assert [p["caseId"] for p in bad] == ["answers.q5"] and "no verdict" in bad[0]["error"]

    server.judge(fair)
    replayed = compare(cli, server, runs, tmp_path / "cmp")
    assert replayed.code == 1 and len(judge_requests(server)) == 20
    rerun = compare(cli, server, runs, tmp_path / "cmp", "--rerun-errors")
    assert rerun.code == 0, rerun.stderr
    assert len(judge_requests(server)) == 22  # the two orders of the one pair in error
    assert rerun.json["pairwise"]["figures"]["overall"]["winRate"] == 0.7


def test_a_comparison_killed_while_judging_continues_asking_only_what_was_not_recorded(
    cli, cache_dir, server, runs, tmp_path
):
    gate = threading.Event()

    def held(text):
        if is_pairwise(text) and "Task 3" in text and shown(text)[0].endswith("from b to tasks.t3"):
            return Reply(content="[[C]]", hold=gate)
        return fair(text)

    server.judge(held)
    out = tmp_path / "cmp"
    args = ["compare", runs["a"], runs["b"], "--judge", JUDGE, "--judge-base-url", server.url, "-o", out]
    proc = start_cli(*args, cache=cache_dir)
    try:
        judgments = out / "judgments.jsonl"
        wait_until(lambda: judgments.exists() and judgments.read_bytes().count(b"\n") == 19, "19 verdicts recorded")
        kill_group(proc)
    finally:
        gate.set()
    assert not (out / "pairs.jsonl").exists()
    asked = len(judge_requests(server))
    server.judge(fair)
    resumed = compare(cli, server, runs, out)
    assert resumed.code == 0, resumed.stderr
    assert len(judge_requests(server)) == asked + 1
    assert resumed.json["pairwise"]["figures"]["overall"]["winRate"] == 0.7


def test_usage_errors_come_before_any_request(cli, server, runs, tmp_path):
    server.judge(fair)
    no_out = cli("compare", runs["a"], runs["b"], "--judge", JUDGE, "--judge-base-url", server.url)
    assert no_out.code == 2 and "-o CMP_DIR" in no_out.stderr
    panel = compare(cli, server, runs, tmp_path / "p", "--judge", "openai-compatible:second")
    assert panel.code == 2 and "takes one judge" in panel.stderr
    markdown = cli(
        "compare",
        runs["a"],
        runs["b"],
        "--judge",
        JUDGE,
        "--judge-base-url",
        server.url,
        "-o",
        tmp_path / "m",
        "--markdown",
    )
    assert markdown.code == 2 and "--markdown" in markdown.stderr
    stray = cli("compare", runs["a"], runs["b"], "--rubric", "x")
    assert stray.code == 2 and "only with pairwise judging" in stray.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    full = compare(cli, server, runs, tmp_path / "full")
    assert full.code == 2 and "not empty" in full.stderr
    assert judge_requests(server) == [] and not (tmp_path / "p").exists()


def test_a_judge_that_is_a_compared_model_is_refused_unless_allowed(built, cli, server, runs, tmp_path):
    release = built("pairwise")
    own = tmp_path / "own"
    model = cli("run", release, "--model", JUDGE, "--base-url", server.url, "-o", own)
    assert model.code == 0, model.stderr
    server.judge(fair)
    refused = cli("compare", runs["a"], own, "--judge", JUDGE, "--judge-base-url", server.url, "-o", tmp_path / "c")
    assert refused.code == 2 and "--allow-self-judge" in refused.stderr and judge_requests(server) == []
    allowed = cli(
        "compare",
        runs["a"],
        own,
        "--judge",
        JUDGE,
        "--judge-base-url",
        server.url,
        "-o",
        tmp_path / "c",
        "--allow-self-judge",
        "--json",
    )
    assert allowed.code == 0, allowed.stderr
    assert allowed.json["pairwise"]["judge"]["selfJudged"] == [JUDGE]
    asked = len(judge_requests(server))
    again = ["--judge-base-url", server.url, "-o", tmp_path / "c", "--allow-self-judge"]
    replayed = cli("compare", runs["a"], own, "--judge", JUDGE, *again)
    assert len(judge_requests(server)) == asked
    assert replayed.code == 0 and f"judge {JUDGE} (self-judged" in replayed.stdout, replayed.stderr
