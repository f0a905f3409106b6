"""Multiple comparisons: Holm's step-down correction (Holm 1979), which
controls the family-wise error rate like Bonferroni and rejects at least as
often, and intervals that agree with its decisions.

`holm_paired` corrects a family of paired differences (stats/paired.py)
and gives each an interval that agrees with its corrected verdict: Holm
tests the comparison of rank k (by p-value, from 0) at level α/(m − k) and
stops at the first it cannot reject, so each rejected comparison gets its
(1 − α/(m − k)) interval, which excludes 0, and every comparison not
rejected gets the interval at the level where the procedure stopped, which
contains 0. Holm's procedure is run on the intervals themselves (a
comparison is rejected at a level exactly when its interval at that level
excludes 0), ordered by the p-value of test inversion, so the interval
shown, the verdict and the corrected p-value cannot disagree. The intervals
are wider than 95% ones: the price of many comparisons (with m = 1 they
are the 95% interval, as `compare` gives it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from trunchbull.stats.paired import PairedDifference, PairSums, excludes_zero, interval_p_value, paired_from_sums
from trunchbull.stats.quantiles import CONFIDENCE

ALPHA = 1 - CONFIDENCE


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the i-th smallest of m is
    multiplied by m − i (i from 0), made non-decreasing, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True, slots=True)
class Corrected:
    """One comparison of a family, corrected."""

    result: PairedDifference  # the difference, with its 95% interval
    low: float  # the interval at `confidence`, the level Holm tested it at
    high: float
    confidence: float
    p_value: float  # by test inversion (paired.interval_p_value)
    holm_p: float
    rejected: bool  # its interval at `confidence` excludes 0


def _at(sums: PairSums, confidence: float) -> PairedDifference:
    result = paired_from_sums(sums, confidence)
    assert result is not None  # a comparison with cases
    return result


def holm_paired(family: Sequence[PairSums], alpha: float = ALPHA) -> list[Corrected | None]:
    """Each comparison of the family corrected (None for one without cases)."""
    results = [paired_from_sums(sums) for sums in family]
    tested = [i for i, r in enumerate(results) if r is not None]
    p_values = {i: interval_p_value(family[i]) for i in tested}
    adjusted = dict(zip(tested, holm([p_values[i] for i in tested])))
    m = len(tested)
    remaining = sorted(tested, key=lambda i: p_values[i])
    shown: dict[int, tuple[PairedDifference, float, bool]] = {}
    while remaining:
        level = alpha / (m - len(shown))
        at = {i: _at(family[i], 1 - level) for i in remaining}
        # the smallest p first; one within the bisection's precision of it that excludes 0 goes before it
        head = next((i for i in remaining if excludes_zero(at[i])), None)
        if head is None:  # Holm stops here: none of the rest is rejected
            shown.update({i: (at[i], 1 - level, False) for i in remaining})
            break
        shown[head] = (at[head], 1 - level, True)
        remaining.remove(head)
    out: list[Corrected | None] = [None] * len(family)
    for i in tested:
        interval, confidence, rejected = shown[i]
        result = results[i]
        assert result is not None
        out[i] = Corrected(result, interval.low, interval.high, confidence, p_values[i], adjusted[i], rejected)
    return out
