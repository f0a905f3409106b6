"""`trunchbull compare`: paired differences with t intervals, checked against
a published paired-t example and against values computed by hand on run
directories made by the real `grade --run-dir`."""

from __future__ import annotations

import pytest
from trunchbull.report.compare.paired import paired_difference

from tests.report.conftest import graded_run, read_jsonl

# A (baseline) and B answers for tests/report/fixtures/pairs ("yes" passes).
A = {
    "alpha.1": "yes",
    "alpha.2": "yes",
    "alpha.3": "no",
    "alpha.4": "yes",
    "beta.1": "yes",
    "beta.2": "no",
    "beta.3": "yes",
}
B = {
    "alpha.1": "no",
    "alpha.2": "yes",
    "alpha.3": "yes",
    "alpha.4": "no",
    "beta.1": "yes",
    "beta.2": "no",
}  # beta.3: none


def test_paired_interval_matches_students_sleep_data():
    # Student (1908), "The probable error of a mean", Biometrika 6(1), the
    # Cushny-Peebles hours of extra sleep of 10 patients under two drugs (R's
    # `sleep` data set). R's `t.test(extra ~ group, data = sleep, paired = TRUE)`
    # (documented in ?sleep) reports a mean difference of -1.58 (group 1 - 2),
    # t = -4.0621 on 9 df, 95% CI -2.4598858 to -0.7001142; here B - A = group 2 - group 1.
    group1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    group2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    result = paired_difference(group1, group2)
    assert result["n"] == 10
    assert result["difference"] == pytest.approx(1.58)
    assert result["difference"] / result["standardError"] == pytest.approx(4.0621, abs=1e-3)
    assert result["ci"] == pytest.approx([0.7001142, 2.4598858], abs=1e-6)


def test_compare_against_hand_computed_values(release_of, tb, tmp_path):
    release = release_of("pairs")
    run_a = graded_run(tb, release, A, tmp_path / "a" / "run", "a.jsonl")
    run_b = graded_run(tb, release, B, tmp_path / "b" / "run", "b.jsonl")
    result = tb("compare", run_a, run_b, "--json")
    assert result.code == 0, result.stderr
    out = result.json
    # alpha: per-case B - A = -1, 0, +1, -1: mean -0.25; deviations -0.75, 0.25, 1.25, -0.75 give
    # sd = sqrt(2.75 / 3) = 0.957427, SE = 0.478714; t(0.975, 3) = 3.182446: half-width 1.523476
    alpha = out["evals"]["alpha"]
    assert alpha["n"] == 4 and alpha["meanA"] == 0.75 and alpha["meanB"] == 0.5
    assert alpha["difference"] == -0.25
    assert alpha["standardError"] == pytest.approx(0.478714, abs=1e-6)
    assert alpha["ci"] == pytest.approx([-1.773476, 1.273476], abs=1e-5)
    assert (alpha["regressed"], alpha["fixed"], alpha["unchanged"], alpha["excluded"]) == (2, 1, 1, 0)
    # beta: beta.3 has no response in B (graded `error`), so it is left out; the other two are
    # unchanged: differences 0, 0: SE 0 and a zero-width interval
    beta = out["evals"]["beta"]
    assert (beta["n"], beta["difference"], beta["standardError"], beta["ci"]) == (2, 0.0, 0.0, [0.0, 0.0])
    assert (beta["regressed"], beta["fixed"], beta["unchanged"], beta["excluded"]) == (0, 0, 2, 1)
    # overall, six shared cases: -1, 0, 1, -1, 0, 0: mean -1/6; sum of squared deviations 17/6,
    # sd = sqrt(17/30) = 0.752773, SE = 0.307318; t(0.975, 5) = 2.570582: half-width 0.789986
    overall = out["overall"]
    assert overall["n"] == 6 and overall["difference"] == pytest.approx(-1 / 6, abs=1e-6)
    assert overall["standardError"] == pytest.approx(0.307318, abs=1e-6)
    assert overall["ci"] == pytest.approx([-0.956653, 0.623320], abs=1e-5)
    assert (overall["regressed"], overall["fixed"], overall["unchanged"], overall["excluded"]) == (2, 1, 3, 1)
    assert out["regressedCases"] == ["alpha.1", "alpha.4"]
    assert out["fixedCases"] == ["alpha.3"]
    assert out["excludedCases"] == ["beta.3"]
    assert out["significantlyWorse"] is False and out["exitCode"] == 0

    text = tb("compare", run_a, run_b)
    assert text.code == 0
    assert "[-1.773, +1.273]" in text.stdout and "regressed (2):" in text.stdout
    assert "alpha.1  pass 100% -> 0%" in text.stdout
    assert "left out: 1 case(s)" in text.stdout


