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


@dataclass(slots=True)
class PairSums:
    """The sums the paired statistics need of n pairs (a, b) of case means."""

    n: int = 0
    sum_a: float = 0.0
    sum_b: float = 0.0
    sum_aa: float = 0.0
    sum_bb: float = 0.0
    sum_ab: float = 0.0

    @classmethod
    def of(cls, a: list[float], b: list[float]) -> PairSums:
        return cls(
            len(a),
            sum(a),
            sum(b),
            sum(x * x for x in a),
            sum(y * y for y in b),
            sum(x * y for x, y in zip(a, b)),
        )

    def with_corners(self) -> tuple[float, float, float, float, float, float]:
        """(weight, Σa, Σb, Σa², Σb², Σab) with the four corners at weight ½ added."""
        w = [(x, y, v) for x, y, v in CORNERS]
        return (
            self.n + sum(v for _, _, v in w),
            self.sum_a + sum(x * v for x, _, v in w),
            self.sum_b + sum(y * v for _, y, v in w),
            self.sum_aa + sum(x * x * v for x, _, v in w),
            self.sum_bb + sum(y * y * v for _, y, v in w),
            self.sum_ab + sum(x * y * v for x, y, v in w),
        )


def _correlation(sums: PairSums) -> float:
    w, sa, sb, saa, sbb, sab = sums.with_corners()
    var_a, var_b = saa - sa * sa / w, sbb - sb * sb / w  # the corners make both positive
    return max(-1.0, min(1.0, (sab - sa * sb / w) / sqrt(var_a * var_b)))


def paired_standard_error(sums: PairSums) -> float:
    """sd(d)/√n over the case differences d = b − a and the corners' (0, +1, −1, 0 at weight ½)."""
    w, sa, sb, saa, sbb, sab = sums.with_corners()
    mean = (sb - sa) / w
    variance = max((sbb - 2 * sab + saa) / w - mean * mean, 0.0)
    return sqrt(variance / w)


def paired_difference(
    a: list[float], b: list[float], moments_a: Moments, moments_b: Moments, confidence: float = CONFIDENCE
) -> PairedDifference | None:
    """`a`, `b`: the case means of the shared cases, in the same order;
    `moments_a`, `moments_b`: those cases' moments in each run (intervals.py)."""
    return paired_from_sums(PairSums.of(a, b), moments_a, moments_b, confidence)


def paired_from_sums(
    sums: PairSums, moments_a: Moments, moments_b: Moments, confidence: float = CONFIDENCE
) -> PairedDifference | None:
    n = sums.n
    if n == 0:
        return None
    mean_a, mean_b = moments_a.sum_x / n, moments_b.sum_x / n
    ia, ib = mean_interval(moments_a, confidence), mean_interval(moments_b, confidence)
    assert ia is not None and ib is not None
    r = _correlation(sums)
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
    se = paired_standard_error(sums)
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
