"""The statistics against independent references on fixed tables: scipy's
Student t quantile and continuity-corrected Wilson interval
(scipy.stats.binomtest, `wilsoncc`), the score equation solved numerically
at a fractional size, the square-and-add interval for paired proportions
computed from the 2×2 table's discordant cells (with scipy's limits),
Holm's adjusted p-values worked by hand."""

from __future__ import annotations

from math import sqrt

import pytest
from scipy.optimize import brentq
from scipy.stats import binomtest
from scipy.stats import t as student_t

from trunchbull.stats.intervals import Moments, corrected_wilson, effective_size, mean_interval
from trunchbull.stats.multiple import holm
from trunchbull.stats.paired import minimum_detectable_difference, paired_difference
from trunchbull.stats.passk import pass_at_k, pass_hat_k, shown_ks
from trunchbull.stats.quantiles import Z95, Z_POWER, t_quantile


def moments(cases: list[tuple[int, int]]) -> Moments:
    """(samples, passes) per case, binary samples."""
    m = Moments()
    for count, passes in cases:
        m.add_case(count, float(passes), float(passes))
    return m


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 29, 30, 99, 199, 200, 201, 500, 10_000])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995, 0.99975])
def test_t_quantile_matches_scipy(df, p):
    assert t_quantile(p, df) == pytest.approx(student_t.ppf(p, df), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 13, 30, 100, 1000])
