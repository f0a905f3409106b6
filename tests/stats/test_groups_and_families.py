"""Breakdowns and families of comparisons, against independent oracles:
groups of cases by any label (each group's figures are those of its cases
alone, computed here by hand), the macro average (the plain mean of the
groups' means), per-sample tokens and cost; the p-value of test inversion
(it agrees with the interval at every level, found by scanning levels
here); Holm's step-down on those p-values worked by hand, and intervals that
agree with its decisions."""

from __future__ import annotations

import random
from statistics import fmean

import pytest

from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.multiple import holm_paired
from trunchbull.stats.paired import PairSums, excludes_zero, interval_p_value, paired_from_sums
from trunchbull.stats.run_stats import GroupTally, breakdown, case_groups, macro_average, tally_cases


def rows_of(outcomes: dict[str, list[int]], subject: dict[str, str]) -> tuple[list[dict], list[dict]]:
    """Results and records: one sample per case (outcome 1 = pass), 10 tokens and $0.5 each."""
    results, records = [], []
    for case_id, samples in outcomes.items():
        for repeat, passed in enumerate(samples):
            results.append(
                {
                    "evalId": "e",
                    "caseId": case_id,
                    "repeat": repeat,
                    "outcome": "pass" if passed else "fail",
                    "score": float(passed),
                }
            )
            records.append(
                {"usage": {"inputTokens": 6, "outputTokens": 4, "totalTokens": 10}, "cost": 0.5, "latencyMs": 3}
            )
    return results, records


def test_groups_by_a_label_hold_their_own_cases_figures_and_the_macro_is_their_plain_mean():
    rng = random.Random(7)
    subjects = ["algebra", "biology", "chemistry"]
    subject = {f"c{i}": subjects[i % 3] for i in range(60)}
    outcomes = {
        case: [rng.random() < (0.2 + 0.3 * subjects.index(subject[case])) for _ in range(2)] for case in subject
    }
    results, records = rows_of(outcomes, subject)
    cases = tally_cases(results, records)
    out = breakdown(cases, lambda _e, case_id: subject[case_id], repeats=2)
    assert list(out["groups"]) == subjects  # in order of first appearance
    rates = {}
    for name in subjects:
        mine = [case for case in subject if subject[case] == name]
        rates[name] = fmean(fmean(outcomes[case]) for case in mine)  # the mean over cases of each case's rate
        group = out["groups"][name]
        assert group["cases"] == 20 and group["samples"] == 40
        assert group["passRate"] == pytest.approx(rates[name], abs=1e-6)
        moments = Moments()
        for case in mine:
            moments.add_case(2, float(sum(outcomes[case])), float(sum(outcomes[case])))
        interval = mean_interval(moments)
        assert interval is not None and group["passRateCI"] == pytest.approx([interval.low, interval.high], abs=1e-6)
        assert group["tokens"]["total"] == 400 and group["cost"] == pytest.approx(20.0)
    assert out["macro"] == {
        "groups": 3,
        "passRate": pytest.approx(fmean(rates.values()), abs=1e-6),
        "meanScore": pytest.approx(fmean(rates.values()), abs=1e-6),
    }
    every = fmean(fmean(samples) for samples in outcomes.values())
    assert out["overall"]["passRate"] == pytest.approx(every, abs=1e-6)  # micro: every case alike


def test_macro_differs_from_micro_when_groups_differ_in_size():
    subject = {**{f"big{i}": "big" for i in range(30)}, "small0": "small", "small1": "small"}
    outcomes = {case: [1 if case.startswith("big") else 0] for case in subject}
    results, records = rows_of(outcomes, subject)
    grouped_cases = case_groups(tally_cases(results, records), (), lambda _e, c: subject[c])
    groups = {name: GroupTally.of(cases) for name, cases in grouped_cases.items()}
    overall = GroupTally.merged(groups.values())
    assert macro_average(groups.values())["passRate"] == 0.5  # (1 + 0) / 2
    assert overall.rates()["passRate"] == pytest.approx(30 / 32, abs=1e-6)


