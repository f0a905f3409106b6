"""Critical values: one convention everywhere. Every interval is a 95%
interval whose critical value is the standard normal's z = Φ⁻¹(0.975)
(from the standard library's NormalDist); where a variance is estimated
from few cases, the Korn–Graubard degrees-of-freedom adjustment scales the
effective sample size by (z / t_df)², with t_df Student's t quantile at the
same probability (intervals.py). The t quantile is computed here in pure
Python, so that the summary of every run does not import scipy (1–2 s on a
busy machine): for integer degrees of freedom up to 200 by inverting the
closed-form distribution function (Abramowitz & Stegun 26.7.3–4), above that
by the Cornish–Fisher expansion (A&S 26.7.5), which is accurate there to
~1e-10. tests/stats checks both against scipy."""

from __future__ import annotations

from functools import lru_cache
from math import cos, pi, sin, sqrt, tan
from statistics import NormalDist

CONFIDENCE = 0.95
POWER = 0.80
_NORMAL = NormalDist()


def normal_quantile(p: float) -> float:
    return _NORMAL.inv_cdf(p)


def normal_cdf(x: float) -> float:
    return _NORMAL.cdf(x)


Z95 = normal_quantile(0.5 + CONFIDENCE / 2)
Z_POWER = normal_quantile(POWER)
EXACT_DF = 200


def _central_t(theta: float, df: int) -> float:
    """P(|T| ≤ √df·tan θ) for Student's t with `df` degrees of freedom."""
    c, s = cos(theta), sin(theta)
    c2 = c * c
    if df % 2:  # odd: (2/π)(θ + sin θ (cos θ + 2/3 cos³θ + …))
        if df == 1:
            return 2 * theta / pi
        term, total = c, c
        for j in range(1, (df - 1) // 2):
            term *= c2 * (2 * j) / (2 * j + 1)
            total += term
        return 2 / pi * (theta + s * total)
    term, total = 1.0, 1.0  # even: sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + …)
    for j in range(1, df // 2):
        term *= c2 * (2 * j - 1) / (2 * j)
        total += term
    return s * total


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: the t with P(T ≤ t) = p, for p in (0.5, 1) and integer df ≥ 1."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 < p < 1 and df ≥ 1, got p={p}, df={df}")
    target = 2 * p - 1
    if df <= EXACT_DF:
        lo, hi = 0.0, pi / 2
        for _ in range(100):  # bisection on θ = atan(t/√df): P(|T| ≤ t) rises from 0 to 1
            mid = (lo + hi) / 2
            if _central_t(mid, df) < target:
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-15:
                break
        return sqrt(df) * tan((lo + hi) / 2)
    x = normal_quantile(p)
    x2 = x * x
    return (
        x
        + (x2 + 1) * x / (4 * df)
        + ((5 * x2 + 16) * x2 + 3) * x / (96 * df**2)
        + (((3 * x2 + 19) * x2 + 17) * x2 - 15) * x / (384 * df**3)
        + ((((79 * x2 + 776) * x2 + 1482) * x2 - 1920) * x2 - 945) * x / (92160 * df**4)
    )


def two_sided_p(statistic: float) -> float:
    """The two-sided p-value of a standard normal statistic."""
    return 2 * (1 - normal_cdf(abs(statistic)))
