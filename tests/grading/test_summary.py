"""The summary statistics (SPEC §8.5) on small tables worked out by hand,
and against numpy and scipy on random tables."""

from __future__ import annotations


import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from scipy.stats import t as student_t

from trunchbull.grading.summary import summarize
from trunchbull.release.manifest import Manifest
from trunchbull.stats.quantiles import Z95

MANIFEST = Manifest({"title": "t", "version": None, "digest": "sha256:x", "evals": [{"id": "b"}, {"id": "a"}]})


def rows(spec: list[tuple[str, str, str, float | None]]) -> list[dict]:
    return [{"evalId": e, "caseId": c, "outcome": o, "score": s} for e, c, o, s in spec]


def test_z_is_the_normal_975_quantile():
    assert Z95 == pytest.approx(1.959964, abs=1e-6)


def wilson(mean: float, n: float) -> list[float]:
    """Wilson (1927) with the continuity correction, written out: the score
    interval's lower bound at the mean less half an observation, its upper
    bound at the mean plus half an observation (the oracle for fractional
    effective sizes)."""
    z2 = Z95 * Z95

    def bounds(p: float) -> tuple[float, float]:
        p = min(max(p, 0.0), 1.0)
        center = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = Z95 / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
        return center - half, center + half

    low = 0.0 if mean <= 0 else max(0.0, bounds(mean - 1 / (2 * n))[0])
    high = 1.0 if mean >= 1 else min(1.0, bounds(mean + 1 / (2 * n))[1])
    return [low, high]


def test_clustered_interval_over_case_means():
    # eval a: case x passes 2 of 2 repeats, y, z and v 1 of 2 (z also has an error, left out)
    table = rows(
        [
            ("a", "x", "pass", 1.0),
            ("a", "x", "pass", 1.0),
            ("a", "y", "pass", 1.0),
            ("a", "y", "fail", 0.0),
            ("a", "z", "fail", 0.0),
            ("a", "z", "pass", 1.0),
            ("a", "z", "error", None),
            ("a", "v", "fail", 0.0),
            ("a", "v", "pass", 1.0),
            ("b", "w", "pass", 0.5),
        ]
    )
    summary = summarize(MANIFEST, table, repeats=2)
    a = summary["evals"]["a"]
    assert (a["samples"], a["cases"], a["passed"], a["failed"], a["errors"]) == (9, 4, 5, 3, 1)
    # case means 1, .5, .5, .5: mean 0.625. The clustered variance of the mean is
    # ((.375² + 3 × .125²) / 4) / 4 = 0.01171875; if the 8 samples were independent it would be
    # (5 × .375² + 3 × .625²) / 8 / 8 = 0.029296875, the larger: n_eff = .625 × .375 / 0.0293 = 8,
    # scaled by (z / t_3)² = 0.379 for a variance from 4 cases (df = min(4 - 1, 4 above 0, 3 below 1))
    # to 3.03, below the 4 cases: Wilson over 4
    assert a["passRate"] == 0.625 and a["passRateCI"] == pytest.approx(wilson(0.625, 4), abs=1e-6)
    assert a["meanScore"] == 0.625 and a["meanScoreCI"] == pytest.approx(wilson(0.625, 4), abs=1e-6)
    # pass@1 = mean(1, .5, .5, .5); pass@2 = mean(1, 1 - C(1,2)/C(2,2) = 1, 1, 1) = 1; pass^2 = 1/4
    assert a["passAtK"] == {"1": 0.625, "2": 1.0} and a["passHatK"] == 0.25
    b = summary["evals"]["b"]
    # one case that passes: the interval for 1 of 1
    assert b["passRate"] == 1.0 and b["meanScore"] == 0.5 and b["passRateCI"] == pytest.approx(wilson(1.0, 1), abs=1e-6)
    assert list(summary["evals"]) == ["b", "a"]  # release order
    overall = summary["overall"]
    # five case means for the pass rate: 1, .5, .5, .5, 1 → 0.7
    assert overall["passRate"] == 0.7 and overall["samples"] == 10 and overall["cases"] == 5


