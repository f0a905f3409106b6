"""The judge's costs (SPEC §4.1, §8.7): `--dry-run` plans the judge
requests (recorded, cached, to ask, tokens, cost) without calling anything;
a budget counts the judge's tokens like the model's and stops a run while it
judges (exit 3, resumable); `--max-cost` needs the judge's price; `grade
--judge` judges a responses file through the same judge."""

from __future__ import annotations

from math import ceil

import orjson

from tests.run.conftest import read_jsonl
from tests.run.test_run_judges import JUDGE, judge_requests, judge_rule, judged_run
from trunchbull.evaluators.judge_templates import (
    MODEL_GRADED_FACT_TEMPLATE,
    MODEL_GRADED_QA_TEMPLATE,
    default_instructions,
)

PRICES = f'["{JUDGE}"]\ninput = 1.0\noutput = 2.0\n'


def judge_prompts(release, output: str = "") -> list[str]:
    """The default judge prompt of each judged case for `output`, by str.format as Inspect renders it."""
    prompts = []
    for case in read_jsonl(release / "cases.jsonl"):
        spec = case["evaluate"]
        if spec["kind"] in ("rubric", "factuality"):
            template = MODEL_GRADED_QA_TEMPLATE if spec["kind"] == "rubric" else MODEL_GRADED_FACT_TEMPLATE
            prompts.append(
                template.format(
                    question=case["prompt"],
                    answer=output,
                    criterion=spec.get("rubric") or spec.get("expected"),
                    instructions=default_instructions(bool(spec.get("partialCredit"))),
                )
            )
    return prompts


def test_a_dry_run_plans_the_judge_requests_and_calls_nothing(built, cli, server, tmp_path):
    release = built("rubrics")
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    run_dir = tmp_path / "run"
    args = ["--judge", JUDGE, "--judge-base-url", server.url, "--prices", prices, "--max-response-bytes", "1024"]
    dry = cli("run", release, "--model", "echo", *args, "-o", run_dir, "--dry-run", "--json")
    assert dry.code == 0, dry.stderr
    plan = dry.json["judges"][JUDGE]
    assert (plan["requests"], plan["recorded"], plan["cached"], plan["toAsk"]) == (10, 0, 0, 10)
    assert plan["tokens"] == sum(ceil(len(prompt) / 4) for prompt in judge_prompts(release))
    assert plan["estimatedInputCost"] == round(plan["tokens"] * 1.0 / 1e6, 6)
    assert server.received() == [] and not run_dir.exists()

    server.judge(judge_rule)
    assert cli("run", release, "--model", "echo", *args, "-o", run_dir).code == 1  # 3 judge errors
    again = cli("run", release, "-o", run_dir, "--resume", "--dry-run", "--json")
    assert again.json["judges"][JUDGE]["recorded"] == 10 and again.json["judges"][JUDGE]["toAsk"] == 0
    rerun = cli("run", release, "-o", run_dir, "--resume", "--rerun-errors", "--dry-run", "--json")
    assert (rerun.json["judges"][JUDGE]["recorded"], rerun.json["judges"][JUDGE]["toAsk"]) == (7, 3)
    text = cli("run", release, "-o", run_dir, "--resume", "--dry-run")
    assert f"judge {JUDGE}: 10 request(s) planned: 10 recorded already" in text.stdout, text.stdout


def test_a_budget_stops_the_run_while_it_judges_and_resumes(built, cli, server, tmp_path):
    release = built("rubrics")
    run_dir = tmp_path / "run"
    stopped = judged_run(cli, server, release, run_dir, "--max-total-tokens", "1500")
    assert stopped.code == 3, stopped.stderr
    assert "budget reached while judging" in stopped.stderr and "--resume" in stopped.stderr
    assert len(read_jsonl(run_dir / "responses.jsonl")) == 11  # every sample is recorded
    recorded = read_jsonl(run_dir / "judgments.jsonl")
    assert 1 <= len(recorded) < 10 and not (run_dir / "results.jsonl").exists()
    spent = sum(line["usage"]["totalTokens"] for line in recorded)
    spent += sum(r["usage"]["totalTokens"] for r in read_jsonl(run_dir / "responses.jsonl"))
    assert spent <= 1500
    asked = len(judge_requests(server))
    resumed = cli("run", release, "-o", run_dir, "--resume", "--max-total-tokens", "100000")
    assert resumed.code == 1, resumed.stderr  # the fixture's three judge errors
    assert len(judge_requests(server)) - asked == 10 - len(recorded) + 1  # the rest (one of them retried, 429)
    assert len(read_jsonl(run_dir / "results.jsonl")) == 11


def test_max_cost_needs_the_judges_price(built, cli, server, tmp_path):
    run = cli(
        "run",
        built("rubrics"),
        "--model",
        "echo",
        "--judge",
        JUDGE,
        "--judge-base-url",
        server.url,
        "--max-cost",
        "1",
        "-o",
        tmp_path / "run",
    )
    assert run.code == 2 and f"the price of the judge {JUDGE} is unknown" in run.stderr, run.stderr
    assert server.received() == [] and not (tmp_path / "run").exists()


def test_grade_judges_a_responses_file(built, cli, server, tmp_path):
    release = built("rubrics")
    server.judge(judge_rule)
    answers = tmp_path / "answers.jsonl"
    lines = [
        {"caseId": "verdicts.pass", "output": "judge:pass Thirty days, gladly."},
        {"caseId": "verdicts.fail", "output": "judge:fail Never."},
        {"caseId": "plain", "output": "echo"},
    ]
    answers.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    judge = ["--judge", JUDGE, "--judge-base-url", server.url]
    graded = cli("grade", release, answers, *judge, "-o", tmp_path / "results.jsonl", "--json")
    assert graded.code == 2, graded.stderr  # the cases without a response
    rows = {r["caseId"]: r for r in read_jsonl(tmp_path / "results.jsonl")}
    assert (rows["verdicts.pass"]["outcome"], rows["verdicts.fail"]["outcome"]) == ("pass", "fail")
    assert rows["plain"]["outcome"] == "pass" and "repeat" not in rows["plain"]
    assert len(judge_requests(server)) == 2  # the cases without a response are not judged
    assert graded.json["overall"]["judge"]["requests"] == 2
    refused = cli("grade", release, answers, "-o", tmp_path / "again.jsonl")
    assert refused.code == 2 and "verdicts (rubric)" in refused.stderr and not (tmp_path / "again.jsonl").exists()
