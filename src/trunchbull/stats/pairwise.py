"""The figures of a pairwise judging (`compare --judge`, SPEC §9): how often
run B's output is preferred to run A's, and how often the judge's verdict
survives swapping the outputs' positions. No I/O.

Each pair (a case and a repeat both runs answered) was judged twice, A
shown first and B shown first; its `winner` is `"b"` or `"a"` when both
orders preferred that run, `"tie"` when they said tie or disagreed (a
preference that flips with the order is the position's, not the output's:
MT-Bench's rule, FastChat's `inconsistent`), None when a judge reply could
not be used (an error: left out of every figure but `errors`).

* **Win rate** of B over A: a pair counts 1 for B, 0 for A, ½ for a tie;
  a case's value is the mean over its pairs, and the win rate the mean over
  cases, with the interval of intervals.py on those case values (the unit
  is the case, as for a pass rate). With one pair per case the values are
  0, ½ or 1 and the interval is the continuity-corrected Wilson interval on
  the cases; its coverage is at least 95% at every distribution of wins,
  ties and losses on a grid of 0.02, for 2, 3, 5, 8, 13, 20, 30 and 40
  cases (tests/stats/test_pairwise.py enumerates every outcome exactly;
  the worst is 95.6%): ties only lower the variance the Wilson bound
  allows for. 0.5 is no preference.
* **Position consistency**: the share of judged pairs whose two verdicts
  agree once mapped to runs (both B, both A, or both tie). A judge that
  always prefers the first output it is shown scores 0; it is also what
  turns its preferences into ties.
"""

from __future__ import annotations

from typing import Iterable

from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.run_stats import rounded

B_SHARE = {"b": 1.0, "a": 0.0, "tie": 0.5}


class PairTally:
    """A group's pairs (an eval's, or every pair)."""

    __slots__ = ("pairs", "errors", "consistent", "counts", "cases")

    def __init__(self) -> None:
        self.pairs = self.errors = self.consistent = 0
        self.counts = {"b": 0, "a": 0, "tie": 0}
        self.cases: dict[str, list[float]] = {}  # case ID → [pairs, sum of B's share, sum of its squares]

    def add(self, pair: dict) -> None:
        winner = pair.get("winner")
        if winner not in B_SHARE:
            self.errors += 1
            return
        self.pairs += 1
        self.consistent += bool(pair.get("consistent"))
        self.counts[winner] += 1
        share = B_SHARE[winner]
        case = self.cases.setdefault(pair["caseId"], [0, 0.0, 0.0])
        case[0] += 1
        case[1] += share
        case[2] += share * share

    def statistics(self) -> dict:
        moments = Moments.of_cases((int(count), total, total_sq) for count, total, total_sq in self.cases.values())
        interval = mean_interval(moments)
        return {
            "pairs": self.pairs,
            "cases": len(self.cases),
            "errors": self.errors,
            "bWins": self.counts["b"],
            "aWins": self.counts["a"],
            "ties": self.counts["tie"],
            "winRate": rounded(moments.mean),
            "winRateCI": None if interval is None else [rounded(interval.low), rounded(interval.high)],
            "positionConsistency": rounded(self.consistent / self.pairs) if self.pairs else None,
        }


def pairwise_figures(pairs: Iterable[dict]) -> dict:
    """Per eval (by the pairs' `evalId`, in first-seen order) and overall."""
    evals: dict[str, PairTally] = {}
    overall = PairTally()
    for pair in pairs:
        evals.setdefault(str(pair.get("evalId")), PairTally()).add(pair)
        overall.add(pair)
    return {
        "evals": {eval_id: tally.statistics() for eval_id, tally in evals.items()},
        "overall": overall.statistics(),
    }
