"""Every number of a run's samples, computed once: per case, per eval and
overall (SPEC §8.5, §8.7). `summary.json` (and so the terminal summary and
the HTML report), `compare`, the leaderboard and the exports all take their
counts, rates, scores, tokens, latencies and costs from here.

The input is a run's rows: each graded result (`evalId`, `caseId`,
`outcome`, `score`) with the record it was graded from (its `usage`,
`latencyMs` and `cost`), or None when it has none. The rules:

* **Outcomes.** A sample in `error` is an infrastructure failure: counted
  (`errors`), never in a rate, a score or a latency. The other samples are
  *graded*.
* **Pass rate and mean score** are means over cases (the unit of SPEC §8.5):
  a case's pass rate is the share of its graded samples that pass, its score
  the mean of its graded samples' scores; the group's figure is the mean
  over the cases that have one, with the interval of stats/intervals.py.
  With K ≥ 2 repeats, pass@k and pass^K (stats/passk.py).
* **Tokens** are the records' `usage` counts, summed over every sample,
  errors included (a failed sample may have been billed); a count that is
  missing or not an integer adds nothing.
* **Latency** percentiles (p50, p90, p99; linear interpolation between order
  statistics, as numpy's default) are over the graded samples.
* **Cost.** A sample's cost is its record's `cost`: USD at the run's price,
  `null` when the price is unknown (and for a sample with no record). A
  group's cost is the sum of its samples' costs when every one is known,
  else `null`: unknown, never a partial sum and never 0.
* **Per sample.** Tokens and cost per sample are the totals over the
  group's samples divided by their number (errors included, as in the
  totals): with `--repeat 3` the totals triple, the per-sample figures do not.
* **Groups and the macro average.** A run's cases are grouped by their eval,
  or by any other label of a case (`case_groups`: a breakdown by a field of
  the cases' data); each group's figures are the figures above over its
  cases, with the same intervals. The *micro* average is the mean over every
  case (the overall figure); the *macro* average weighs every group alike,
  the mean of the groups' means (`macro_average`), with no interval: it is a
  point estimate (docs/decisions.md, "Breakdowns").
* **Rounding**: every figure a user sees is rounded to DIGITS decimals, by
  `rounded`, here.
* **Judges.** The judge requests of model-graded kinds are counted apart
  from the model's figures, by the same token and cost rules
  (judge_stats.py).

Python's `statistics` does the arithmetic: one pass over the rows groups
them by case, and a summary of 25,000 samples takes ~0.1 s, less than
polars takes to import (docs/decisions.md, "Grading and summaries").
"""

from __future__ import annotations

from statistics import fmean, quantiles
from typing import Callable, Iterable, Sequence

from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.passk import pass_at_k, pass_hat_k

DIGITS = 6
PERCENTILES = (50, 90, 99)


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def rounded_interval(moments: Moments) -> list[float] | None:
    """The interval of stats/intervals.py, rounded; None without cases."""
    interval = mean_interval(moments)
    return None if interval is None else [round(interval.low, DIGITS), round(interval.high, DIGITS)]


# One sample's record, read by the same rules everywhere (the exports too).


NO_TOKENS: tuple[None, None, None] = (None, None, None)


def sample_tokens(record: dict | None) -> tuple[int | None, int | None, int | None]:
    """(input, output, total) tokens of a sample; None where the record has no integer count."""
    usage = record.get("usage") if record is not None else None
    if type(usage) is not dict:
        return NO_TOKENS
    i, o, t = usage.get("inputTokens"), usage.get("outputTokens"), usage.get("totalTokens")
    return (i if type(i) is int else None, o if type(o) is int else None, t if type(t) is int else None)


def sample_cost(record: dict | None) -> float | None:
    """A sample's cost in USD; None (unknown) when its record has none."""
    cost = record.get("cost") if record is not None else None
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None


def sample_latency(record: dict | None) -> float | None:
    """A sample's latency in ms (as recorded: an int or a float); None when not recorded."""
    latency = record.get("latencyMs") if record is not None else None
    return latency if type(latency) in (int, float) else None


def cached_samples(records: Iterable[dict | None]) -> int:
    """How many samples were served from the response cache (their records say `cached: true`)."""
    return sum(1 for record in records if record is not None and record.get("cached") is True)