def test_one_sample_per_case_is_the_corrected_wilson_interval_over_the_cases():
    table = rows([("a", f"c{i}", "pass" if i else "fail", 1.0 if i else 0.0) for i in range(4)])
    ci = summarize(MANIFEST, table)["overall"]["passRateCI"]
    ref = binomtest(3, 4).proportion_ci(0.95, method="wilsoncc")
    assert ci == pytest.approx([ref.low, ref.high], abs=1e-6)
    # none passing: an interval of honest width, not [0, 0]
    none = summarize(MANIFEST, rows([("a", f"c{i}", "fail", 0.0) for i in range(2)]))["overall"]["passRateCI"]
    assert none == pytest.approx(list(binomtest(0, 2).proportion_ci(0.95, method="wilsoncc")), abs=1e-6)
    assert none[0] == 0.0 and none[1] == pytest.approx(0.802133, abs=1e-6)


def test_tokens_and_latency_percentiles():
    table = rows([("a", f"c{i}", "pass", 1.0) for i in range(5)] + [("a", "e", "error", None)])
    usages = [{"inputTokens": i, "outputTokens": 2 * i, "totalTokens": 3 * i} for i in range(5)] + [None]
    latencies = [10.0, 20.0, 30.0, 40.0, 50.0, 9999.0]  # the error's latency is left out
    records = [{"usage": u, "latencyMs": t} for u, t in zip(usages, latencies)]
    overall = summarize(MANIFEST, table, records)["overall"]
    assert overall["tokens"] == {"input": 10, "output": 20, "total": 30}
    # linear interpolation over 10..50: p50 30, p90 46, p99 49.6
    assert overall["latencyMs"] == {"p50": 30.0, "p90": 46.0, "p99": 49.6}
    assert "passAtK" not in overall


def test_a_cost_is_known_only_when_every_sample_s_cost_is():
    table = rows([("a", "x", "pass", 1.0), ("a", "y", "error", None), ("b", "z", "fail", 0.0)])
    priced = summarize(MANIFEST, table, [{"cost": 0.25}, {"cost": 0}, {"cost": 0.5}])
    assert priced["overall"]["cost"] == 0.75 and priced["evals"]["a"]["cost"] == 0.25
    # a sample in error whose cost is unknown makes its groups' cost unknown, never 0
    unknown = summarize(MANIFEST, table, [{"cost": 0.25}, {"cost": None}, {"cost": 0.5}])
    assert unknown["overall"]["cost"] is None and unknown["evals"]["a"]["cost"] is None
    assert unknown["evals"]["b"]["cost"] == 0.5
    # a sample with no record, or every sample in error without a price: unknown
    assert summarize(MANIFEST, table, [{"cost": 0.25}, None, {"cost": 0.5}])["evals"]["a"]["cost"] is None
    errors = rows([("a", "x", "error", None), ("a", "y", "error", None)])
    assert summarize(MANIFEST, errors, [{"cost": None}, {"cost": None}])["overall"]["cost"] is None
    assert summarize(MANIFEST, errors)["overall"]["cost"] is None


def test_empty():
    summary = summarize(MANIFEST, [])
    assert summary["overall"]["samples"] == 0 and summary["overall"]["passRate"] is None and summary["evals"] == {}


# Property: the summary agrees with numpy (an independent implementation of
# the same statistics) on random tables: several evals in any order, repeated
# case ids, errors, missing scores, usages and latencies.
outcomes = st.sampled_from(["pass", "fail", "error"])
row_strategy = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from([f"k{i}" for i in range(6)]),
    outcomes,
    st.one_of(st.none(), st.sampled_from([0.0, 1.0]), st.floats(0, 1)),
    st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {
                "inputTokens": st.one_of(st.none(), st.integers(0, 99)),
                "outputTokens": st.integers(0, 9),
                "totalTokens": st.integers(0, 99),
            }
        ),
    ),
    st.one_of(st.none(), st.floats(0, 1e4)),
)


