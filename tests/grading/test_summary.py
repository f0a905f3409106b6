"""The summary statistics (SPEC §8.5) on small tables worked out by hand."""

from __future__ import annotations


import pytest

from trunchbull.grading.summary import Z95, pass_at_k, pass_hat_k, summarize

MANIFEST = {"title": "t", "version": None, "digest": "sha256:x", "evals": [{"id": "b"}, {"id": "a"}]}


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