class CaseTally:
    """One case's samples in one run."""

    __slots__ = (
        "eval_id",
        "samples",
        "graded",
        "passed",
        "scored",
        "score_sum",
        "score_squares",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "cost",
        "cost_known",
        "latencies",
    )

    def __init__(self, eval_id: str) -> None:
        self.eval_id = eval_id
        self.samples = self.graded = self.passed = self.scored = 0  # graded: not in error; scored: with a score
        self.score_sum = self.score_squares = 0.0
        self.input_tokens = self.output_tokens = self.total_tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.latencies: list[float] | None = None  # of the graded samples

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def score(self) -> float | None:
        """The mean of the graded samples' scores."""
        return self.score_sum / self.scored if self.scored else None


def tally_cases(
    results: Sequence[dict], records: Sequence[dict | None] | None = None
) -> dict[tuple[str, str], CaseTally]:
    """(eval ID, case ID) → its tally, in the rows' (release) order;
    `records`: each result's record (or a mapping with its usage, latencyMs
    and cost), None where it has none. Each record is read as sample_tokens,
    sample_cost and sample_latency read it, inlined: this runs once per sample."""
    cases: dict[tuple[str, str], CaseTally] = {}
    get = cases.get
    for row, record in zip(results, [None] * len(results) if records is None else records, strict=True):
        eval_id = row["evalId"]
        key = (eval_id, row["caseId"])
        case = get(key)
        if case is None:
            case = cases[key] = CaseTally(eval_id)
        case.samples += 1
        if record is None:
            case.cost_known = False
            latency = None
        else:
            usage, cost, latency = record.get("usage"), record.get("cost"), record.get("latencyMs")
            if type(usage) is dict:
                count = usage.get("inputTokens")
                if type(count) is int:
                    case.input_tokens += count
                count = usage.get("outputTokens")
                if type(count) is int:
                    case.output_tokens += count
                count = usage.get("totalTokens")
                if type(count) is int:
                    case.total_tokens += count
            if type(cost) is float or type(cost) is int:
                case.cost += cost
            else:
                case.cost_known = False
        outcome = row["outcome"]
        if outcome == "error":
            continue
        case.graded += 1
        if outcome == "pass":
            case.passed += 1
        score = row.get("score")
        if score is not None:
            case.scored += 1
            case.score_sum += score
            case.score_squares += score * score
        if type(latency) is float or type(latency) is int:
            if case.latencies is None:
                case.latencies = [float(latency)]
            else:
                case.latencies.append(float(latency))
    return cases


def percentiles(values: list[float]) -> dict[str, float | None]:
    keys = [f"p{p}" for p in PERCENTILES]
    if len(values) < 2:
        only = values[0] if values else None
        return {key: rounded(only) for key in keys}
    cuts = quantiles(values, n=100, method="inclusive")  # linear interpolation between order statistics
    return {key: rounded(cuts[p - 1]) for key, p in zip(keys, PERCENTILES)}


