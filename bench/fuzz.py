"""Long fuzz runs: the properties of tests/fuzz (hostile benchmarks built,
hostile responses files graded, each through the real CLI under a
subreaper that sees every process left behind) with random examples.

    .venv/bin/python bench/fuzz.py [--trials 2000] [--grade-share 0.25] [--seed N]

Prints the trial count, failures and duration. Every failure is printed with
its falsifying example (plain data: the fixture and its mutations) and the
command that replays the run exactly (same seed, same trial count); no
shrinking, so a long run keeps going after a failure. Nothing is stored in
a Hypothesis database."""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from hypothesis import HealthCheck, Phase, seed, settings  # noqa: E402
from hypothesis.errors import HypothesisException  # noqa: E402

from tests.fuzz.properties import fuzz_build, fuzz_grade  # noqa: E402
from tests.fuzz.mutations import benchmark_case, responses_mutation  # noqa: E402
from hypothesis import given, strategies as st  # noqa: E402


def _guarded(trial, example) -> list[str]:
    """The trial's broken invariants; a bug of the harness itself is one too (and the run goes on)."""
    try:
        return trial(example)
    except Exception:  # noqa: BLE001
        return ["the fuzz harness failed:\n" + traceback.format_exc()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--grade-share", type=float, default=0.25, help="share of trials that grade responses files")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    run_seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    grade_trials = int(args.trials * args.grade_share)
    build_trials = args.trials - grade_trials
    failures: list[tuple[str, object, list[str]]] = []
    counts = {"build": 0, "grade": 0}
    started = time.monotonic()

    def record(kind: str, example, problems: list[str]) -> None:
        counts[kind] += 1
        if problems:
            failures.append((kind, example, problems))
            print(f"FAILURE ({kind}) {example!r}:\n  " + "\n  ".join(problems), flush=True)
        if sum(counts.values()) % 50 == 0:
            print(
                f"{sum(counts.values())} trials, {len(failures)} failures, {time.monotonic() - started:.0f} s",
                flush=True,
            )

    common = dict(
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )

    @seed(run_seed)
    @settings(max_examples=build_trials, **common)
    @given(case=benchmark_case())
    def builds(case):
        record("build", case, _guarded(fuzz_build, case))

    @seed(run_seed)
    @settings(max_examples=grade_trials, **common)
    @given(changes=st.lists(responses_mutation(), min_size=1, max_size=3))
    def grades(changes):
        record("grade", changes, _guarded(fuzz_grade, changes))

    for prop, n in ((builds, build_trials), (grades, grade_trials)):
        if n:
            try:
                prop()
            except HypothesisException:  # e.g. fewer distinct examples than asked for
                traceback.print_exc()
    elapsed = time.monotonic() - started
    print(
        f"seed {run_seed}: {sum(counts.values())} trials ({counts['build']} builds, {counts['grade']} grades), "
        f"{len(failures)} failures, {elapsed / 60:.1f} min"
    )
    if failures:
        print(
            f"reproduce: .venv/bin/python bench/fuzz.py --trials {args.trials} --grade-share {args.grade_share} "
            f"--seed {run_seed}"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
