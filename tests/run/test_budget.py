"""run/budget.py on its own: what a budget admits, counted by hand from the
records it is given (the run-level behaviour, exit code 3 and `--resume`, is
tests/run/test_run_costs.py's)."""

from __future__ import annotations

import orjson
import pytest

from trunchbull.common.diagnostics import UsageError
from trunchbull.run.budget import Budget, record_cost, record_tokens
from trunchbull.run.samples import Sample

PRICE = {"input": 1e-6, "output": 4e-6, "cachedInput": 5e-7}


def sample(k: int) -> Sample:
    return Sample(k, {"id": f"c{k}", "prompt": "p"}, 0, None)


def record(tokens_in: int, tokens_out: int, cost: float | None = None) -> bytes:
    usage = {"inputTokens": tokens_in, "outputTokens": tokens_out, "totalTokens": tokens_in + tokens_out}
    return orjson.dumps({"usage": usage, "cost": cost})


def tokens_budget(limit: int, estimate: int = 100, max_output: int | None = None) -> Budget:
    return Budget(None, limit, lambda _sample: estimate, max_output, None)


def test_a_record_counts_its_total_tokens_else_its_parts():
    assert record_tokens({"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 9}}) == 9
    assert record_tokens({"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": None}}) == 7
    assert record_tokens({"usage": {"inputTokens": True, "outputTokens": 4}}) == 4  # a boolean is no count
    assert record_tokens({"usage": None}) == record_tokens({}) == 0


def test_a_record_without_a_numeric_cost_costs_nothing_counted():
    assert record_cost({"cost": 0.25}) == 0.25 and record_cost({"cost": 2}) == 2.0
    assert record_cost({"cost": None}) == record_cost({"cost": True}) == record_cost({}) == 0.0


@pytest.mark.parametrize(
    "max_cost, max_tokens, price, message",
    [
        (-1.0, None, PRICE, "--max-cost takes an amount of USD ≥ 0, got -1"),
        (None, 0, None, "--max-total-tokens takes an integer ≥ 1, got 0"),
        (1.0, None, None, "--max-cost: the model's price is unknown"),
    ],
)
def test_limits_that_cannot_be_kept_are_usage_errors(max_cost, max_tokens, price, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        Budget(max_cost, max_tokens, lambda _sample: 1, None, price)


def test_one_sample_runs_alone_until_the_first_is_recorded():
    budget = tokens_budget(10_000)
    assert budget.admit(sample(0)) is True
    assert budget.admit(sample(1)) is None  # not yet: the first measures what a sample costs
    budget.settle(sample(0), record(50, 50))
    assert budget.admit(sample(1)) is True and budget.admit(sample(2)) is True


def test_the_largest_recorded_sample_is_the_estimate_and_the_limit_is_not_passed():
    # estimate before any record: 100 in + 100 out (no --max-tokens: as many out as in) = 200
    budget = tokens_budget(1_000)
    assert budget.admit(sample(0)) is True
    budget.settle(sample(0), record(100, 200))  # spent 300; the largest sample 300 > the estimate 200
    # each new sample reserves 300: 300 spent + 300 + 300 = 900 fits, a third would make 1,200
    assert [budget.admit(sample(k)) for k in (1, 2, 3)] == [True, True, False]
    assert budget.stopped and budget.admit(sample(4)) is False
    assert budget.admit(sample(1)) is True  # sent again after its worker was replaced: admitted already
    budget.settle(sample(1), record(10, 10))
    budget.settle(sample(2), record(10, 10))
    assert budget.spent_tokens == 340 and budget.admit(sample(5)) is False  # once stopped, no new sample


def test_a_cost_limit_counts_the_price_of_the_estimate_and_the_recorded_costs():
    # estimate: 1,000 tokens in at 1e-6 + --max-tokens 500 out at 4e-6 = 0.003 USD
    budget = Budget(0.0065, None, lambda _sample: 1_000, 500, PRICE)
    assert budget.admit(sample(0)) is True
    budget.settle(sample(0), record(1_000, 100, cost=0.0014))  # cheaper than estimated: the estimate stays
    assert budget.spent_cost == pytest.approx(0.0014)
    assert budget.admit(sample(1)) is True  # 0.0014 + 0.003 = 0.0044
    assert budget.admit(sample(2)) is False  # 0.0014 + 0.003 + 0.003 = 0.0074 > 0.0065
    assert budget.limits() == {"maxCost": 0.0065, "maxTotalTokens": None}


def test_what_the_run_directory_recorded_counts_as_spent_but_cached_samples_do_not():
    budget = tokens_budget(1_000)
    budget.count_recorded(
        {
            (0, "a"): {"usage": {"totalTokens": 400}, "cost": None},
            (0, "b"): {"usage": {"totalTokens": 900}, "cost": None, "cached": True},
        }
    )
    assert budget.spent_tokens == 400
    assert budget.admit(sample(0)) is True  # 400 + 200
    budget.settle(sample(0), record(100, 100))
    assert budget.admit(sample(1)) is True  # 600 + 200 = 800
    assert budget.admit(sample(2)) is True  # 600 + 200 + 200 = 1,000: at the limit, not past it
    assert budget.admit(sample(3)) is False  # 1,200


def test_a_record_that_is_not_json_releases_its_reservation_and_measures_nothing():
    budget = tokens_budget(10_000)
    assert budget.admit(sample(0)) is True
    budget.settle(sample(0), b"{not json")
    assert budget.spent_tokens == 0
    assert budget.admit(sample(1)) is True and budget.admit(sample(2)) is None  # still unmeasured


def test_the_message_says_both_limits_what_was_recorded_and_how_to_continue(tmp_path):
    budget = Budget(0.5, 2_000, lambda _sample: 1, None, PRICE)
    budget.spent_cost, budget.spent_tokens = 0.49, 1_999
    text = budget.message(tmp_path / "run", 7, 40)
    assert "--max-cost 0.5 (spent $0.4900) and --max-total-tokens 2,000 (used 1,999)" in text
    assert f"7 of 40 samples are recorded in {tmp_path / 'run'}" in text and "--resume" in text
