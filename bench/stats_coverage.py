"""Coverage of the 95% intervals at every true rate, the full grid
(tests/stats runs a smaller one):

    .venv/bin/python bench/stats_coverage.py [--sims 2000] [--paired-sims 1000]

Exact (tests/stats/exact.py: every outcome enumerated), at true rates 0,
0.01, …, 1: pass rates with one sample per case at every n from 2 to 100
and at 200, 500 and 1,000 cases; with five repeats (intra-case correlation
0, 0.3, 0.6 and 1: repeats that always agree) from 2 to 12 cases; paired
differences with one sample per case at every 2×2 joint distribution on a
grid of 0.02 from 2 to 12 cases and 0.05 at 20 and 30. By seeded simulation
(tests/stats/simulation.py): five repeats at 30 and 100 cases, paired runs
with five repeats. Then the expected width of the one-sample interval next
to Wilson's without the correction (written out here) at 30, 100 and 1,000
cases. Prints each design's worst cell; the figures go to bench/README.md."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from tests.stats import exact  # noqa: E402
from tests.stats.simulation import paired_coverage, pass_rate_coverage  # noqa: E402
from trunchbull.stats.quantiles import Z95  # noqa: E402

RATES = exact.rates(0.01)


def worst_over(cells: dict) -> str:
    """`cells`: label → (coverage array, where array)."""
    label, (coverage, where) = min(cells.items(), key=lambda item: item[1][0].min())
    i = int(coverage.argmin())
    return f"{coverage[i]:.4f} ({label}, at {where[i]})"


def one_sample() -> None:
    cells = {f"n={n}": (exact.pass_rate_coverage(n, 1, 0.0, RATES), RATES) for n in [*range(2, 101), 200, 500, 1000]}
    print(f"  one sample per case, n = 2 … 100, 200, 500, 1,000: worst {worst_over(cells)}")


def repeats_exact() -> None:
    for rho in (0.0, 0.3, 0.6, 1.0):
        cells = {f"n={n}": (exact.pass_rate_coverage(n, 5, rho, RATES), RATES) for n in range(2, 13)}
        print(f"  5 repeats, intra-case correlation {rho}, n = 2 … 12: worst {worst_over(cells)}")


def repeats_simulated(sims: int) -> None:
    for n in (30, 100):
        for rho in (0.0, 0.3):
            cells = [pass_rate_coverage(n, float(p), 5, rho, sims, seed=7 * n + i) for i, p in enumerate(RATES)]
            w = min(cells, key=lambda c: c.coverage)
            print(f"  5 repeats, correlation {rho}, n = {n}, {sims:,} sims per rate: worst {w.coverage:.4f} (p={w.p})")


def paired_exact() -> None:
    for associated in (True, False):
        cells = {}
        for n in [*range(2, 13), 20, 30]:
            grid = exact.joints(0.02 if n <= 12 else 0.05, associated)
            cells[f"n={n}"] = (exact.paired_coverage(n, grid), grid)
        name = "independent or positively associated runs" if associated else "any joint distribution"
        print(f"  paired, one sample per case, {name}, n = 2 … 12, 20, 30: worst {worst_over(cells)}")
        if not associated:
            from5 = {k: v for k, v in cells.items() if int(k[2:]) >= 5}
            print(f"    from 5 cases: worst {worst_over(from5)}")


def paired_simulated(sims: int) -> None:
    steps = np.round(np.arange(0, 1.01, 0.1), 1)
    for rho in (0.0, 0.3):
        cells = [
            paired_coverage(n, float(a), float(b), 5, rho, sims, seed=29 * n + int(100 * a + 10 * b))
            for n in (2, 3, 5, 10, 30, 100)
            for a in steps
            for b in steps
        ]
        w = min(cells, key=lambda c: c.coverage)
        inside = all(c.inside for c in cells)
        print(
            f"  paired, 5 repeats, correlation {rho}, {sims:,} sims per cell: worst {w.coverage:.4f} "
            f"(n={w.n}, {w.p_a} vs {w.p_b}); every interval inside [-1, 1]: {inside}"
        )


def wilson_width(x: np.ndarray, n: int) -> np.ndarray:
    p, z2 = x / n, Z95 * Z95
    half = Z95 / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    center = (p + z2 / (2 * n)) / (1 + z2 / n)
    return np.minimum(1, center + half) - np.maximum(0, center - half)


def widths() -> None:
    print("expected width with one sample per case: Wilson's → continuity-corrected (this one)")
    for n in (30, 100, 1000):
        x = np.arange(n + 1)
        outcomes, lows, highs = exact.pass_rate_intervals(n, 1)
        ours = np.empty(n + 1)
        ours[outcomes[:, 1]] = highs - lows  # row: (failed, passed) cases
        theirs = wilson_width(x, n)
        line = []
        for p in (0.5, 0.1, 0.02):
            pm = binom.pmf(x, n, p)
            a, b = float(pm @ theirs), float(pm @ ours)
            line.append(f"p={p}: {a:.4f} → {b:.4f} (+{100 * (b / a - 1):.1f}%)")
        ps = np.linspace(0.005, 0.995, 199)
        a, b = (float(np.mean([binom.pmf(x, n, p) @ w for p in ps])) for w in (theirs, ours))
        line.append(f"mean over p: +{100 * (b / a - 1):.1f}%")
        print(f"  {n:,} cases: " + "; ".join(line))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=2_000)
    parser.add_argument("--paired-sims", type=int, default=1_000)
    args = parser.parse_args()
    started = time.perf_counter()
    print("pass-rate intervals, coverage at true rates 0, 0.01, …, 1")
    one_sample()
    repeats_exact()
    repeats_simulated(args.sims)
    print("paired differences")
    paired_exact()
    paired_simulated(args.paired_sims)
    widths()
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
