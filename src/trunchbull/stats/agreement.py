"""How much a panel of judges agrees (SPEC §4.1), over the samples every
judge of the panel graded: each sample is one row of counts, how many judges
gave it each grade (C, P, I).

* **Percent agreement** (Fleiss' P̄): for each sample, the share of the
  pairs of judges that gave it the same grade, averaged over the samples. 1
  when every judge always agrees; with two grades and judges flipping coins,
  about 0.5.
* **Fleiss' κ**: (P̄ − P̄e) / (1 − P̄e), where P̄e is the agreement chance
  alone would give judges who hand out the grades in the proportions seen
  (the sum of each grade's squared share). 1 is perfect agreement, 0 no more
  than chance, below 0 less; undefined (None) when every grade given is the
  same one (P̄e = 1). The formula is Fleiss (1971); statsmodels'
  `fleiss_kappa` (method "fleiss") is the reference bench/judge_agreement.py
  checks against.

No I/O; the counts come from stats/run_stats.py."""

from __future__ import annotations

from typing import NamedTuple, Sequence


class Agreement(NamedTuple):
    samples: int
    raters: int
    percent: float | None
    kappa: float | None


def agreement(rows: Sequence[Sequence[int]]) -> Agreement:
    """`rows`: per sample, the number of judges that gave each grade (every
    row summing to the same number of judges, at least 2)."""
    if not rows:
        return Agreement(0, 0, None, None)
    raters = sum(rows[0])
    if raters < 2 or any(sum(row) != raters for row in rows):
        raise ValueError("every sample needs the same number of judges, at least 2")
    n = len(rows)
    pairs = raters * (raters - 1)
    observed = sum(sum(c * (c - 1) for c in row) for row in rows) / (n * pairs)
    totals = [sum(column) for column in zip(*rows)]
    expected = sum((total / (n * raters)) ** 2 for total in totals)
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return Agreement(n, raters, observed, kappa)
