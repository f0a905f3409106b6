"""Exit codes, the same for every command (SPEC §3.9, §4, §8.5, §8.7, §9)."""

OK = 0
FAILED = 1  # the benchmark has errors; a --fail-under not met; samples in error; a regression (compare)
USAGE = 2  # a usage or environment error, or input that cannot be used
BUDGET = 3  # a run stopped at its --max-cost / --max-total-tokens budget
INTERRUPTED_BASE = 128  # + the signal's number (SIGINT: 130)
INTERRUPTED = INTERRUPTED_BASE + 2
