"""Budgets (SPEC §8.7): `--max-cost USD` and `--max-total-tokens N`. Before
a sample is sent to a worker, the budget is asked whether it may start: it
may when what was spent, plus an estimate for every sample already started
and not yet recorded, plus an estimate for this one, stays within the limit.
Once one is refused no new sample starts; those in flight finish and are
recorded, and the run exits with code 3, resumable (with a larger budget).

The estimate of a sample is the largest cost (tokens) a recorded sample of
this run has had (at least the dry run's estimate of its input, dry_run.py,
plus as many output tokens, or `--max-tokens`). Until this run has recorded
a sample, a single sample runs at a time: the first one measures what a
sample costs, since providers count more than the prompt's characters say.
So a budget is not overshot by samples like those seen, though an unusually
long answer can still take a run slightly past it. What the run
directory recorded before (a resumed run) counts as spent; samples from the
response cache cost nothing now."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import orjson

from trunchbull.common.diagnostics import UsageError
from trunchbull.run.samples import Sample
from trunchbull.common.invocation import resume_command


def record_tokens(row: dict) -> int:
    usage = row.get("usage")
    if not isinstance(usage, dict):
        return 0
    total = usage.get("totalTokens")
    if type(total) is int:
        return total
    parts = (usage.get("inputTokens"), usage.get("outputTokens"))
    return sum(v for v in parts if isinstance(v, int) and not isinstance(v, bool))


def record_cost(row: dict) -> float:
    cost = row.get("cost")
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else 0.0


@dataclass
class Budget:
    max_cost: float | None
    max_tokens: int | None
    estimate_input: Callable[[Sample], int]  # tokens of the sample's first call (dry_run.estimate_tokens)
    max_output: int | None  # --max-tokens
    price: dict | None  # USD per token: input, output, cachedInput
    batch: bool = False  # batch mode: a sample's cost is not measured first (its reply may take hours)
    spent_cost: float = 0.0
    spent_tokens: int = 0
    stopped: bool = False  # a sample was refused
    _reserved: dict[int, tuple[float, int]] = field(default_factory=dict)
    _largest: tuple[float, int] = (0.0, 0)
    _measured: bool = False  # a sample of this run has been recorded

    def __post_init__(self) -> None:
        if self.max_cost is not None and self.max_cost < 0:
            raise UsageError(f"--max-cost takes an amount of USD ≥ 0, got {self.max_cost:g}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError(f"--max-total-tokens takes an integer ≥ 1, got {self.max_tokens}")
        if self.max_cost is not None and self.price is None:
            raise UsageError(
                "--max-cost: the model's price is unknown, so its cost cannot be counted; give it with "
                "--prices FILE (model SPEC → input / output USD per million tokens)"
            )

    def limits(self) -> dict:
        """The limits as run.json keeps them (`budget`)."""
        return {"maxCost": self.max_cost, "maxTotalTokens": self.max_tokens}

    def count_recorded(self, records: dict) -> None:
        """What the run directory recorded already (not from the cache) counts as spent."""
        for row in records.values():
            if not row.get("cached"):
                self.spent_cost += record_cost(row)
                self.spent_tokens += record_tokens(row)

    def _estimate(self, sample: Sample) -> tuple[float, int]:
        tokens_in = self.estimate_input(sample)
        tokens_out = self.max_output if self.max_output is not None else tokens_in
        cost = 0.0
        if self.price is not None:
            cost = tokens_in * self.price["input"] + tokens_out * self.price["output"]
        if self._measured:
            return max(cost, self._largest[0]), max(tokens_in + tokens_out, self._largest[1])
        return cost, tokens_in + tokens_out

    def admit(self, sample: Sample) -> bool | None:
        """May `sample` start? True, False (no new sample starts any more), or
        None: not yet (the first sample has not been recorded). Samples sent
        again after a worker was replaced were admitted already."""
        if sample.k in self._reserved:
            return True
        if self.stopped:
            return False
        if self._reserved and not self._measured and not self.batch:
            return None
        cost, tokens = self._estimate(sample)
        held_cost = sum(c for c, _ in self._reserved.values())
        held_tokens = sum(t for _, t in self._reserved.values())
        over_cost = self.max_cost is not None and self.spent_cost + held_cost + cost > self.max_cost
        over_tokens = self.max_tokens is not None and self.spent_tokens + held_tokens + tokens > self.max_tokens
        if over_cost or over_tokens:
            self.stopped = True
            return False
        self._reserved[sample.k] = (cost, tokens)
        return True

    def hold(self, sample: Sample) -> None:
        """A sample already started (a batch run resumed: its request is in a live batch) counts
        at its estimate until it is recorded."""
        if sample.k not in self._reserved:
            self._reserved[sample.k] = self._estimate(sample)

    def settle(self, sample: Sample, record: bytes) -> None:
        """A recorded sample: its real cost replaces its reservation."""
        self._reserved.pop(sample.k, None)
        try:
            row = orjson.loads(record)
        except orjson.JSONDecodeError:
            return
        cost, tokens = record_cost(row), record_tokens(row)
        self.spent_cost += cost
        self.spent_tokens += tokens
        self._largest = (max(self._largest[0], cost), max(self._largest[1], tokens))
        self._measured = True

    def message(self, run_dir, recorded: int, total: int) -> str:
        limits = []
        if self.max_cost is not None:
            limits.append(f"--max-cost {self.max_cost:g} (spent ${self.spent_cost:.4f})")
        if self.max_tokens is not None:
            limits.append(f"--max-total-tokens {self.max_tokens:,} (used {self.spent_tokens:,})")
        return (
            f"trunchbull: budget reached: {' and '.join(limits)}; {recorded:,} of {total:,} samples are recorded "
            f"in {run_dir}, the rest were not started. Continue with a larger budget: "
            f"{resume_command(run_dir, ' --max-cost …')} (exit code 3)"
        )