class GroupTally:
    """A group of cases (an eval, a run, the cases a leaderboard shares),
    summed: additive, so a larger group is the merge of its parts."""

    __slots__ = (
        "cases",
        "samples",
        "graded",
        "passed",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "cost",
        "cost_known",
        "latencies",
        "counts",
        "passes",
        "scores",
    )

    def __init__(self) -> None:
        self.cases = self.samples = self.graded = self.passed = 0
        self.input_tokens = self.output_tokens = self.total_tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.latencies: list[float] = []
        self.counts: list[tuple[int, int]] = []  # per case: (graded, passed), for pass@k
        self.passes = Moments()  # the pass rate's, over the cases with a graded sample
        self.scores = Moments()  # the mean score's, over the cases with a scored sample

    @classmethod
    def of(cls, cases: Sequence[CaseTally]) -> GroupTally:
        group = cls()
        samples = graded = passed = tokens_in = tokens_out = tokens_total = 0
        cost, cost_known = 0.0, True
        latencies, counts = group.latencies, group.counts
        for case in cases:
            samples += case.samples
            graded += case.graded
            passed += case.passed
            tokens_in += case.input_tokens
            tokens_out += case.output_tokens
            tokens_total += case.total_tokens
            cost += case.cost
            cost_known = cost_known and case.cost_known
            if case.latencies is not None:
                latencies += case.latencies
            counts.append((case.graded, case.passed))
        group.cases, group.samples, group.graded, group.passed = len(cases), samples, graded, passed
        group.input_tokens, group.output_tokens, group.total_tokens = tokens_in, tokens_out, tokens_total
        group.cost, group.cost_known = cost, cost_known
        group.passes = Moments.of_cases((c.graded, c.passed, c.passed) for c in cases if c.graded)
        group.scores = Moments.of_cases((c.scored, c.score_sum, c.score_squares) for c in cases if c.scored)
        return group

    @classmethod
    def merged(cls, parts: Iterable[GroupTally]) -> GroupTally:
        group = cls()
        for part in parts:
            for name in ("cases", "samples", "graded", "passed", "input_tokens", "output_tokens", "total_tokens"):
                setattr(group, name, getattr(group, name) + getattr(part, name))
            group.cost += part.cost
            group.cost_known = group.cost_known and part.cost_known
            group.latencies += part.latencies
            group.counts += part.counts
            group.passes.merge(part.passes)
            group.scores.merge(part.scores)
        return group

    def tokens(self) -> dict[str, int]:
        return {"input": self.input_tokens, "output": self.output_tokens, "total": self.total_tokens}

    def total_cost(self) -> float | None:
        """The sum of the samples' costs when every one is known, else None (unknown)."""
        return round(self.cost, DIGITS) if self.cost_known else None

    def per_sample(self) -> dict:
        """Tokens and cost per sample: the totals over the number of samples
        (None without samples; the cost None when it is unknown)."""
        n = self.samples
        if not n:
            return {"tokens": None, "cost": None}
        tokens = {key: rounded(value / n) for key, value in self.tokens().items()}
        return {"tokens": tokens, "cost": rounded(self.cost / n) if self.cost_known else None}

    def rates(self) -> dict:
        """The pass rate and the mean score over cases, with their intervals."""
        return {
            "passRate": rounded(self.passes.mean),
            "passRateCI": rounded_interval(self.passes),
            "meanScore": rounded(self.scores.mean),
            "meanScoreCI": rounded_interval(self.scores),
        }

    def statistics(self, repeats: int = 1) -> dict:
        """summary.json's figures of a group: counts, the pass rate and the
        mean score with their intervals, tokens, cost, latency percentiles,
        and with repeats ≥ 2 pass@k and pass^K."""
        out = {
            "samples": self.samples,
            "cases": self.cases,
            "passed": self.passed,
            "failed": self.graded - self.passed,
            "errors": self.samples - self.graded,
            **self.rates(),
            "tokens": self.tokens(),
            "cost": self.total_cost(),
            "latencyMs": percentiles(self.latencies),
        }
        if repeats >= 2:
            out["passAtK"] = {k: rounded(v) for k, v in pass_at_k(self.counts, repeats).items()}
            out["passHatK"] = rounded(pass_hat_k(self.counts, repeats))
        return out


# A case's group label from its (eval ID, case ID); None groups by eval.
GroupOf = Callable[[str, str], str] | None


def case_groups(
    cases: dict[tuple[str, str], CaseTally], order: Iterable[str] = (), group_of: GroupOf = None
) -> dict[str, list[CaseTally]]:
    """Group label → its cases, each case in one group: by eval, or by
    `group_of(eval ID, case ID)`. The labels of `order` first (those with
    cases), then the others as their first case comes."""
    groups: dict[str, list[CaseTally]] = {label: [] for label in order}
    if group_of is None:
        for (eval_id, _), case in cases.items():
            groups.setdefault(eval_id, []).append(case)
    else:
        for (eval_id, case_id), case in cases.items():
            groups.setdefault(group_of(eval_id, case_id), []).append(case)
    return {label: group for label, group in groups.items() if group}


def grouped(
    cases: dict[tuple[str, str], CaseTally], order: Iterable[str] = (), group_of: GroupOf = None
) -> tuple[dict[str, GroupTally], GroupTally]:
    """Each group's tally (by eval, or by `group_of`: case_groups) and the
    overall group, their merge: the one way every command sums a run's cases."""
    groups = {label: GroupTally.of(group) for label, group in case_groups(cases, order, group_of).items()}
    return groups, GroupTally.merged(groups.values())


def macro_mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are known (each group's alike); None when none is."""
    known = [value for value in values if value is not None]
    return fmean(known) if known else None


def macro_average(groups: Iterable[GroupTally]) -> dict:
    """The macro average of groups: the mean of their pass rates and of
    their mean scores, each group weighing the same (a point estimate)."""
    parts = list(groups)
    return {
        "groups": len(parts),
        "passRate": rounded(macro_mean(g.passes.mean for g in parts)),
        "meanScore": rounded(macro_mean(g.scores.mean for g in parts)),
    }


def breakdown(
    cases: dict[tuple[str, str], CaseTally], group_of: GroupOf, order: Iterable[str] = (), repeats: int = 1
) -> dict:
    """A run's figures per group (statistics(), as summary.json gives them
    per eval), the macro average over the groups and the micro (overall)."""
    groups, overall = grouped(cases, order, group_of)
    return {
        "groups": {label: group.statistics(repeats) for label, group in groups.items()},
        "macro": macro_average(groups.values()),
        "overall": overall.statistics(repeats),
    }
