"""Coverage of the intervals by simulation, where enumerating every outcome
(exact.py) is out of reach: many cases with repeats, continuous scores,
paired runs with repeats. Shared by tests/stats (a grid sized for CI) and
bench/stats_coverage.py (the full grid, for the record).

Each cell simulates many evals with a fixed seed: n cases whose pass
probabilities are drawn from a Beta distribution with mean p and
intra-case correlation rho (rho = 0: every case has probability p), each
case run `repeats` times. Coverage is the share of simulated evals whose
interval holds the true mean p. The data are made with numpy; every
interval is computed by trunchbull.stats itself (called once per distinct
table, since small tables repeat)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.paired import paired_difference


@dataclass(frozen=True)
class Cell:
    n: int
    p: float
    repeats: int
    rho: float
    coverage: float
    sims: int


def case_probabilities(rng, p: float, rho: float, size, uniforms=None):
    """Per-case pass probabilities with mean p and intra-case correlation rho."""
    if rho == 0 or p in (0.0, 1.0):
        return np.full(size, p)
    k = 1 / rho - 1
    if uniforms is None:
        return rng.beta(p * k, (1 - p) * k, size=size)
    from scipy.stats import beta  # paired runs share a case's difficulty: the same quantile of each Beta

    return beta.ppf(uniforms, p * k, (1 - p) * k)


def moments_of(passes, repeats: int) -> list[Moments]:
    """Moments.add_case over each row of pass counts, as array sums (the
    same sums add_case accumulates, so the interval code sees what a run's
    summary would give it)."""
    n = passes.shape[1]
    x = passes / repeats
    return [
        Moments(n, sx, sxx, int(az), int(bo), n * repeats, sy, sy)
        for sx, sxx, az, bo, sy in zip(
            x.sum(1).tolist(),
            (x * x).sum(1).tolist(),
            (x > 0).sum(1).tolist(),
            (x < 1).sum(1).tolist(),
            passes.sum(1).astype(float).tolist(),
        )
    ]


def pass_rate_coverage(n: int, p: float, repeats: int, rho: float, sims: int, seed: int) -> Cell:
    rng = np.random.default_rng(seed)
    passes = rng.binomial(repeats, case_probabilities(rng, p, rho, (sims, n)))
    covered = 0
    seen: dict[tuple, bool] = {}  # small tables repeat: one interval per distinct set of moments
    for m in moments_of(passes, repeats):
        key = (m.sum_x, m.sum_xx, m.above_zero, m.below_one)
        hit = seen.get(key)
        if hit is None:
            interval = mean_interval(m)
            assert interval is not None
            hit = seen[key] = interval.low <= p + 1e-12 and p - 1e-12 <= interval.high
        covered += hit
    return Cell(n, p, repeats, rho, covered / sims, sims)


def score_coverage(n: int, mu: float, repeats: int, rho: float, sims: int, seed: int, concentration: float = 4.0):
    """Mean scores in [0, 1]: each case's mean score drawn with mean mu and
    correlation rho, each sample's score from a Beta around it."""
    rng = np.random.default_rng(seed)
    case_means = case_probabilities(rng, mu, rho, (sims, n))
    case_means = np.clip(case_means, 1e-6, 1 - 1e-6)
    scores = rng.beta(
        (case_means * concentration)[..., None], ((1 - case_means) * concentration)[..., None], (sims, n, repeats)
    )
    x = scores.mean(axis=2)
    covered = 0
    for sx, sxx, az, bo, sy, syy in zip(
        x.sum(1).tolist(),
        (x * x).sum(1).tolist(),
        (x > 0).sum(1).tolist(),
        (x < 1).sum(1).tolist(),
        scores.sum((1, 2)).tolist(),
        (scores**2).sum((1, 2)).tolist(),
    ):
        interval = mean_interval(Moments(n, sx, sxx, az, bo, n * repeats, sy, syy))
        assert interval is not None
        covered += interval.low <= mu <= interval.high
    return Cell(n, mu, repeats, rho, covered / sims, sims)


@dataclass(frozen=True)
class PairedCell:
    n: int
    p_a: float
    p_b: float
    repeats: int
    rho: float
    coverage: float
    inside: bool  # every interval stayed inside [-1, 1]
    sims: int


def paired_coverage(n: int, p_a: float, p_b: float, repeats: int, rho: float, sims: int, seed: int) -> PairedCell:
    """Two runs of the same cases: a case's difficulty (one uniform per case)
    sets its probability in both runs, so the runs are correlated the way
    models are on the same questions; the true difference is p_b - p_a."""
    rng = np.random.default_rng(seed)
    u = rng.random((sims, n))
    pa = rng.binomial(repeats, case_probabilities(rng, p_a, rho, (sims, n), u))
    pb = rng.binomial(repeats, case_probabilities(rng, p_b, rho, (sims, n), u))
    truth = p_b - p_a
    both = np.concatenate([pa, pb], axis=1)
    tables, counts = np.unique(both, axis=0, return_counts=True)
    covered, inside = 0, True
    for table, count in zip(tables, counts):
        ka, kb = table[:n].tolist(), table[n:].tolist()
        result = paired_difference([k / repeats for k in ka], [k / repeats for k in kb], [repeats] * n)
        assert result is not None
        inside = inside and -1.0 <= result.low <= result.high <= 1.0
        covered += int(count) * (result.low <= truth + 1e-12 and truth - 1e-12 <= result.high)
    return PairedCell(n, p_a, p_b, repeats, rho, covered / sims, inside, sims)
