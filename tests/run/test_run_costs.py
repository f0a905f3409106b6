"""Costs, budgets and dry runs (SPEC §8.7) with the real CLI, the real
openai-compatible provider and the local model server: a cost per sample
and per eval from a prices file (TOML and JSON), "unknown" for a model
without a price, a token budget that stops a run with exit code 3 losing
nothing it sent, then `--resume` with a larger budget, and `--dry-run`,
which sends no request and writes nothing."""

from __future__ import annotations

import orjson
import pytest

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply

MODEL = "openai-compatible:test-model"


def run_args(release, server, out, *extra) -> list:
    return ["run", release, "--model", MODEL, "--base-url", server.url, "-o", out, "--no-cache", *extra]


@pytest.mark.parametrize("kind", ["toml", "json"])
def test_cost_per_sample_and_per_eval_from_a_prices_file(built, server, cli, tmp_path, kind):
    for case in ("one", "two", "three", "four"):
        server.script(f"[plain-{case}]", [Reply(content="echo", usage=(1000, 250))])
    prices = tmp_path / f"prices.{kind}"
    if kind == "toml":
        prices.write_text(f'["{MODEL}"]\ninput = 2.0\noutput = 8.0\n')
    else:
        prices.write_text(orjson.dumps({MODEL: {"input": 2.0, "output": 8.0, "cachedInput": 0.5}}).decode())
    run = cli(*run_args(built("agent"), server, tmp_path / "run", "--eval", "plain", "--prices", prices, "--json"))
    assert run.code == 0, run.stderr
    # 1,000 input tokens at $2 per million and 250 output tokens at $8 per million: $0.004 a sample
    records = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert [r["cost"] for r in records] == [pytest.approx(0.004)] * 4
    assert run.json["overall"]["cost"] == pytest.approx(0.016) and run.json["evals"]["plain"]["cost"] == pytest.approx(
        0.016
    )
    meta = orjson.loads((tmp_path / "run" / "run.json").read_bytes())
    assert meta["price"]["input"] == 2.0 and meta["price"]["source"] == str(prices)
    text = cli("report", tmp_path / "run", "-o", tmp_path / "r.html")
    assert text.code == 0 and "$0.0160" in text.stdout


def test_a_model_without_a_price_costs_unknown_never_zero(built, server, cli, tmp_path):
    run = cli(*run_args(built("agent"), server, tmp_path / "run", "--eval", "plain"))
    assert run.code == 0, run.stderr
    assert {r["cost"] for r in read_jsonl(tmp_path / "run" / "responses.jsonl")} == {None}
    summary = orjson.loads((tmp_path / "run" / "summary.json").read_bytes())
    assert summary["overall"]["cost"] is None
    assert "unknown" in run.stdout.splitlines()[-2]  # the overall row
    bad = tmp_path / "bad.toml"
    bad.write_text(f'["{MODEL}"]\ninput = 1\nouptut = 2\n')
    refused = cli(*run_args(built("agent"), server, tmp_path / "other", "--prices", bad))
    assert refused.code == 2 and "did you mean 'output'" in refused.stderr
    no_price = cli(*run_args(built("agent"), server, tmp_path / "other", "--max-cost", "1"))
    assert no_price.code == 2 and "price is unknown" in no_price.stderr
    assert not (tmp_path / "other").exists()