def test_one_sample_per_case_is_the_continuity_corrected_wilson_interval(n):
    for passed in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        ref = binomtest(passed, n).proportion_ci(0.95, method="wilsoncc")
        interval = mean_interval(moments([(1, 1)] * passed + [(1, 0)] * (n - passed)))
        assert interval is not None and interval.effective_n == n
        assert (interval.low, interval.high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_the_issue_examples_get_honest_widths():
    # 0 of 6 samples passing over 2 cases: the cases are the unit, so the interval for 0 of 2
    none = mean_interval(moments([(3, 0), (3, 0)]))
    ref = binomtest(0, 2).proportion_ci(0.95, method="wilsoncc")
    assert none is not None and none.low == 0.0 and none.high == pytest.approx(ref.high, abs=1e-12)
    assert none.high == pytest.approx(0.8021, abs=1e-4)  # Wilson's own: 0.6576
    every = mean_interval(moments([(6, 6), (6, 6)]))
    assert every is not None and every.high == 1.0 and every.low == pytest.approx(1 - 0.8021, abs=1e-4)


def test_repeats_count_between_the_cases_and_the_samples():
    # repeats that always agree (temperature 0) add nothing: n_eff is the number of cases
    deterministic = moments([(5, 5)] * 30 + [(5, 0)] * 20)
    assert effective_size(deterministic) == 50
    # independent repeats (every case passes 2 or 3 of 5) are nearly worth their samples:
    # the design effect is below 1, so n_eff is capped at the 250 samples, then scaled by
    # (z / t_49)² for a variance estimated from 50 cases
    independent = moments([(5, 2)] * 25 + [(5, 3)] * 25)
    assert effective_size(independent) == pytest.approx(250 * (Z95 / student_t.ppf(0.975, 49)) ** 2)
    # with the passes in two cases only, df = 1: the interval widens to Wilson's over the 50 cases
    rare = moments([(5, 3), (5, 2)] + [(5, 0)] * 48)
    assert effective_size(rare) == 50


def mover_from_table(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """The square-and-add interval for p01 - p10 (B passes - A passes) from the
    table a = both pass, b = A only, c = B only, d = neither: scipy's
    continuity-corrected Wilson limits for the discordant proportions c/n and
    b/n, and the correlation of the two indicators (-sqrt(pu pv / ((1-pu)(1-pv))))
    with half a count added to the cells (0,0), (1,0) and (0,1)."""
    n = a + b + c + d
    u, v = c / n, b / n
    wu = binomtest(c, n).proportion_ci(method="wilsoncc")
    wv = binomtest(b, n).proportion_ci(method="wilsoncc")
    pu, pv = (c + 0.5) / (n + 1.5), (b + 0.5) / (n + 1.5)
    r = -sqrt(pu * pv / ((1 - pu) * (1 - pv)))
    delta = u - v
    low = delta - sqrt((u - wu.low) ** 2 + (wv.high - v) ** 2 - 2 * r * (u - wu.low) * (wv.high - v))
    high = delta + sqrt((wu.high - u) ** 2 + (v - wv.low) ** 2 - 2 * r * (wu.high - u) * (v - wv.low))
    return max(low, -1.0), min(high, 1.0)


@pytest.mark.parametrize(
    "table",
    [
        (5, 0, 0, 8),
        (8, 3, 1, 1),
        (0, 0, 0, 13),
        (13, 0, 0, 0),
        (0, 13, 0, 0),
        (0, 0, 13, 0),
        (40, 5, 12, 43),
        (1, 1, 1, 1),
        (0, 2, 1, 0),
    ],
)
def test_paired_interval_is_the_square_and_add_over_the_discordant_cells(table):
    a, b, c, d = table
    pairs = [(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d
    xa, xb = [float(x) for x, _ in pairs], [float(y) for _, y in pairs]
    result = paired_difference(xa, xb)
    assert result is not None and result.n == len(pairs)
    assert (result.low, result.high) == pytest.approx(mover_from_table(a, b, c, d), abs=1e-9)
    assert -1.0 <= result.low <= result.difference <= result.high <= 1.0


def test_no_discordant_pair_still_leaves_room_for_a_change():
    # 13 cases, the same outcome in both runs: the difference is 0, the interval is not;
    # it reaches as far as 0 changes of 13 allow either way
    same = [1.0] * 5 + [0.0] * 8
    result = paired_difference(same, same)
    assert result is not None and result.difference == 0.0 and result.p_value == 1.0
    assert result.low < -0.2 and result.high > 0.2
    assert (result.low, result.high) == pytest.approx(mover_from_table(5, 0, 0, 8), abs=1e-12)
    # the augmented standard error: d = 0 for 13 cases, then -1 and +1 at weight 1/2, 0 at weight 1
    assert result.standard_error == pytest.approx(sqrt(1 / 15) / sqrt(15))
    assert result.mdd80 == pytest.approx((Z95 + Z_POWER) * result.standard_error)
    assert minimum_detectable_difference(0.1) == pytest.approx(0.28016, abs=1e-5)


def test_repeats_narrow_a_paired_interval_only_as_far_as_their_samples_allow():
    # 40 cases, B one repeat in five better on 10 of them: each weighted by its 5 samples, the
    # gains' interval is the one-mean interval of 10 cases at 0.2 and 30 at 0 over 200 samples
    a = [0.4] * 40
    b = [0.6] * 10 + [0.4] * 30
    one = paired_difference(a, b)
    five = paired_difference(a, b, [5] * 40)
    assert one is not None and five is not None
    assert five.difference == one.difference == pytest.approx(0.05)
    assert one.low < five.low < 0.05 < five.high < one.high
    gains = moments([(5, 1)] * 10 + [(5, 0)] * 30)
    gain = mean_interval(gains)
    assert gain is not None and gain.effective_n > 40
    assert five.high == pytest.approx(0.05 + sqrt((gain.high - 0.05) ** 2 + 0.0), abs=1e-12)


def test_p_value_agrees_with_the_interval():
    a = [1.0] * 20 + [0.0] * 10
    for flips in range(0, 11):
        b = [0.0] * flips + a[flips:]
        result = paired_difference(a, b)
        assert result is not None
        assert (result.p_value < 0.05) == (result.high < 0 or result.low > 0)


def test_holm_by_hand():
    # sorted: .005·4 = .02, .01·3 = .03, .03·2 = .06, .04·1 = .04 → raised to .06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0]) and holm([]) == []


def test_pass_at_k_unbiased_estimator_by_hand():
    # n=5 samples, c=2 passed: pass@2 = 1 - C(3,2)/C(5,2) = 0.7; pass@3 = 1 - 1/10 = 0.9
    assert pass_at_k([(5, 2)], 5) == pytest.approx({"1": 0.4, "2": 0.7, "3": 0.9, "4": 1.0, "5": 1.0})
    assert pass_hat_k([(3, 3), (3, 2), (3, 0)], 3) == pytest.approx(1 / 3)
    assert shown_ks(20) == [1, 2, 5, 10, 20] and shown_ks(5) == [1, 2, 5] and shown_ks(2) == [1, 2]


def score_bound(mean: float, n: float, side: int) -> float:
    """The root of (mean - pi)^2 = z^2 pi (1 - pi) / n below (side -1) or above (+1) the mean,
    found numerically: Wilson's bound from its definition."""
    if (side < 0 and mean <= 0) or (side > 0 and mean >= 1):
        return min(max(mean, 0.0), 1.0)

    def f(pi: float) -> float:
        return (mean - pi) ** 2 - Z95**2 * pi * (1 - pi) / n

    return brentq(f, 0.0, mean) if side < 0 else brentq(f, mean, 1.0)


@pytest.mark.parametrize("mean,n", [(0.3, 4.5), (0.05, 17.25), (0.97, 61.8), (0.5, 2.2), (0.01, 250.5)])
def test_corrected_wilson_at_a_fractional_size_solves_the_score_equation(mean, n):
    # the bounds are the score-equation roots at the mean moved half an observation toward 1/2
    low, high = corrected_wilson(mean, n)
    half = 1 / (2 * n)
    assert low == pytest.approx(score_bound(max(mean - half, 0.0), n, -1), abs=1e-10)
    assert high == pytest.approx(score_bound(min(mean + half, 1.0), n, +1), abs=1e-10)
    assert 0.0 <= low < mean < high <= 1.0
