"""Scores per eval and overall (SPEC §8.5), derived from graded results.

Samples in `error` are infrastructure failures: counted, never folded into
the rates. The unit of analysis is the case: a case's mean over its graded
repeats is one observation, so the pass rate and the mean score are means of
per-case means, and their 95% confidence intervals are Wilson score intervals
on the clustered effective sample size (stats/intervals.py): exactly
Wilson's interval over the cases with one sample per case, narrower as
independent repeats add information, never outside [0, 1]. With K ≥ 2
repeats, pass@k (the unbiased estimator 1 − C(n−c, k)/C(n, k) per case,
averaged) for k ≤ K, and pass^K, the share of cases whose K graded repeats
all pass.

The statistics are Python's `statistics` (means and standard deviations
exactly rounded, linear-interpolation percentiles): one pass over the rows
groups them, and 25,000 samples are summarized in ~0.12 s, less than polars
takes to import (docs/decisions.md, "Grading and summaries").
"""

from __future__ import annotations

from operator import methodcaller
from statistics import quantiles
from typing import Sequence

from trunchbull.release.manifest import Manifest
from trunchbull.stats.intervals import Moments, mean_interval
from trunchbull.stats.passk import pass_at_k, pass_hat_k
from trunchbull.stats.quantiles import CONFIDENCE, Z95

DIGITS = 6
PERCENTILES = (50, 90, 99)
METHOD = {
    "unit": "case (a case's mean over its graded repeats is one observation)",
    "interval": "Wilson score interval on the clustered effective sample size (Korn-Graubard df adjustment)",
    "confidence": CONFIDENCE,
    "z": round(Z95, DIGITS),
}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _interval(moments: Moments) -> list[float] | None:
    interval = mean_interval(moments)
    return None if interval is None else [round(interval.low, DIGITS), round(interval.high, DIGITS)]


class _Tally:
    """One eval's samples: outcome counts, usages, the graded samples'
    latencies, and per case [graded, passed, score sum, scores, sum of squared scores]."""

    __slots__ = ("samples", "passed", "failed", "errors", "usages", "latencies", "cases", "cost", "cost_unknown")

    def __init__(self) -> None:
        self.samples = self.passed = self.failed = self.errors = 0
        self.cost = 0.0
        self.cost_unknown = False
        self.usages: list[dict] = []
        self.latencies: list[float] = []
        self.cases: dict[object, list] = {}  # case id (in the overall tally: eval and case id) → counts

    def merge(self, other: _Tally, eval_id: str) -> None:
        self.samples += other.samples
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.usages += other.usages
        self.latencies += other.latencies
        self.cost += other.cost
        self.cost_unknown = self.cost_unknown or other.cost_unknown
        for case_id, counts in other.cases.items():  # the same case id in two evals is two cases
            self.cases[(eval_id, case_id)] = counts

    def tokens(self) -> dict[str, int]:
        """Token totals; a count the provider did not give (or gave as
        something other than an integer) adds nothing."""
        totals = {}
        for name, key in (("input", "inputTokens"), ("output", "outputTokens"), ("total", "totalTokens")):
            totals[name] = sum(v for v in map(methodcaller("get", key), self.usages) if type(v) is int)
        return totals


def _tally(
    results: Sequence[dict],
    usages: Sequence[dict | None],
    latencies: Sequence[float | None],
    costs: Sequence[float | None],
) -> dict[str, _Tally]:
    by_eval: dict[str, _Tally] = {}
    eval_id = None
    tally = _Tally()
    for row, usage, latency, cost in zip(results, usages, latencies, costs):
        if row["evalId"] != eval_id:  # rows come eval by eval: look the tally up once per run of them
            eval_id = row["evalId"]
            if eval_id not in by_eval:
                by_eval[eval_id] = _Tally()
            tally = by_eval[eval_id]
        case = tally.cases.get(row["caseId"])
        if case is None:
            case = tally.cases[row["caseId"]] = [0, 0, 0.0, 0, 0.0]
        tally.samples += 1
        outcome = row["outcome"]
        if outcome == "error":
            tally.errors += 1
        else:
            case[0] += 1
            if outcome == "pass":
                tally.passed += 1
                case[1] += 1
            elif outcome == "fail":
                tally.failed += 1
            if isinstance(latency, (int, float)):
                tally.latencies.append(float(latency))
        score = row["score"]
        if score is not None:
            case[2] += score
            case[3] += 1
            case[4] += score * score
        if type(usage) is dict:
            tally.usages.append(usage)
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            tally.cost += cost
        elif outcome != "error":  # a sample in error that reported nothing is counted as costing nothing
            tally.cost_unknown = True
    return by_eval


def _percentiles(values: list[float]) -> dict[str, float | None]:
    keys = [f"p{p}" for p in PERCENTILES]
    if len(values) < 2:
        only = values[0] if values else None
        return {key: _rounded(only) for key in keys}
    cuts = quantiles(values, n=100, method="inclusive")  # linear interpolation between order statistics
    return {key: _rounded(cuts[p - 1]) for key, p in zip(keys, PERCENTILES)}


def summarize(
    manifest: Manifest,
    results: Sequence[dict],
    usages: Sequence[dict | None] | None = None,
    latencies: Sequence[float | None] | None = None,
    repeats: int = 1,
    costs: Sequence[float | None] | None = None,
) -> dict:
    """`results`: graded rows (caseId, evalId, outcome, score); `usages`,
    `latencies` and `costs`: per row, the sample's usage ({inputTokens,
    outputTokens, totalTokens}), latency in ms and cost in USD, when known.
    A group's `cost` is null when some graded sample's cost is unknown."""
    n = len(results)
    none = [None] * n
    by_eval = _tally(
        results,
        usages if usages is not None else none,
        latencies if latencies is not None else none,
        costs if costs is not None else none,
    )
    order = manifest.eval_ids
    eval_ids = [e for e in order if e in by_eval] + [e for e in by_eval if e not in order]
    evals = {eval_id: _group(by_eval[eval_id], repeats) for eval_id in eval_ids}
    if len(by_eval) == 1:
        overall = evals[eval_ids[0]]  # one eval: the same samples, the same cases
    else:
        everything = _Tally()
        for eval_id in eval_ids:
            everything.merge(by_eval[eval_id], eval_id)
        overall = _group(everything, repeats)
    return {
        "release": {
            "title": manifest.title,
            "version": manifest.version,
            "digest": manifest.digest,
        },
        "overall": overall,
        "evals": evals,
        "method": METHOD,
    }


def _group(tally: _Tally, repeats: int) -> dict:
    cases = list(tally.cases.values())
    passes, scores = Moments(), Moments()
    for graded, passed, total, scored, total_sq in cases:
        if graded:
            passes.add_case(graded, passed, passed)
        if scored:
            scores.add_case(scored, total, total_sq)
    out = {
        "samples": tally.samples,
        "cases": len(cases),
        "passed": tally.passed,
        "failed": tally.failed,
        "errors": tally.errors,
        "passRate": _rounded(passes.mean),
        "passRateCI": _interval(passes),
        "meanScore": _rounded(scores.mean),
        "meanScoreCI": _interval(scores),
        "tokens": tally.tokens(),
        "cost": None if tally.cost_unknown else round(tally.cost, DIGITS),
        "latencyMs": _percentiles(tally.latencies),
    }
    if repeats >= 2:
        counts = [(graded, passed) for graded, passed, _, _, _ in cases]
        out["passAtK"] = {k: _rounded(v) for k, v in pass_at_k(counts, repeats).items()}
        out["passHatK"] = _rounded(pass_hat_k(counts, repeats))
    return out
