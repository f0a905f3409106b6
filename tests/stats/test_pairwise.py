"""The figures of pairwise judging (stats/pairwise.py): the win rate and
position consistency counted by hand, and the win rate's interval's exact
coverage over every outcome of n pairs (one per case), each case a B win,
an A win or a tie with probabilities on a grid: the outcome's probability is
multinomial (tests/stats/exact.py: scipy, independent of trunchbull.stats),
its interval computed once by stats/pairwise.py itself."""

from __future__ import annotations

import numpy as np
import pytest

from tests.stats import exact
from trunchbull.stats.pairwise import pairwise_figures

STEP = 0.02
MIN_COVERAGE = 0.95  # measured: 0.956 (40 cases) to 0.968 (5) at the worst grid point


def pair(case: str, winner: str | None, eval_id: str = "e") -> dict:
    consistent = None if winner is None else winner != "tie"
    return {"caseId": case, "repeat": 0, "evalId": eval_id, "winner": winner, "consistent": consistent}


def test_win_rate_and_consistency_counted_by_hand():
    pairs = [pair("c1", "b"), pair("c2", "b"), pair("c3", "a"), pair("c4", "tie"), pair("c5", None, "f")]
    pairs[3]["consistent"] = False  # the orders disagreed: a tie
    figures = pairwise_figures(pairs)
    overall = figures["overall"]
    assert (overall["pairs"], overall["errors"], overall["bWins"], overall["aWins"], overall["ties"]) == (4, 1, 2, 1, 1)
    assert overall["winRate"] == pytest.approx((1 + 1 + 0 + 0.5) / 4)
    assert overall["positionConsistency"] == 0.75
    assert figures["evals"]["f"]["pairs"] == 0 and figures["evals"]["f"]["winRate"] is None
    # repeats of one case: the case's mean is one observation
    repeated = pairwise_figures([{**pair("c1", "b"), "repeat": r} for r in range(3)] + [pair("c2", "a")])
    assert repeated["overall"]["winRate"] == 0.5 and repeated["overall"]["cases"] == 2


def _intervals(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outcomes (B wins, ties, A wins), lows, highs) for every outcome of n pairs."""
    outcomes = exact.compositions(n, 3)
    lows, highs = np.empty(len(outcomes)), np.empty(len(outcomes))
    for i, (b, tie, a) in enumerate(outcomes.tolist()):
        winners = ["b"] * b + ["tie"] * tie + ["a"] * a
        ci = pairwise_figures(pair(f"c{j}", w) for j, w in enumerate(winners))["overall"]["winRateCI"]
        lows[i], highs[i] = ci
    return outcomes, lows, highs


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 20, 30, 40])
def test_the_win_rate_interval_holds_every_mix_of_wins_ties_and_losses(n):
    outcomes, lows, highs = _intervals(n)
    grid = [(pb, pt) for pb in exact.rates(STEP) for pt in exact.rates(STEP) if pb + pt <= 1 + 1e-9]
    probs = np.array([[pb, pt, max(1 - pb - pt, 0.0)] for pb, pt in grid])
    chances = exact.multinomial(outcomes, probs)  # one row per grid point
    truths = probs[:, 0] + probs[:, 1] / 2  # B's expected share
    coverage = np.array([row[exact.held(lows, highs, t)].sum() for row, t in zip(chances, truths)])
    i = int(coverage.argmin())
    assert coverage[i] >= MIN_COVERAGE, f"{coverage[i]:.4f} at P(B)={grid[i][0]}, P(tie)={grid[i][1]}"
