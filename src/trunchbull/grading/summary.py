"""Scores per eval and overall (SPEC §8.5), derived from graded results.

Samples in `error` are infrastructure failures: counted, never folded into
the rates. The unit of analysis is the case: a case's mean over its graded
repeats is one observation, so the pass rate and the mean score are means of
per-case means, and their 95% confidence intervals come from the standard
error of those per-case means (a clustered standard error, CLT-based: mean ±
z·sd/√n with z = Φ⁻¹(0.975), clipped to [0, 1]; no interval for fewer than two
cases). With one sample per case this is the usual binomial-proportion
standard error. With K ≥ 2 repeats, pass@k (the unbiased estimator
1 − C(n−c, k)/C(n, k) per case, averaged) for k ≤ K, and pass^K, the share of
cases whose K graded repeats all pass.
"""

from __future__ import annotations

from math import comb, sqrt
from statistics import NormalDist
from typing import Sequence

Z95 = NormalDist().inv_cdf(0.975)
DIGITS = 6


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _interval(mean: float | None, sd: float | None, n: int) -> list[float] | None:
    if mean is None or sd is None or n < 2:
        return None
    half = Z95 * sd / sqrt(n)
    return [round(max(0.0, mean - half), DIGITS), round(min(1.0, mean + half), DIGITS)]


def summarize(
    manifest: dict,
    results: Sequence[dict],
    usages: Sequence[dict | None] | None = None,
    latencies: Sequence[float | None] | None = None,
    repeats: int = 1,
) -> dict:
    """`results`: graded rows (caseId, evalId, outcome, score); `usages` and
    `latencies`: per row, the sample's usage ({inputTokens, outputTokens,
    totalTokens}) and latency in ms, when known."""
    import polars as pl

    n = len(results)
    usages = usages if usages is not None else [None] * n
    latencies = latencies if latencies is not None else [None] * n

    def tokens(key: str) -> list[int | None]:
        if not any(usages):
            return [None] * n
        return [
            value if type(value := usage.get(key) if type(usage) is dict else None) is int else None for usage in usages
        ]

    frame = pl.DataFrame(
        {
            "evalId": [r["evalId"] for r in results],
            "caseId": [r["caseId"] for r in results],
            "outcome": [r["outcome"] for r in results],
            "score": [r["score"] for r in results],
            "inputTokens": tokens("inputTokens"),
            "outputTokens": tokens("outputTokens"),
            "totalTokens": tokens("totalTokens"),
            "latencyMs": [float(v) if isinstance(v, (int, float)) else None for v in latencies],
        },
        schema={
            "evalId": pl.String,
            "caseId": pl.String,
            "outcome": pl.String,
            "score": pl.Float64,
            "inputTokens": pl.Int64,
            "outputTokens": pl.Int64,
            "totalTokens": pl.Int64,
            "latencyMs": pl.Float64,
        },
    )
    graded = pl.col("outcome") != "error"
    per_case = (
        frame.group_by("evalId", "caseId", maintain_order=True)
        .agg(
            graded.sum().alias("n"),
            (pl.col("outcome") == "pass").sum().alias("c"),
            pl.col("score").mean().alias("caseScore"),
        )
        .with_columns(pl.when(pl.col("n") > 0).then(pl.col("c") / pl.col("n")).otherwise(None).alias("casePass"))
    )

    sample_aggs = [
        pl.len().alias("samples"),
        (pl.col("outcome") == "pass").sum().alias("passed"),
        (pl.col("outcome") == "fail").sum().alias("failed"),
        (pl.col("outcome") == "error").sum().alias("errors"),
        pl.col("inputTokens").sum().alias("tokIn"),
        pl.col("outputTokens").sum().alias("tokOut"),
        pl.col("totalTokens").sum().alias("tokTotal"),
        *(
            pl.col("latencyMs").filter(graded).quantile(q, interpolation="linear").alias(f"p{int(q * 100)}")
            for q in (0.5, 0.9, 0.99)
        ),
    ]
    case_aggs = [
        pl.len().alias("cases"),
        pl.col("casePass").count().alias("nPass"),
        pl.col("casePass").mean().alias("passRate"),
        pl.col("casePass").std(ddof=1).alias("passSd"),
        pl.col("caseScore").count().alias("nScore"),
        pl.col("caseScore").mean().alias("meanScore"),
        pl.col("caseScore").std(ddof=1).alias("scoreSd"),
    ]
    samples_by_eval = {row["evalId"]: row for row in frame.group_by("evalId").agg(sample_aggs).to_dicts()}
    cases_by_eval = {row["evalId"]: row for row in per_case.group_by("evalId").agg(case_aggs).to_dicts()}
    counts_by_eval: dict[str, list[tuple[int, int]]] = {}
    for eval_id, graded_n, passes in per_case.select("evalId", "n", "c").iter_rows():
        counts_by_eval.setdefault(eval_id, []).append((graded_n, passes))

    order = [e["id"] for e in manifest.get("evals") or []]
    present = list(samples_by_eval)
    eval_ids = [e for e in order if e in samples_by_eval] + [e for e in present if e not in order]
    evals = {
        eval_id: _group(samples_by_eval[eval_id], cases_by_eval[eval_id], counts_by_eval[eval_id], repeats)
        for eval_id in eval_ids
    }
    if n:
        overall = _group(
            frame.select(sample_aggs).to_dicts()[0],
            per_case.select(case_aggs).to_dicts()[0],
            [pair for pairs in counts_by_eval.values() for pair in pairs],
            repeats,
        )
    else:
        overall = _group({}, {}, [], repeats)
    return {
        "release": {
            "title": manifest.get("title"),
            "version": manifest.get("version"),
            "digest": manifest.get("digest"),
        },
        "overall": overall,
        "evals": evals,
    }