def test_a_token_budget_stops_the_run_and_resume_finishes_it(built, server, cli, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    # 10 repeats of the four plain cases, 100 tokens each; one sample at a time
    for case in ("one", "two", "three", "four"):
        server.script(f"[plain-{case}]", [Reply(content="echo", usage=(60, 40))])
    first = cli(
        *run_args(release, server, out, "--eval", "plain", "--repeat", "10", "-j", "1", "--max-total-tokens", "1000")
    )
    assert first.code == 3, first.stderr
    assert "budget reached: --max-total-tokens 1,000" in first.stderr and "--resume" in first.stderr
    records = read_jsonl(out / "responses.jsonl")
    # nothing sent is lost: every request the server answered is a record, and the budget held
    assert len(records) == len(server.received()) and 1 <= len(records) < 40
    assert sum(r["usage"]["totalTokens"] for r in records) <= 1000
    stopped = orjson.loads((out / "run.json").read_bytes())
    assert stopped["finishedAt"] is None and stopped["budget"] == {"maxCost": None, "maxTotalTokens": 1000}
    assert not (out / "summary.json").exists()
    resumed = cli("run", release, "-o", out, "--resume", "--max-total-tokens", "100000", "--json")
    assert resumed.code == 0, resumed.stderr
    final = read_jsonl(out / "responses.jsonl")
    assert len(final) == 40 and len({(r["caseId"], r["repeat"]) for r in final}) == 40
    assert final[: len(records)] == records  # what was recorded is kept as it was
    assert len(server.received()) == 40  # nothing was asked twice
    assert resumed.json["overall"]["samples"] == 40
    finished = orjson.loads((out / "run.json").read_bytes())
    assert finished["budget"] == {"maxCost": None, "maxTotalTokens": 100000} and finished["resumes"] == 1


def test_dry_run_calls_nothing_and_writes_nothing(built, server, cli, tmp_path, cache_dir):
    release = built("agent")
    prices = tmp_path / "prices.toml"
    prices.write_text(f'["{MODEL}"]\ninput = 1.0\noutput = 4.0\n')
    args = [
        "run",
        release,
        "--model",
        MODEL,
        "--base-url",
        server.url,
        "--eval",
        "plain",
        "--prices",
        prices,
        "--max-tokens",
        "50",
    ]
    warm = cli(*args, "-o", tmp_path / "warm", "--case", "plain.one")  # puts plain.one in the response cache
    assert warm.code == 0, warm.stderr
    before = len(server.received())
    dry = cli(*args, "-o", tmp_path / "dry", "--repeat", "2", "--dry-run", "--json")
    assert dry.code == 0, dry.stderr
    assert len(server.received()) == before  # no request
    assert not (tmp_path / "dry").exists()
    out = dry.json
    assert (out["samples"], out["cached"], out["toRun"]) == (8, 1, 7)
    # characters of the prompts (and plain.three's system prompt) / 4, rounded up, per sample to run
    cases = {c["id"]: c for c in map(orjson.loads, (release / "cases.jsonl").read_bytes().splitlines())}
    plain = [c for c in cases.values() if c["evalId"] == "plain"]
    per_case = {c["id"]: -(-(len(c["prompt"]) + len(c.get("systemPrompt") or "")) // 4) for c in plain}
    assert out["estimatedInputTokens"] == 2 * sum(per_case.values()) - per_case["plain.one"]
    assert out["estimatedInputCost"] == pytest.approx(out["estimatedInputTokens"] * 1e-6)
    assert out["maxCostWithMaxTokens"] == pytest.approx(out["estimatedInputCost"] + 7 * 50 * 4e-6)
    text = cli(*args, "-o", tmp_path / "dry", "--dry-run")
    assert text.code == 0 and "3 to run" in text.stdout and "estimated input tokens" in text.stdout
    assert len(server.received()) == before and not (tmp_path / "dry").exists()


def test_a_run_whose_every_sample_failed_without_a_price_costs_unknown(built, server, cli, tmp_path):
    """Connection errors before any reply: nothing is billed, but without a
    price nothing says so; the cost is unknown, not $0.0000."""
    for case in ("one", "two", "three", "four"):
        server.script(f"[plain-{case}]", [Reply(reset=True)])
    run = cli(*run_args(built("agent"), server, tmp_path / "run", "--eval", "plain", "--retries", "0"))
    assert run.code == 1, run.stderr
    records = read_jsonl(tmp_path / "run" / "responses.jsonl")
    assert {r["error"]["kind"] for r in records} == {"connection"} and {r["cost"] for r in records} == {None}
    summary = orjson.loads((tmp_path / "run" / "summary.json").read_bytes())
    assert summary["overall"]["errors"] == 4 and summary["overall"]["cost"] is None
    assert summary["evals"]["plain"]["cost"] is None
    overall_row = run.stdout.splitlines()[-2]
    assert overall_row.startswith("overall") and "unknown" in overall_row and "$0.0000" not in overall_row
