"""The paired difference of two runs' means over the cases both graded
(B − A), with an interval that stays inside [−1, 1].

The difference is the mean over cases of d = b − a, each case's mean score
in run B less its mean in run A. It is split into what B gained and what it
lost: u = max(d, 0) (a case B improved) and v = max(−d, 0) (a case B
regressed), so that D = mean(u) − mean(v), and only the cases that changed
carry information, as in McNemar's test. Each of mean(u) and mean(v) is a
mean of values in [0, 1] with its own interval from intervals.py (the
continuity-corrected Wilson interval on the effective size, the case's
value counted once per sample it rests on: the fewer of its graded samples
in the two runs). The difference's interval combines them by the method of
variance estimates recovery (MOVER: Zou & Donner 2008; Newcombe's
square-and-add, 1998):

    low  = D − √((u − l_u)² + (h_v − v)² − 2r (u − l_u)(h_v − v))
    high = D + √((h_u − u)² + (v − l_v)² − 2r (h_u − u)(v − l_v))

with r ≤ 0 the correlation of u and v over the cases (a case cannot both
improve and regress), computed with half a pseudo-case at (0, 0), (1, 0)
and (0, 1) (Agresti & Min's (2005) half-count) so that it is defined when
no case changed. Since r ≤ 0, low ≥ l_u − h_v ≥ −1 and high ≤ h_u − l_v ≤ 1.

Why not the square-and-add over the two runs' own intervals (Newcombe's
method 10)? Its coverage at small n is far below 95% where it matters most:
with B fixing some cases and breaking none, the runs agree on most cases, r
is estimated near 1 and the interval is too narrow when few fixes happen to
be drawn (exactly 84% at 3 cases, 90% at 10, 92% at 30, 93% at 100).
Bounding the fixes and the breaks separately, the interval holds the true
difference in at least 95% of evals for every joint distribution whose
outcomes are independent or positively associated, at every n ≥ 2, and in
at least 93% for any joint distribution at all from 5 cases (90% at 2 cases
when the two models fail exactly each other's cases); tests/stats
enumerates the 2×2 tables exactly. docs/decisions.md has what it costs in
width.

The standard error (for power and the minimum detectable difference) is
the paired one, sd(d)/√n, over the d's with half a pseudo-case at −1, 0, 0
and +1 (so it is never 0); the p-value (for the multiple-comparison
correction) is the normal p-value of D over the interval's half-width on
the side of 0, which is below 0.05 exactly when the 95% interval excludes 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import sqrt
from typing import Sequence

from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.quantiles import CONFIDENCE, Z95, Z_POWER, normal_quantile, two_sided_p


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
    """What the paired statistics need of n pairs (a, b) of case means:
    the sums of a and b, and the moments (intervals.py) of the gains u and
    the losses v. Additive: a larger group is the merge of its parts."""

    sum_a: float = 0.0
    sum_b: float = 0.0
    gains: Moments = field(default_factory=Moments)
    losses: Moments = field(default_factory=Moments)

    @classmethod
    def of(cls, a: Sequence[float], b: Sequence[float], weights: Sequence[int] | None = None) -> PairSums:
        """`a`, `b`: the case means of the shared cases, in the same order;
        `weights`: per case, the samples its difference rests on (the fewer
        of its graded samples in the two runs; 1 each when None)."""
        k = [1] * len(a) if weights is None else [max(w, 1) for w in weights]
        u = [max(y - x, 0.0) for x, y in zip(a, b)]
        v = [max(x - y, 0.0) for x, y in zip(a, b)]
        return cls(
            sum(a),
            sum(b),
            Moments.of_cases((w, w * g, w * g * g) for w, g in zip(k, u)),
            Moments.of_cases((w, w * g, w * g * g) for w, g in zip(k, v)),
        )

    def merge(self, other: PairSums) -> None:
        self.sum_a += other.sum_a
        self.sum_b += other.sum_b
        self.gains.merge(other.gains)
        self.losses.merge(other.losses)


def _correlation(gains: Moments, losses: Moments) -> float:
    """corr(u, v) with half a pseudo-case at (0, 0), (1, 0) and (0, 1); u·v = 0 in every case."""
    w = gains.cases + 1.5
    mean_u, mean_v = (gains.sum_x + 0.5) / w, (losses.sum_x + 0.5) / w
    var_u = (gains.sum_xx + 0.5) / w - mean_u * mean_u  # the pseudo-cases make both positive
    var_v = (losses.sum_xx + 0.5) / w - mean_v * mean_v
    return max(-1.0, -mean_u * mean_v / sqrt(var_u * var_v))


def paired_standard_error(n: int, sum_d: float, sum_dd: float) -> float:
    """sd(d)/√n over the case differences d and half a pseudo-case at −1, 0, 0 and +1."""
    w = n + 2
    mean = sum_d / w
    return sqrt(max((sum_dd + 1) / w - mean * mean, 0.0) / w)


def paired_difference(
    a: Sequence[float], b: Sequence[float], weights: Sequence[int] | None = None, confidence: float = CONFIDENCE
) -> PairedDifference | None:
    """B − A over the shared cases (PairSums.of's arguments); None without cases."""
    return paired_from_sums(PairSums.of(a, b, weights), confidence)


def paired_from_sums(sums: PairSums, confidence: float = CONFIDENCE) -> PairedDifference | None:
    gains, losses = sums.gains, sums.losses
    n = gains.cases
    if n == 0:
        return None
    iu, iv = mean_interval(gains, confidence), mean_interval(losses, confidence)
    assert iu is not None and iv is not None
    r = _correlation(gains, losses)
    mean_u, mean_v = gains.sum_x / n, losses.sum_x / n
    mean_a, mean_b = sums.sum_a / n, sums.sum_b / n
    d = mean_b - mean_a  # = mean_u − mean_v
    down_u, up_v = mean_u - iu.low, iv.high - mean_v
    up_u, down_v = iu.high - mean_u, mean_v - iv.low
    low = d - sqrt(max(down_u**2 + up_v**2 - 2 * r * down_u * up_v, 0.0))
    high = d + sqrt(max(up_u**2 + down_v**2 - 2 * r * up_u * down_v, 0.0))
    low, high = max(-1.0, min(low, d)), min(1.0, max(high, d))
    se = paired_standard_error(n, gains.sum_x - losses.sum_x, gains.sum_xx + losses.sum_xx)
    return PairedDifference(
        n, mean_a, mean_b, d, low, high, se, _p_value(d, low, high, confidence), minimum_detectable_difference(se)
    )


def _p_value(d: float, low: float, high: float, confidence: float) -> float:
    z = normal_quantile(0.5 + confidence / 2)
    toward_zero = (high - d) if d < 0 else (d - low)
    if d == 0:
        return 1.0
    if toward_zero <= 0:
        return 0.0
    return two_sided_p(d / (toward_zero / z))


P_FLOOR = 1e-15  # the smallest p-value interval_p_value tells apart
_STEPS = 26  # bisection steps on log α: the bracket is within 1e-6 of p, relatively


def excludes_zero(result: PairedDifference) -> bool:
    return result.high < 0 or result.low > 0


def interval_p_value(sums: PairSums) -> float:
    """The p-value by test inversion: the smallest α at which the (1 − α)
    interval excludes 0 (the intervals are nested: a higher confidence
    never narrows them), found by bisection on log α. Unlike the normal
    p-value, it agrees with the interval at every level, not only at 95%:
    p < α exactly when the (1 − α) interval excludes 0 (to the bisection's
    precision). 1.0 when no interval excludes 0; P_FLOOR at most."""
    from math import exp, log

    def excludes(alpha: float) -> bool:
        result = paired_from_sums(sums, 1 - alpha)
        return result is not None and excludes_zero(result)

    low, high = log(P_FLOOR), log(1 - 1e-9)
    if not excludes(exp(high)):
        return 1.0
    if excludes(exp(low)):
        return P_FLOOR
    for _ in range(_STEPS):  # excludes at exp(high), not at exp(low)
        mid = (low + high) / 2
        if excludes(exp(mid)):
            high = mid
        else:
            low = mid
    return exp(high)


def minimum_detectable_difference(standard_error: float) -> float:
    """The true difference a two-sided 95% test detects with 80% power:
    (z₀.₉₇₅ + z₀.₈₀) · SE ≈ 2.80 · SE."""
    return (Z95 + Z_POWER) * standard_error