def test_per_sample_figures_do_not_grow_with_repeats():
    subject = {"a": "x", "b": "x"}
    once = GroupTally.of(list(tally_cases(*rows_of({"a": [1], "b": [0]}, subject)).values()))
    thrice = GroupTally.of(list(tally_cases(*rows_of({"a": [1, 1, 1], "b": [0, 0, 0]}, subject)).values()))
    assert thrice.tokens()["total"] == 3 * once.tokens()["total"] == 60
    assert (
        once.per_sample()
        == thrice.per_sample()
        == {
            "tokens": {"input": 6.0, "output": 4.0, "total": 10.0},
            "cost": 0.5,
        }
    )
    unknown = tally_cases(*rows_of({"a": [1]}, subject))
    for case in unknown.values():
        case.cost_known = False
    assert GroupTally.of(list(unknown.values())).per_sample()["cost"] is None


def family(rng: random.Random, shifts: list[float], n: int) -> list[PairSums]:
    out = []
    for shift in shifts:
        a = [float(rng.random() < 0.6) for _ in range(n)]
        b = [0.0 if x and rng.random() < shift else x for x in a]
        out.append(PairSums.of(a, b))
    return out


def test_the_inverted_p_value_agrees_with_the_interval_at_every_level():
    rng = random.Random(11)
    for sums in family(rng, [0.0, 0.05, 0.1, 0.2, 0.4], 50):
        p = interval_p_value(sums)
        for alpha in (0.001, 0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.5):
            at = paired_from_sums(sums, 1 - alpha)
            assert at is not None
            if abs(p - alpha) > 1e-5 * alpha:  # the bisection's precision
                assert (p < alpha) == excludes_zero(at), (p, alpha, at)


def by_hand_holm(p: list[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down: reject in order of p while p_(k) < alpha / (m - k)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected = [False] * len(p)
    for k, i in enumerate(order):
        if p[i] >= alpha / (len(p) - k):
            break
        rejected[i] = True
    return rejected


@pytest.mark.parametrize("seed", range(40))
def test_holm_intervals_agree_with_holms_decisions(seed):
    rng = random.Random(seed)
    shifts = [rng.choice([0.0, 0.05, 0.1, 0.15, 0.2, 0.3]) for _ in range(rng.randint(1, 6))]
    corrected = holm_paired(family(rng, shifts, rng.choice([20, 40, 80])))
    assert all(c is not None for c in corrected)
    p = [c.p_value for c in corrected]  # type: ignore[union-attr]
    expected = by_hand_holm(p)
    for c, reject in zip(corrected, expected):
        assert c is not None
        assert c.rejected == reject
        assert c.rejected == (c.high < 0 or c.low > 0)  # the interval shown agrees with the verdict
        assert c.rejected == (c.holm_p < 0.05)  # and with the corrected p-value
        assert c.confidence >= 0.95 and c.low <= c.result.low and c.high >= c.result.high  # never narrower than 95%
    if len(corrected) == 1:  # one comparison: the 95% interval, as compare gives it
        only = corrected[0]
        assert only is not None and (only.low, only.high, only.confidence) == (only.result.low, only.result.high, 0.95)


def test_holm_levels_step_down():
    # three comparisons that all differ clearly: tested at 1 - .05/3, 1 - .05/2, 1 - .05, smallest p first
    rng = random.Random(3)
    corrected = holm_paired(family(rng, [0.5, 0.6, 0.7], 120))
    levels = sorted((c.p_value, c.confidence) for c in corrected if c is not None)
    assert [round(confidence, 6) for _, confidence in levels] == [round(1 - 0.05 / 3, 6), 0.975, 0.95]
    assert all(c is not None and c.rejected for c in corrected)
