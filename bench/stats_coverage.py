"""Coverage of the 95% intervals by simulation, the full grid (tests/stats
runs it with fewer simulated evals where they are costly):

    .venv/bin/python bench/stats_coverage.py [--sims 10000] [--paired-sims 10000]

Pass rates: 2, 3, 10, 30, 100, 1,000 cases × p = 0, 0.02, 0.5, 0.98, 1 ×
(1 repeat; 5 repeats with between-case spreads of intra-case correlation 0,
0.3 and 0.6). Paired differences: the same case counts × pairs of pass
rates × (1 repeat, independent or correlated runs; 5 repeats, correlation
0.3). Prints each design's worst cell and the mean coverage; the figures go
to bench/README.md."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from tests.stats.simulation import paired_coverage, pass_rate_coverage  # noqa: E402

NS = (2, 3, 10, 30, 100, 1000)
PS = (0.0, 0.02, 0.5, 0.98, 1.0)
PAIRS = (
    (0.0, 0.0),
    (0.02, 0.02),
    (0.5, 0.5),
    (0.5, 0.6),
    (0.9, 0.98),
    (0.02, 0.1),
    (0.0, 1.0),
    (1.0, 1.0),
    (0.5, 0.98),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=10_000)
    parser.add_argument("--paired-sims", type=int, default=10_000)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"pass-rate intervals, {args.sims:,} simulated evals per cell")
    for repeats, rho in ((1, 0.0), (5, 0.0), (5, 0.3), (5, 0.6)):
        cells = [pass_rate_coverage(n, p, repeats, rho, args.sims, seed=17 * n + int(p * 100)) for n in NS for p in PS]
        worst = min(cells, key=lambda c: c.coverage)
        mean = statistics.fmean(c.coverage for c in cells)
        print(
            f"  repeats {repeats}, spread {rho}: worst {worst.coverage:.4f} (n={worst.n}, p={worst.p}), "
            f"mean {mean:.4f} over {len(cells)} cells"
        )
    print(f"paired differences, {args.paired_sims:,} simulated pairs of runs per cell")
    for repeats, rho in ((1, 0.0), (1, 0.6), (5, 0.3)):
        cells = [
            paired_coverage(n, a, b, repeats, rho, args.paired_sims, seed=29 * n + int(100 * a + 10 * b))
            for n in NS
            for a, b in PAIRS
        ]
        worst = min(cells, key=lambda c: c.coverage)
        mean = statistics.fmean(c.coverage for c in cells)
        inside = all(c.inside for c in cells)
        print(
            f"  repeats {repeats}, spread {rho}: worst {worst.coverage:.4f} (n={worst.n}, {worst.p_a} vs {worst.p_b}), "
            f"mean {mean:.4f} over {len(cells)} cells; every interval inside [-1, 1]: {inside}"
        )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
