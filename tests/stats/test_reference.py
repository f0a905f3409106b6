"""The statistics against independent references on fixed tables: scipy's
Student t quantile and Wilson interval (scipy.stats.binomtest), Newcombe's
square-and-add interval for paired proportions computed from the 2×2 table
(with scipy's Wilson limits), Holm's adjusted p-values worked by hand."""

from __future__ import annotations

from math import sqrt

import pytest
from scipy.stats import binomtest
from scipy.stats import t as student_t

from trunchbull.stats.intervals import Moments, effective_size, mean_interval, wilson
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
def test_one_sample_per_case_is_wilsons_interval(n):
    for passed in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        ref = binomtest(passed, n).proportion_ci(0.95, method="wilson")
        interval = mean_interval(moments([(1, 1)] * passed + [(1, 0)] * (n - passed)))
        assert interval is not None and interval.effective_n == n
        assert (interval.low, interval.high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_the_issue_examples_get_honest_widths():
    # 0 of 6 samples passing over 2 cases: the cases are the unit, so Wilson for 0 of 2
    none = mean_interval(moments([(3, 0), (3, 0)]))
    assert none is not None and none.low == 0.0 and none.high == pytest.approx(Z95**2 / (2 + Z95**2))
    assert none.high == pytest.approx(0.6576, abs=1e-4)
    every = mean_interval(moments([(6, 6), (6, 6)]))
    assert every is not None and every.high == 1.0 and every.low == pytest.approx(1 - 0.6576, abs=1e-4)


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


def newcombe_from_table(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """Newcombe (1998) method 10 for the paired difference p2 - p1 (B passes - A passes)
    from the table a = both pass, b = A only, c = B only, d = neither, with phi from the
    table with half a count added to every cell."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    w1 = binomtest(a + b, n).proportion_ci(method="wilson")
    w2 = binomtest(a + c, n).proportion_ci(method="wilson")
    ah, bh, ch, dh = a + 0.5, b + 0.5, c + 0.5, d + 0.5
    phi = (ah * dh - bh * ch) / sqrt((ah + bh) * (ch + dh) * (ah + ch) * (bh + dh))
    delta = p2 - p1
    low = delta - sqrt((p2 - w2.low) ** 2 - 2 * phi * (p2 - w2.low) * (w1.high - p1) + (w1.high - p1) ** 2)
    high = delta + sqrt((w2.high - p2) ** 2 - 2 * phi * (w2.high - p2) * (p1 - w1.low) + (p1 - w1.low) ** 2)
    return low, high


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
    ],
)
def test_paired_interval_is_newcombes_on_pass_fail_tables(table):
    a, b, c, d = table
    pairs = [(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d
    xa, xb = [float(x) for x, _ in pairs], [float(y) for _, y in pairs]
    result = paired_difference(xa, xb, moments([(1, int(x)) for x in xa]), moments([(1, int(y)) for y in xb]))
    assert result is not None and result.n == len(pairs)
    assert (result.low, result.high) == pytest.approx(newcombe_from_table(a, b, c, d), abs=1e-9)
    assert -1.0 <= result.low <= result.difference <= result.high <= 1.0


def test_no_discordant_pair_still_leaves_room_for_a_change():
    # 13 cases, the same outcome in both runs: the difference is 0, the interval is not
    same = [1.0] * 5 + [0.0] * 8
    result = paired_difference(same, same, moments([(1, int(x)) for x in same]), moments([(1, int(x)) for x in same]))
    assert result is not None and result.difference == 0.0 and result.p_value == 1.0
    assert result.low < -0.04 and result.high > 0.04
    # the augmented standard error: d = 0 for 13 cases, then -1 and +1 at weight 1/2, 0 at weight 1
    assert result.standard_error == pytest.approx(sqrt(1 / 15) / sqrt(15))
    assert result.mdd80 == pytest.approx((Z95 + Z_POWER) * result.standard_error)
    assert minimum_detectable_difference(0.1) == pytest.approx(0.28016, abs=1e-5)


def test_p_value_agrees_with_the_interval():
    a = [1.0] * 20 + [0.0] * 10
    for flips in range(0, 11):
        b = [0.0] * flips + a[flips:]
        result = paired_difference(a, b, moments([(1, int(x)) for x in a]), moments([(1, int(x)) for x in b]))
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


def test_wilson_accepts_a_fractional_size():
    low, high = wilson(0.3, 4.5)
    assert 0.0 < low < 0.3 < high < 1.0