def numpy_group(table: list[tuple], repeats: int) -> dict:
    cases: dict[tuple, list[tuple]] = {}
    for row in table:
        cases.setdefault((row[0], row[1]), []).append(row)
    graded = [[float(r[2] == "pass") for r in rs if r[2] != "error"] for rs in cases.values()]
    graded = [g for g in graded if g]
    pass_means = [np.mean(g) for g in graded]
    scored = [[r[3] for r in rs if r[3] is not None and r[2] != "error"] for rs in cases.values()]
    score_means = [np.mean(scores) for scores in scored if scores]  # a sample in error has no score
    latencies = [r[5] for r in table if r[2] != "error" and r[5] is not None]
    out = {
        "samples": len(table),
        "cases": len(cases),
        "passed": sum(r[2] == "pass" for r in table),
        "errors": sum(r[2] == "error" for r in table),
        "passRate": np.mean(pass_means) if pass_means else None,
        "passCI": clustered_wilson(graded),
        "meanScore": np.mean(score_means) if score_means else None,
        "tokens": {
            "input": sum(r[4]["inputTokens"] or 0 for r in table if r[4]),
            "total": sum(r[4]["totalTokens"] for r in table if r[4]),
        },
        "latencyMs": {f"p{p}": np.percentile(latencies, p) if latencies else None for p in (50, 90, 99)},
    }
    if repeats >= 2:
        # pass^K by enumeration: of every K of a case's graded samples, the
        # share that all pass (the estimator's definition, not its formula)
        shares = []
        for rs in cases.values():
            outcomes = [r[2] == "pass" for r in rs if r[2] != "error"]
            if len(outcomes) >= repeats:
                picks = list(itertools.combinations(outcomes, repeats))
                shares.append(sum(all(pick) for pick in picks) / len(picks))
        out["passHatK"] = round(float(np.mean(shares)), 6) if shares else None
    return out


def clustered_wilson(cases: list[list[float]]) -> list[float] | None:
    """The documented interval (stats/intervals.py), written out with numpy and scipy."""
    if not cases:
        return None
    x = np.array([np.mean(c) for c in cases])
    y = np.concatenate([np.array(c) for c in cases])
    n, big_n, mean = len(x), len(y), float(np.mean(x))
    q = mean * (1 - mean)
    variance = max(np.var(x) / n, np.mean((y - mean) ** 2) / big_n)
    n_eff = float(n)
    if q > 1e-12 and variance > 0:
        raw = min(q / variance, big_n)
        df = min(n - 1, int(np.sum(x > 0)), int(np.sum(x < 1)))
        if raw > n and df >= 1:
            n_eff = max(n, raw * (Z95 / student_t.ppf(0.975, df)) ** 2)
    return wilson(mean, n_eff)


def agrees(ours: dict, expected: dict) -> None:
    for key in ("samples", "cases", "passed", "errors"):
        assert ours[key] == expected[key], key
    for key in ("passRate", "meanScore"):
        assert ours[key] == (None if expected[key] is None else pytest.approx(expected[key], abs=2e-6)), key
    if expected["passCI"] is None:
        assert ours["passRateCI"] is None
    else:
        assert ours["passRateCI"] == pytest.approx(expected["passCI"], abs=2e-6)
    assert (
        ours["tokens"]["input"] == expected["tokens"]["input"]
        and ours["tokens"]["total"] == expected["tokens"]["total"]
    )
    for key, value in expected["latencyMs"].items():
        assert ours["latencyMs"][key] == (None if value is None else pytest.approx(value, abs=2e-6)), key
    if "passHatK" in expected:
        assert ours["passHatK"] == expected["passHatK"]


@settings(max_examples=150, deadline=None)
@given(st.lists(row_strategy, max_size=60), st.integers(1, 3))
def test_summary_agrees_with_numpy_on_random_tables(table, repeats):
    results = [{"evalId": e, "caseId": c, "outcome": o, "score": s} for e, c, o, s, _, _ in table]
    records = [{"usage": r[4], "latencyMs": r[5]} for r in table]
    summary = summarize(MANIFEST, results, records, repeats=repeats)
    assert list(summary["evals"]) == [e for e in ("b", "a") if any(r[0] == e for r in table)] + (
        ["c"] if any(r[0] == "c" for r in table) else []
    )
    for eval_id, ours in summary["evals"].items():
        agrees(ours, numpy_group([r for r in table if r[0] == eval_id], repeats))
    agrees(summary["overall"], numpy_group(table, repeats))