def _group(samples: dict, cases: dict, counts: list[tuple[int, int]], repeats: int) -> dict:
    pass_rate, mean_score = cases.get("passRate"), cases.get("meanScore")
    out = {
        "samples": samples.get("samples", 0),
        "cases": cases.get("cases", 0),
        "passed": samples.get("passed", 0),
        "failed": samples.get("failed", 0),
        "errors": samples.get("errors", 0),
        "passRate": _rounded(pass_rate),
        "passRateCI": _interval(pass_rate, cases.get("passSd"), cases.get("nPass", 0)),
        "meanScore": _rounded(mean_score),
        "meanScoreCI": _interval(mean_score, cases.get("scoreSd"), cases.get("nScore", 0)),
        "tokens": {
            "input": samples.get("tokIn") or 0,
            "output": samples.get("tokOut") or 0,
            "total": samples.get("tokTotal") or 0,
        },
        "latencyMs": {key: _rounded(samples.get(key)) for key in ("p50", "p90", "p99")},
    }
    if repeats >= 2:
        out["passAtK"] = pass_at_k(counts, repeats)
        out["passHatK"] = pass_hat_k(counts, repeats)
    return out


def pass_at_k(counts: list[tuple[int, int]], repeats: int) -> dict[str, float | None]:
    """k → the mean over cases with at least k graded samples of
    1 − C(n−c, k)/C(n, k) (Chen et al. 2021), `counts` being (n graded, c passed) per case."""
    out: dict[str, float | None] = {}
    for k in range(1, repeats + 1):
        values = [1.0 - comb(n - c, k) / comb(n, k) for n, c in counts if n >= k]
        out[str(k)] = _rounded(sum(values) / len(values)) if values else None
    return out


def pass_hat_k(counts: list[tuple[int, int]], repeats: int) -> float | None:
    """The share of cases whose `repeats` graded samples all pass, over the
    cases graded that many times (C(c, K)/C(n, K) per case)."""
    values = [comb(c, repeats) / comb(n, repeats) for n, c in counts if n >= repeats]
    return _rounded(sum(values) / len(values)) if values else None
