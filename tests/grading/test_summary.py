"""The summary statistics (SPEC §8.5) on small tables worked out by hand."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trunchbull.release.manifest import Manifest
from trunchbull.grading.summary import Z95, pass_at_k, pass_hat_k, summarize

MANIFEST = Manifest({"title": "t", "version": None, "digest": "sha256:x", "evals": [{"id": "b"}, {"id": "a"}]})


def rows(spec: list[tuple[str, str, str, float | None]]) -> list[dict]:
    return [{"evalId": e, "caseId": c, "outcome": o, "score": s} for e, c, o, s in spec]


def test_z_is_the_normal_975_quantile():
    assert Z95 == pytest.approx(1.959964, abs=1e-6)


def test_pass_at_k_unbiased_estimator_by_hand():
    # n=5 samples, c=2 passed: pass@1 = 2/5; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7;
    # pass@3 = 1 - C(3,3)/C(5,3) = 1 - 1/10 = 0.9; pass@4 = pass@5 = 1 (C(3,4) = 0)
    assert pass_at_k([(5, 2)], 5) == {"1": 0.4, "2": 0.7, "3": 0.9, "4": 1.0, "5": 1.0}
    # averaged over cases; a case with fewer graded samples than k is left out of pass@k
    assert pass_at_k([(3, 0), (3, 3), (2, 1)], 3) == {
        "1": pytest.approx((0 + 1 + 0.5) / 3, abs=1e-6),
        "2": pytest.approx((0 + 1 + 1) / 3, abs=1e-6),
        "3": 0.5,
    }
    assert pass_hat_k([(3, 3), (3, 2), (3, 0)], 3) == pytest.approx(1 / 3, abs=1e-6)
    assert pass_hat_k([(2, 2)], 3) is None


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
    # case means 1, .5, .5, .5: mean 0.625, sd sqrt((.375² + 3 × .125²) / 3) = 0.25, se 0.25/2
    half = Z95 * 0.25 / 2
    assert a["passRate"] == 0.625 and a["passRateCI"] == pytest.approx([0.625 - half, 0.625 + half], abs=1e-6)
    assert a["meanScore"] == 0.625 and a["meanScoreCI"] == pytest.approx([0.625 - half, 0.625 + half], abs=1e-6)
    # pass@1 = mean(1, .5, .5, .5); pass@2 = mean(1, 1 - C(1,2)/C(2,2) = 1, 1, 1) = 1; pass^2 = 1/4
    assert a["passAtK"] == {"1": 0.625, "2": 1.0} and a["passHatK"] == 0.25
    b = summary["evals"]["b"]
    assert b["passRate"] == 1.0 and b["meanScore"] == 0.5 and b["passRateCI"] is None  # one case: no interval
    assert list(summary["evals"]) == ["b", "a"]  # release order
    overall = summary["overall"]
    # five case means for the pass rate: 1, .5, .5, .5, 1 → 0.7
    assert overall["passRate"] == 0.7 and overall["samples"] == 10 and overall["cases"] == 5


def test_interval_is_clipped_to_the_unit_range():
    table = rows([("a", f"c{i}", "pass" if i else "fail", 1.0 if i else 0.0) for i in range(4)])
    ci = summarize(MANIFEST, table)["overall"]["passRateCI"]
    # mean 0.75, sd 0.5, se 0.25 → 0.75 ± 0.49: the top is clipped at 1
    assert ci == pytest.approx([0.75 - Z95 * 0.25, 1.0], abs=1e-6)


def test_tokens_and_latency_percentiles():
    table = rows([("a", f"c{i}", "pass", 1.0) for i in range(5)] + [("a", "e", "error", None)])
    usages = [{"inputTokens": i, "outputTokens": 2 * i, "totalTokens": 3 * i} for i in range(5)] + [None]
    latencies = [10.0, 20.0, 30.0, 40.0, 50.0, 9999.0]  # the error's latency is left out
    overall = summarize(MANIFEST, table, usages, latencies)["overall"]
    assert overall["tokens"] == {"input": 10, "output": 20, "total": 30}
    # linear interpolation over 10..50: p50 30, p90 46, p99 49.6
    assert overall["latencyMs"] == {"p50": 30.0, "p90": 46.0, "p99": 49.6}
    assert "passAtK" not in overall


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
    pass_means = [
        np.mean([r[2] == "pass" for r in rs if r[2] != "error"])
        for rs in cases.values()
        if any(r[2] != "error" for r in rs)
    ]
    score_means = [
        np.mean([r[3] for r in rs if r[3] is not None]) for rs in cases.values() if any(r[3] is not None for r in rs)
    ]
    latencies = [r[5] for r in table if r[2] != "error" and r[5] is not None]
    out = {
        "samples": len(table),
        "cases": len(cases),
        "passed": sum(r[2] == "pass" for r in table),
        "errors": sum(r[2] == "error" for r in table),
        "passRate": np.mean(pass_means) if pass_means else None,
        "passSd": np.std(pass_means, ddof=1) if len(pass_means) > 1 else None,
        "nPass": len(pass_means),
        "meanScore": np.mean(score_means) if score_means else None,
        "tokens": {
            "input": sum(r[4]["inputTokens"] or 0 for r in table if r[4]),
            "total": sum(r[4]["totalTokens"] for r in table if r[4]),
        },
        "latencyMs": {f"p{p}": np.percentile(latencies, p) if latencies else None for p in (50, 90, 99)},
    }
    if repeats >= 2:
        graded = [(sum(r[2] != "error" for r in rs), sum(r[2] == "pass" for r in rs)) for rs in cases.values()]
        out["passHatK"] = pass_hat_k(graded, repeats)
    return out


def agrees(ours: dict, expected: dict) -> None:
    for key in ("samples", "cases", "passed", "errors"):
        assert ours[key] == expected[key], key
    for key in ("passRate", "meanScore"):
        assert ours[key] == (None if expected[key] is None else pytest.approx(expected[key], abs=2e-6)), key
    if expected["passSd"] is None:
        assert ours["passRateCI"] is None
    else:
        half = Z95 * expected["passSd"] / np.sqrt(expected["nPass"])
        low, high = max(0.0, expected["passRate"] - half), min(1.0, expected["passRate"] + half)
        assert ours["passRateCI"] == pytest.approx([low, high], abs=2e-6)
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
    summary = summarize(MANIFEST, results, [r[4] for r in table], [r[5] for r in table], repeats=repeats)
    assert list(summary["evals"]) == [e for e in ("b", "a") if any(r[0] == e for r in table)] + (
        ["c"] if any(r[0] == "c" for r in table) else []
    )
    for eval_id, ours in summary["evals"].items():
        agrees(ours, numpy_group([r for r in table if r[0] == eval_id], repeats))
    agrees(summary["overall"], numpy_group(table, repeats))
