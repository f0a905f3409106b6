"""Confidence intervals for a pass rate or a mean score over cases.

The unit is the case (SPEC §8.5): a case's mean over its graded repeats is
one observation in [0, 1], and the estimate is the mean of the case means.
The interval is Wilson's score interval with a continuity correction
(Wilson 1927; Newcombe 1998, method 4) on an effective sample size:

* one sample per case: exactly the continuity-corrected Wilson interval for
  `passed` of `n` cases (scipy's `wilsoncc`);
* with repeats, the samples of a case are correlated, so the effective size
  is n_eff = m(1 − m) / max(V_cluster, V_samples), where V_cluster is the
  clustered variance of the mean (the variance of the case means over n) and
  V_samples the variance the mean would have if every sample were
  independent (a design effect of at least 1, Kish 1965); it lies between n
  (repeats that add nothing) and the number of samples N, and is never more
  than N: a mean score's interval is never narrower than that of pass/fail
  samples with the same mean (scores concentrated near 1 in a handful of
  cases say little about the cases not drawn);
* a variance estimated from few informative cases is uncertain, so n_eff is
  scaled by (z / t_df)² (Korn & Graubard 1998), df = the fewest of n − 1,
  the cases with a mean above 0 and those with a mean below 1 (with rare
  passes, only the cases that pass carry the variance), never below n;
* an estimate of exactly 0 or 1 (no variance to measure) uses n_eff = n.

The continuity correction moves the mean half an observation (1 / (2 n_eff))
toward 1/2 before Wilson's bounds are taken: low = Wilson's lower bound at
m − 1/(2 n_eff), high = Wilson's upper bound at m + 1/(2 n_eff), 0 at m = 0
and 1 at m = 1. Wilson's own interval holds the true rate in 95% of evals on
average over p but not at every p: with few cases its coverage dips to 82%
(2 cases) and 84% (10 cases, p just below its lower bound for 1 pass). The
corrected interval holds it in at least 94.7% at every p for every n
(tests/stats enumerates the binomial outcomes exactly); it costs 9–11% of
width at 30 cases, 5–6% at 100 and ~2% at 1,000 (docs/decisions.md).

Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), argues for
clustered standard errors over cases; Wilson's score form keeps the
interval inside [0, 1] and gives an interval of honest width at 0/n and
n/n, where a normal interval has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt
from typing import Iterable

from trunchbull.stats.quantiles import CONFIDENCE, Z95, normal_quantile, t_quantile


@dataclass(slots=True)
class Moments:
    """What an interval needs of a group: per case (its mean x over its
    graded samples) and per sample (its value y: 1/0 for a pass rate, the
    score for a mean score). Add cases with `add_case`."""

    cases: int = 0
    sum_x: float = 0.0
    sum_xx: float = 0.0
    above_zero: int = 0  # cases with x > 0
    below_one: int = 0  # cases with x < 1
    samples: int = 0
    sum_y: float = 0.0
    sum_yy: float = 0.0

    def add_case(self, count: int, total: float, total_sq: float) -> None:
        """A case with `count` ≥ 1 samples whose values sum to `total` (and their squares to `total_sq`)."""
        x = total / count
        self.cases += 1
        self.sum_x += x
        self.sum_xx += x * x
        self.above_zero += x > 0
        self.below_one += x < 1
        self.samples += count
        self.sum_y += total
        self.sum_yy += total_sq

    @classmethod
    def of_cases(cls, cases: Iterable[tuple[int, float, float]]) -> Moments:
        """add_case for each (count, total, total_sq), in one loop."""
        n = above_zero = below_one = samples = 0
        sum_x = sum_xx = sum_y = sum_yy = 0.0
        for count, total, total_sq in cases:
            x = total / count
            n += 1
            sum_x += x
            sum_xx += x * x
            above_zero += x > 0
            below_one += x < 1
            samples += count
            sum_y += total
            sum_yy += total_sq
        return cls(n, sum_x, sum_xx, above_zero, below_one, samples, sum_y, sum_yy)

    def merge(self, other: Moments) -> None:
        for name in Moments.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def mean(self) -> float | None:
        return self.sum_x / self.cases if self.cases else None


def _wilson_low(mean: float, n: float, z: float) -> float:
    """The lower bound of Wilson's score interval for a proportion `mean`
    over `n` (which may be fractional: an effective size); by its symmetry
    the upper bound is 1 − the lower bound at 1 − mean."""
    z2 = z * z
    denom = 1 + z2 / n
    center = (mean + z2 / (2 * n)) / denom
    half = z / denom * sqrt(max(mean * (1 - mean), 0.0) / n + z2 / (4 * n * n))
    return max(0.0, center - half)


def corrected_wilson(mean: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval with the continuity correction: the mean
    moved half an observation toward 1/2 for each bound (module docstring)."""
    half = 1 / (2 * n)
    low = 0.0 if mean <= 0 else _wilson_low(max(mean - half, 0.0), n, z)
    high = 1.0 if mean >= 1 else 1.0 - _wilson_low(max(1.0 - mean - half, 0.0), n, z)
    return low, high


def effective_size(m: Moments, confidence: float = CONFIDENCE) -> float:
    """n_eff (module docstring); `m.cases` ≥ 1."""
    n = m.cases
    mean = m.sum_x / n
    q = mean * (1 - mean)
    if q <= 0:
        return float(n)
    v_cluster = max(m.sum_xx / n - mean * mean, 0.0) / n
    v_samples = max((m.sum_yy - 2 * mean * m.sum_y + m.samples * mean * mean) / m.samples, 0.0) / m.samples
    variance = max(v_cluster, v_samples)
    if variance <= 0:  # every sample has the same non-binary value: nothing says how it varies
        return float(n)
    raw = min(q / variance, float(m.samples))
    df = min(n - 1, m.above_zero, m.below_one)
    if raw <= n or df < 1:
        return float(n)
    p = 0.5 + confidence / 2
    z = normal_quantile(p)
    return max(float(n), raw * (z / t_quantile(p, df)) ** 2)


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float
    effective_n: float


def mean_interval(m: Moments, confidence: float = CONFIDENCE) -> Interval | None:
    """The interval of the mean of case means; None without cases."""
    if not m.cases:
        return None
    mean = min(max(m.sum_x / m.cases, 0.0), 1.0)
    n_eff = effective_size(m, confidence)
    low, high = corrected_wilson(mean, n_eff, normal_quantile(0.5 + confidence / 2))
    return Interval(low, high, n_eff)
