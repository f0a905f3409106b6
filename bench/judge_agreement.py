#!/usr/bin/env python3
"""A judge panel's agreement (stats/agreement.py) next to statsmodels' `fleiss_kappa`.

    .venv/bin/python bench/judge_agreement.py [--tables 2000] [--seed 0] [--reference-python PATH]

Generates random panels (2-9 judges, 1-3 grades in use with random biases, 1-200 samples, and
some unanimous, some split exactly), computes percent agreement and Fleiss' kappa with the
product's function, and kappa with statsmodels 0.15's `statsmodels.stats.inter_rater.fleiss_kappa`
(method "fleiss"), run by a Python that has it (a venv outside the repository:
--reference-python, default `$TRUNCHBULL_BENCH_CACHE/references/statsmodels/bin/python`, created
with pip on first use). Prints the largest difference; every table whose kappa is defined on one
side and not the other is listed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from trunchbull.stats.agreement import agreement  # noqa: E402

CACHE = Path(os.environ.get("TRUNCHBULL_BENCH_CACHE", Path.home() / ".cache" / "trunchbull-bench"))
STATSMODELS = "statsmodels==0.15.0"
REFERENCE = """
import json, sys, math
from statsmodels.stats.inter_rater import fleiss_kappa
out = []
for table in json.load(sys.stdin):
    value = float(fleiss_kappa(table, method="fleiss"))
    out.append(None if math.isnan(value) else value)
json.dump(out, sys.stdout)
"""


def reference_python(given: str | None) -> Path:
    if given:
        return Path(given)
    root = CACHE / "references" / "statsmodels"
    python = root / "bin" / "python"
    if not python.is_file():
        import peers

        subprocess.run([peers.find_python311(), "-m", "venv", str(root)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", STATSMODELS], check=True)
    return python


def tables(n: int, seed: int) -> list[list[list[int]]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        raters = rng.randint(2, 9)
        grades = rng.sample(range(3), rng.randint(1, 3))
        weights = [rng.random() + 0.01 for _ in grades]
        rows = []
        for _ in range(rng.randint(1, 200)):
            row = [0, 0, 0]
            if i % 10 == 0:  # unanimous samples
                row[rng.choice(grades)] = raters
            else:
                for grade in rng.choices(grades, weights=weights, k=raters):
                    row[grade] += 1
            rows.append(row)
        out.append(rows)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reference-python")
    args = parser.parse_args()
    generated = tables(args.tables, args.seed)
    ours = [agreement(rows).kappa for rows in generated]
    proc = subprocess.run(
        [str(reference_python(args.reference_python)), "-c", REFERENCE],
        input=json.dumps(generated),
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(proc.stdout)
    undefined = [i for i, (a, b) in enumerate(zip(ours, theirs)) if (a is None) != (b is None)]
    both = [(a, b) for a, b in zip(ours, theirs) if a is not None and b is not None]
    largest = max((abs(a - b) for a, b in both), default=0.0)
    none = sum(1 for a in ours if a is None)
    print(f"Fleiss' kappa on {len(generated):,} random panels (seed {args.seed}) vs statsmodels' fleiss_kappa:")
    print(
        f"  defined on both sides {len(both):,}, undefined on both {none - len(undefined):,}, on one side only {len(undefined)}"
    )
    print(f"  largest difference {largest:.3g}")
    for i in undefined[:20]:
        print(f"  UNDEFINED ON ONE SIDE: table {i}: ours {ours[i]!r}, statsmodels {theirs[i]!r}")
    return 0 if not undefined and largest < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