def test_fail_on_regression_exits_1_only_when_significantly_worse(release_of, tb, tmp_path):
    release = release_of("pairs")
    run_a = graded_run(tb, release, A, tmp_path / "a" / "run", "a.jsonl")
    worse = graded_run(tb, release, {case: "no" for case in A}, tmp_path / "w" / "run", "w.jsonl")
    noisy = graded_run(tb, release, B, tmp_path / "b" / "run", "b.jsonl")
    # every case A passed now fails: five differences of -1 and two of 0 over seven cases
    result = tb("compare", run_a, worse, "--fail-on-regression", "--json")
    assert result.code == 1, result.stderr
    assert result.json["overall"]["ci"][1] < 0 and result.json["significantlyWorse"] is True
    assert "significantly worse" in result.stderr
    assert tb("compare", run_a, worse).code == 0  # without the flag compare reports, and exits 0
    assert tb("compare", run_a, noisy, "--fail-on-regression").code == 0  # a CI that contains 0
    # the other way round B is better: never a failure
    assert tb("compare", worse, run_a, "--fail-on-regression").code == 0


def test_repeats_pair_case_means(release_of, tb, tmp_path):
    """With repeats, a case's score is its mean over its repeats, and a drop of
    its pass rate is a regression."""
    release = release_of("pairs")
    echo = tb("run", release, "--model", "echo", "-o", tmp_path / "echo", "--repeat", "3", "--no-cache")
    assert echo.code == 0, echo.stderr
    run_a = graded_run(tb, release, A, tmp_path / "a" / "run", "a.jsonl")
    result = tb("compare", run_a, tmp_path / "echo", "--json")
    assert result.code == 0, result.stderr
    out = result.json
    # echo answers the prompt, which never contains "yes": every case scores 0 in B
    assert out["overall"]["n"] == 7
    assert out["overall"]["difference"] == pytest.approx(-5 / 7, abs=1e-6)
    assert sorted(out["regressedCases"]) == ["alpha.1", "alpha.2", "alpha.4", "beta.1", "beta.3"]
    assert len(read_jsonl(tmp_path / "echo" / "results.jsonl")) == 21


def test_runs_of_different_releases(release_of, tb, tmp_path):
    pairs, agent = release_of("pairs"), release_of("agent")
    run_a = graded_run(tb, pairs, A, tmp_path / "a" / "run", "a.jsonl")
    other = tb("run", agent, "--model", "echo", "-o", tmp_path / "other", "--eval", "plain", "--no-cache")
    assert other.code == 0, other.stderr
    refused = tb("compare", run_a, tmp_path / "other")
    assert refused.code == 2
    assert "different releases" in refused.stderr and "--allow-release-change" in refused.stderr
    allowed = tb("compare", run_a, tmp_path / "other", "--allow-release-change", "--json")
    assert allowed.code == 0, allowed.stderr
    out = allowed.json
    assert out["releaseChanged"] is True and out["overall"]["n"] == 0
    assert out["removedCases"] == list(A) and out["addedCases"] == [
        "plain.one",
        "plain.two",
        "plain.three",
        "plain.four",
    ]
    assert out["overall"]["difference"] is None and out["overall"]["ci"] is None
