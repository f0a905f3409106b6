"""The paired difference of two runs' means over the cases both graded
(B − A), with an interval that stays inside [−1, 1].

Each run's mean over the shared cases has its interval from intervals.py
(Wilson on the clustered effective size); the difference's interval is
Newcombe's square-and-add (Newcombe 1998, method 10; the MOVER of Zou &
Donner 2008):

    low  = d − √((b − l_B)² + (u_A − a)² − 2r (b − l_B)(u_A − a))
    high = d + √((u_B − b)² + (a − l_A)² − 2r (u_B − b)(a − l_A))

with r the correlation of the paired case means. Pairing is what r
rewards: cases that are hard for both runs make r large and the interval
narrow. r is computed with half a pseudo-case in each corner of the unit
square ((0,0), (0,1), (1,0), (1,1)), Agresti & Min's (2005) half-count in each
cell of the 2×2 table, so that runs that agree on every case observed (no
discordant pair) do not get r = 1 and an interval of almost no width: 13
cases without a change do not show that no change could have been missed.
Since r ≤ 1, low ≥ l_B − u_A and high ≤ u_B − l_A: the interval stays inside [−1, 1].

The standard error (for power and the minimum detectable difference) is
the paired one, sd(d)/√n, over the same augmented pairs (so it is never 0);
the p-value (for the multiple-comparison correction) is the normal
p-value of d over the interval's half-width on the side of 0, which is below
0.05 exactly when the 95% interval excludes 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt

from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.quantiles import CONFIDENCE, Z95, Z_POWER, normal_quantile, two_sided_p

# half a pseudo-case in each corner: (a, b, weight)
CORNERS = ((0.0, 0.0, 0.5), (0.0, 1.0, 0.5), (1.0, 0.0, 0.5), (1.0, 1.0, 0.5))


@dataclass(frozen=True, slots=True)
class PairedDifference:
    n: int
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    standard_error: float
    p_value: float
    mdd80: float  # the smallest true difference this many cases would detect 4 times in 5


def _correlation(a: list[float], b: list[float]) -> float:
    pairs = [(x, y, 1.0) for x, y in zip(a, b)] + list(CORNERS)
    weight = sum(w for _, _, w in pairs)
    mean_a = sum(x * w for x, _, w in pairs) / weight
    mean_b = sum(y * w for _, y, w in pairs) / weight
    saa = sum(w * (x - mean_a) ** 2 for x, _, w in pairs)
    sbb = sum(w * (y - mean_b) ** 2 for _, y, w in pairs)
    sab = sum(w * (x - mean_a) * (y - mean_b) for x, y, w in pairs)
    return sab / sqrt(saa * sbb)  # the corners make both sums positive


def paired_standard_error(diffs: list[float]) -> float:
    """sd(d)/√n over the case differences and the corners' (−1, +1, 0, 0 at weight ½)."""
    values = [(d, 1.0) for d in diffs] + [(b - a, w) for a, b, w in CORNERS]
    weight = sum(w for _, w in values)
    mean = sum(d * w for d, w in values) / weight
    variance = sum(w * (d - mean) ** 2 for d, w in values) / weight
    return sqrt(variance / weight)


def paired_difference(
    a: list[float], b: list[float], moments_a: Moments, moments_b: Moments, confidence: float = CONFIDENCE
) -> PairedDifference | None:
    """`a`, `b`: the case means of the shared cases, in the same order;
    `moments_a`, `moments_b`: those cases' moments in each run (intervals.py)."""
    n = len(a)
    if n == 0:
        return None
    mean_a, mean_b = moments_a.sum_x / n, moments_b.sum_x / n
    ia, ib = mean_interval(moments_a, confidence), mean_interval(moments_b, confidence)
    assert ia is not None and ib is not None
    r = _correlation(a, b)
    d = mean_b - mean_a
    down_b, up_a = mean_b - ib.low, ia.high - mean_a
    up_b, down_a = ib.high - mean_b, mean_a - ia.low
    low = d - sqrt(max(down_b**2 + up_a**2 - 2 * r * down_b * up_a, 0.0))
    high = d + sqrt(max(up_b**2 + down_a**2 - 2 * r * up_b * down_a, 0.0))
    low, high = max(-1.0, min(low, d)), min(1.0, max(high, d))
    z = normal_quantile(0.5 + confidence / 2)
    toward_zero = (high - d) if d < 0 else (d - low)
    if d == 0:
        p = 1.0
    elif toward_zero <= 0:
        p = 0.0
    else:
        p = two_sided_p(d / (toward_zero / z))
    se = paired_standard_error([y - x for x, y in zip(a, b)])
    return PairedDifference(n, mean_a, mean_b, d, low, high, se, p, minimum_detectable_difference(se))


def minimum_detectable_difference(standard_error: float) -> float:
    """The true difference a two-sided 95% test detects with 80% power:
    (z₀.₉₇₅ + z₀.₈₀) · SE ≈ 2.80 · SE."""
    return (Z95 + Z_POWER) * standard_error


def cases_needed(difference: float, sd: float) -> int:
    """Cases for 80% power to detect `difference` at 95%, when the case
    differences have standard deviation `sd`: ((z₀.₉₇₅ + z₀.₈₀) · sd / difference)²."""
    from math import ceil

    return ceil(((Z95 + Z_POWER) * sd / difference) ** 2)
