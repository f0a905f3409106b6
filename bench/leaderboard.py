"""The leaderboard of 5 runs × 25,000 samples: wall time and peak memory of
a whole `python -m trunchbull leaderboard RUN… --json` process, next to a
floor measured in the same run: a process that reads the same files
(results.jsonl and responses.jsonl of every run) with polars alone.

    .venv/bin/python bench/leaderboard.py [--samples N] [--runs K] [--repeat R]

A 25,000-case JSONL benchmark (five evals, `contains`) is built with the
real compiler; each run is a run directory of recorded answers (via `grade
--run-dir`) with its own pass probability, so the models differ. Targets:
≤ 2 s and ≤ 500 MB (medians of R; peak RSS of the process, getrusage).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
EVALS = ["billing", "shipping", "returns", "accounts", "warranty"]
FLOOR = """
import sys, polars as pl
from pathlib import Path
for run in map(Path, sys.argv[1:]):
    pl.read_ndjson(run / "results.jsonl", infer_schema_length=None)
    pl.read_ndjson(run / "responses.jsonl", infer_schema_length=None)
"""


def cli(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", *map(str, args)], capture_output=True, text=True, env=env
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"trunchbull {' '.join(map(str, args))} failed:\n{proc.stdout}{proc.stderr}")
    return proc


def make_runs(tmp: Path, n: int, k: int) -> list[Path]:
    root = tmp / "bench"
    (root / "evals").mkdir(parents=True)
    per_eval = n // len(EVALS)
    for eval_id in EVALS:
        (root / "evals" / f"{eval_id}.ts").write_text(
            f'export default {{ id: "{eval_id}", evaluate: {{ kind: "contains", expected: "order" }}, '
            f'cases: "./{eval_id}.jsonl" }}\n'
        )
        lines = [orjson.dumps({"id": f"{eval_id}.{i}", "prompt": f"Where is order {i}?"}) for i in range(per_eval)]
        (root / "evals" / f"{eval_id}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    release = tmp / "release"
    cli("build", root, "-o", release)
    cases = [orjson.loads(line)["id"] for line in (release / "cases.jsonl").read_bytes().splitlines()]
    runs = []
    rng = random.Random(1)
    for j in range(k):
        rate = 0.5 + 0.08 * j
        answers = tmp / f"model{j}.jsonl"
        answers.write_bytes(
            b"".join(
                orjson.dumps(
                    {
                        "caseId": c,
                        "output": "your order ships today" if rng.random() < rate else "unknown",
                        "usage": {"inputTokens": 12, "outputTokens": 6, "totalTokens": 18},
                    }
                )
                + b"\n"
                for c in cases
            )
        )
        cli("grade", release, answers, "--run-dir", tmp / f"run{j}")
        runs.append(tmp / f"run{j}")
    return runs


def measure(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=25_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = make_runs(Path(tmp), args.samples, args.runs)
        board, floor = [], []
        for _ in range(args.repeat):  # interleaved, so both see the same load
            board.append(measure([sys.executable, "-m", "trunchbull", "leaderboard", *map(str, runs), "--json"]))
            floor.append(measure([sys.executable, "-c", FLOOR, *map(str, runs)]))
    load = os.getloadavg()[0]
    bt, bm = statistics.median(t for t, _ in board), statistics.median(m for _, m in board)
    ft, fm = statistics.median(t for t, _ in floor), statistics.median(m for _, m in floor)
    print(f"leaderboard of {args.runs} runs x {args.samples:,} samples, median of {args.repeat} (load {load:.1f})")
    print(
        f"  leaderboard: {bt:.2f} s (range {min(t for t, _ in board):.2f}-{max(t for t, _ in board):.2f}), {bm:.0f} MB"
    )
    print(f"  floor (polars reads the same files): {ft:.2f} s, {fm:.0f} MB")
    print(
        f"  ratio {bt / ft:.2f}x time; targets <= 2 s ({'met' if bt <= 2 else 'NOT met'}), <= 500 MB "
        f"({'met' if bm <= 500 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
