"""`trunchbull compare`: paired differences with their intervals, checked on
run directories made by the real `grade --run-dir` against the square-and-add
interval computed from the 2×2 table's discordant cells (tests/stats) and
values worked by hand."""

from __future__ import annotations

from math import sqrt

import pytest

from tests.report.conftest import graded_run, read_jsonl
from tests.stats.test_reference import mover_from_table

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


def augmented_se(diffs: list[float]) -> float:
    """sd/√n of the case differences with -1 and +1 at weight 1/2 and 0 at weight 1 added."""
    values = [(d, 1.0) for d in diffs] + [(-1.0, 0.5), (1.0, 0.5), (0.0, 1.0)]
    w = sum(v for _, v in values)
    mean = sum(d * v for d, v in values) / w
    return sqrt(sum(v * (d - mean) ** 2 for d, v in values) / w / w)


def test_compare_against_hand_computed_values(release_of, tb, tmp_path):
    release = release_of("pairs")
    run_a = graded_run(tb, release, A, tmp_path / "a" / "run", "a.jsonl")
    run_b = graded_run(tb, release, B, tmp_path / "b" / "run", "b.jsonl")
    result = tb("compare", run_a, run_b, "--json")
    assert result.code == 0, result.stderr
    out = result.json
    # alpha: per-case B - A = -1, 0, +1, -1; as a 2×2 table: both pass 1 (alpha.2), A only 2
    # (alpha.1, alpha.4), B only 1 (alpha.3), neither 0
    alpha = out["evals"]["alpha"]
    assert alpha["n"] == 4 and alpha["meanA"] == 0.75 and alpha["meanB"] == 0.5
    assert alpha["difference"] == -0.25
    assert alpha["ci"] == pytest.approx(mover_from_table(1, 2, 1, 0), abs=1e-6)
    assert -1 <= alpha["ci"][0] and alpha["ci"][1] <= 1  # the paired t interval was [-1.773, +1.273]
    assert alpha["standardError"] == pytest.approx(augmented_se([-1, 0, 1, -1]), abs=1e-6)
    assert alpha["mdd80"] == pytest.approx(2.801585 * alpha["standardError"], abs=1e-5)
    assert (alpha["regressed"], alpha["fixed"], alpha["unchanged"], alpha["excluded"]) == (2, 1, 1, 0)
    # beta: beta.3 has no response in B (graded `error`), so it is left out; the other two are
    # unchanged (beta.1 passes in both, beta.2 fails in both): a difference of 0, but not a
    # zero-width interval: two cases cannot rule out a change
    beta = out["evals"]["beta"]
    assert (beta["n"], beta["difference"]) == (2, 0.0)
    assert beta["ci"] == pytest.approx(mover_from_table(1, 0, 0, 1), abs=1e-6)
    assert beta["ci"][0] < -0.3 and beta["ci"][1] > 0.3
    assert beta["standardError"] == pytest.approx(augmented_se([0, 0]), abs=1e-6)
    assert (beta["regressed"], beta["fixed"], beta["unchanged"], beta["excluded"]) == (0, 0, 2, 1)
    # overall, six shared cases: both pass 2, A only 2, B only 1, neither 1
    overall = out["overall"]
    assert overall["n"] == 6 and overall["difference"] == pytest.approx(-1 / 6, abs=1e-6)
    assert overall["standardError"] == pytest.approx(augmented_se([-1, 0, 1, -1, 0, 0]), abs=1e-6)
    assert overall["ci"] == pytest.approx(mover_from_table(2, 2, 1, 1), abs=1e-6)
    assert (overall["regressed"], overall["fixed"], overall["unchanged"], overall["excluded"]) == (2, 1, 3, 1)
    assert out["regressedCases"] == ["alpha.1", "alpha.4"]
    assert out["fixedCases"] == ["alpha.3"]
    assert out["excludedCases"] == ["beta.3"]
    assert out["significantlyWorse"] is False and out["exitCode"] == 0

    text = tb("compare", run_a, run_b)
    assert text.code == 0
    low, high = alpha["ci"]
    assert f"[{low:+.3f}, {high:+.3f}]" in text.stdout and "regressed (2):" in text.stdout
    assert "A is the baseline" in text.stdout and "power: with 6 case(s)" in text.stdout
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
