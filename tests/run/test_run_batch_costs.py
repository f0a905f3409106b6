"""Costs and budgets in batch mode (SPEC §8.7, §8.8): records are costed at
the batch rate (the price file's, or half the live rate), a dry run
estimates at it, and --max-cost counts every request the run submits: a
batch cannot be half-started, so a request the budget does not cover is not
submitted at all; the run exits 3 once the batches it sent are recorded,
and --resume with a larger budget sends the rest."""

from __future__ import annotations

import orjson
import pytest

from tests.run.conftest import read_jsonl
from tests.run.test_run_batch import POLL, env, run_args
from tests.run.test_run_batch_resume import once_each, recorded_once
from tests.support.chat_server import Reply

MODEL = "openai:test-model"


def plain_usage(server, usage=(1000, 250)) -> None:
    for case in ("one", "two", "three", "four"):
        server.script(f"[plain-{case}]", [Reply(content="echo", usage=usage)])


def test_records_are_costed_at_the_batch_rate(built, batch_server, cli, tmp_path):
    plain_usage(batch_server)
    prices = tmp_path / "prices.toml"
    prices.write_text(f'["{MODEL}"]\ninput = 2.0\noutput = 8.0\nbatchOutput = 2.0\n')
    out = tmp_path / "run"
    args = ("--eval", "plain", "--prices", prices, "--batch", "--json", *POLL)
    run = cli(*run_args(built("agent"), batch_server, out, "openai", *args), env=env())
    assert run.code == 0, run.stderr
    # 1,000 input tokens at $1 per million (half the live $2: no batchInput given), 250 at $2 (batchOutput)
    assert [r["cost"] for r in read_jsonl(out / "responses.jsonl")] == [pytest.approx(0.0015)] * 4
    assert run.json["overall"]["cost"] == pytest.approx(0.006)
    price = orjson.loads((out / "run.json").read_bytes())["price"]
    assert (price["input"], price["batchInput"], price["batchOutput"]) == (2.0, 1.0, 2.0)


def test_the_default_table_has_batch_rates(built, batch_server, cli, tmp_path):
    release = built("agent")
    args = ["run", release, "--model", "openai:gpt-4o-mini", "--base-url", batch_server.url, "-o", tmp_path / "d"]
    live = cli(*args, "--eval", "plain", "--repeat", "1000", "--dry-run", "--json", env=env())
    batch = cli(*args, "--eval", "plain", "--repeat", "1000", "--dry-run", "--json", "--batch", env=env())
    assert live.code == batch.code == 0, batch.stderr
    assert batch.json["batch"] is True and batch.json["price"]["batchInput"] == 0.075
    assert batch.json["estimatedInputCost"] == pytest.approx(live.json["estimatedInputCost"] / 2)
    text = cli(*args, "--eval", "plain", "--dry-run", "--batch", env=env())
    assert "at $0.075 per million tokens (the batch rate)" in text.stdout
    assert not batch_server.requests


def test_a_cost_budget_counts_the_requests_submitted(built, batch_server, cli, tmp_path):
    plain_usage(batch_server, usage=(40, 10))
    prices = tmp_path / "prices.toml"
    prices.write_text(f'["{MODEL}"]\ninput = 10.0\noutput = 10.0\n')  # $5 per million in a batch
    out = tmp_path / "run"
    # a request is estimated at its input (7 tokens for plain.one and .two) and --max-tokens 100 of
    # output: $0.000535; three fit in $0.00165, a fourth does not
    args = ("--eval", "plain", "--repeat", "2", "--prices", prices, "--max-tokens", "100", "--batch", *POLL)
    first = cli(*run_args(built("agent"), batch_server, out, "openai", *args, "--max-cost", "0.00165"), env=env())
    assert first.code == 3, first.stderr
    assert "budget reached: --max-cost 0.00165" in first.stderr
    (batch,) = batch_server.batches.values()
    assert len(batch.items) == 3  # what the budget covers was submitted, in one batch; nothing else
    records = recorded_once(out, 3)
    assert sum(r["cost"] for r in records) <= 0.00165
    resumed = cli(*run_args(built("agent"), batch_server, out, "openai", "--resume", "--max-cost", "1"), env=env())
    assert resumed.code == 0, resumed.stderr
    assert [len(b.items) for b in batch_server.batches.values()] == [3, 5]
    once_each(batch_server)
    recorded_once(out, 8)
