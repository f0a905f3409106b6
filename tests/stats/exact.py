"""Exact coverage of the intervals, by enumerating every outcome an eval can
have, shared by tests/stats and bench/stats_coverage.py.

The cases of an eval are independent and alike, so what the interval code
sees is the multiset of per-case outcomes: with one sample per case the
number of passes (n + 1 outcomes), with K repeats how many cases passed
j of their K samples for each j (a composition of n into K + 1 parts), and
for a paired comparison how many cases each run passed alone or both or
neither (a 2×2 table). Each outcome's probability is multinomial (scipy
and numpy: an oracle independent of trunchbull.stats); each outcome's
interval is computed once by trunchbull.stats itself. The coverage at a
true rate is then the total probability of the outcomes whose interval
holds it: exact, with no simulation error."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln
from scipy.stats import betabinom, binom

from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.paired import paired_difference

TOLERANCE = 1e-12  # an interval "holds" a rate on its bound


def rates(step: float = 0.01) -> np.ndarray:
    return np.round(np.arange(0.0, 1.0 + step / 2, step), 10)


def compositions(n: int, parts: int) -> np.ndarray:
    """Every vector of `parts` non-negative integers summing to n, one per row."""
    if parts == 1:
        return np.array([[n]])
    rows = []
    for first in range(n + 1):
        rest = compositions(n - first, parts - 1)
        rows.append(np.column_stack([np.full(len(rest), first), rest]))
    return np.vstack(rows)


def per_case(p: float, repeats: int, rho: float) -> np.ndarray:
    """P(a case passes j of its `repeats` samples), j = 0 … repeats: its pass
    probability drawn from a Beta with mean p and intra-case correlation rho
    (0: every case has probability p; 1: its repeats always agree)."""
    j = np.arange(repeats + 1)
    if p in (0.0, 1.0) or rho == 0:
        return binom.pmf(j, repeats, p)
    if rho == 1:
        out = np.zeros(repeats + 1)
        out[0], out[-1] = 1 - p, p
        return out
    k = 1 / rho - 1
    return betabinom.pmf(j, repeats, p * k, (1 - p) * k)


def multinomial(counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """P(counts) for each row of `counts` (n cases into len(probs) kinds);
    `probs` one distribution, or one per row of a 2-D array (→ one row of
    probabilities per distribution)."""
    n = counts[0].sum()
    logp = np.log(np.maximum(probs, 1e-300))  # a kind of probability 0: exp(-690 × count) = 0 to double precision
    return np.exp(gammaln(n + 1) - gammaln(counts + 1).sum(1) + logp @ counts.T)


def held(lows: np.ndarray, highs: np.ndarray, truth: float) -> np.ndarray:
    return (lows <= truth + TOLERANCE) & (truth - TOLERANCE <= highs)


def pass_rate_intervals(n: int, repeats: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outcomes, lows, highs): every outcome of n cases of `repeats` binary
    samples (row: how many cases passed j of their samples), and the interval
    summary.json gives it."""
    outcomes = compositions(n, repeats + 1)
    lows, highs = np.empty(len(outcomes)), np.empty(len(outcomes))
    for i, row in enumerate(outcomes):
        m = Moments()
        for j, cases in enumerate(row.tolist()):
            for _ in range(cases):
                m.add_case(repeats, float(j), float(j))  # binary samples: the squares sum to the passes
        interval = mean_interval(m)
        assert interval is not None
        lows[i], highs[i] = interval.low, interval.high
    return outcomes, lows, highs


def pass_rate_coverage(n: int, repeats: int, rho: float, ps: np.ndarray) -> np.ndarray:
    """The exact coverage of the pass-rate interval at each true rate of `ps`."""
    outcomes, lows, highs = pass_rate_intervals(n, repeats)
    return np.array([multinomial(outcomes, per_case(p, repeats, rho))[held(lows, highs, p)].sum() for p in ps])


def tables(n: int) -> np.ndarray:
    """Every 2×2 table of n paired cases: (both pass, A only, B only, neither)."""
    return compositions(n, 4)


def paired_intervals(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tables, lows, highs): the interval `compare` gives each table of n
    cases with one sample per case."""
    found = tables(n)
    lows, highs = np.empty(len(found)), np.empty(len(found))
    for i, (both, a_only, b_only, neither) in enumerate(found.tolist()):
        a = [1.0] * both + [1.0] * a_only + [0.0] * b_only + [0.0] * neither
        b = [1.0] * both + [0.0] * a_only + [1.0] * b_only + [0.0] * neither
        result = paired_difference(a, b)
        assert result is not None
        lows[i], highs[i] = result.low, result.high
    return found, lows, highs


def joints(step: float, associated: bool) -> np.ndarray:
    """Joint distributions (both, A only, B only, neither) on a grid of `step`;
    `associated`: only those whose outcomes are independent or positively
    associated (both · neither ≥ A only · B only)."""
    k = round(1 / step)
    grid = compositions(k, 4) / k
    if associated:
        grid = grid[grid[:, 0] * grid[:, 3] >= grid[:, 1] * grid[:, 2] - TOLERANCE]
    return grid


def paired_coverage(n: int, grid: np.ndarray) -> np.ndarray:
    """The exact coverage of the paired interval at each joint distribution of `grid`."""
    found, lows, highs = paired_intervals(n)
    truth = grid[:, 2] - grid[:, 1]
    covered = (lows[None, :] <= truth[:, None] + TOLERANCE) & (truth[:, None] - TOLERANCE <= highs[None, :])
    out = np.empty(len(grid))
    for start in range(0, len(grid), 2048):
        part = slice(start, start + 2048)
        out[part] = (multinomial(found, grid[part]) * covered[part]).sum(1)
    return out
