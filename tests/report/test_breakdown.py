"""`--by FIELD` on real runs of benchmarks/mmlu (its cases carry their
subject in their data): `report`, `compare`, `leaderboard` and `export`
give a row per subject, each with the interval of its own cases, and the
macro average beside the micro one; the figures are checked against the
runs' own files and the release's cases, read here."""

from __future__ import annotations

import csv
import io
import shutil
from statistics import fmean

import pytest
from scipy.stats import binomtest

from tests.report.mmlu_runs import outcomes, summary


def by_subject(mmlu, run) -> dict[str, list[str]]:
    """Subject → the outcomes of its cases in `run`, from results.jsonl and the release's data."""
    groups: dict[str, list[str]] = {}
    for case_id, outcome in outcomes(run).items():
        groups.setdefault(mmlu.subject(case_id), []).append(outcome)
    return groups


def test_report_by_subject_gives_57_rows_on_an_echo_run(mmlu, tb, tmp_path):
    result = tb("report", mmlu.runs["echo"], "--by", "data.subject", "-o", tmp_path / "r.html")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("data.subject "))
    assert set(lines[start + 1]) == {"-"}  # the rule under the header
    rows = lines[start + 2 : start + 2 + 57]
    subjects = sorted({c["data"]["subject"] for c in mmlu.cases.values()})
    assert [row.split()[0] for row in rows] == subjects  # MMLU's subjects, in the release's (alphabetical) order
    assert set(lines[start + 59]) == {"-"} and lines[start + 60].startswith("macro (57 groups)")
    assert lines[start + 62].startswith("overall (micro)")
    for row in rows:
        assert row.split()[1:6] == ["2", "2", "0", "2", "0"]  # cases, samples, pass, fail, error: echo answers nothing


def test_each_subject_has_its_own_interval_and_the_macro_is_their_mean(mmlu, tb, tmp_path):
    run = mmlu.runs["half"]
    result = tb("report", run, "--by", "data.subject", "--json", "-o", tmp_path / "r.html")
    assert result.code == 0, result.stderr
    shown = result.json
    breakdown = shown["breakdown"]
    assert breakdown["by"] == "data.subject" and len(breakdown["groups"]) == 57
    expected = by_subject(mmlu, run)
    for subject, group in breakdown["groups"].items():
        passed = expected[subject].count("pass")
        assert (group["cases"], group["passed"]) == (len(expected[subject]), passed)
        # one sample per case: the continuity-corrected Wilson interval of its own cases (scipy's)
        ref = binomtest(passed, len(expected[subject])).proportion_ci(0.95, method="wilsoncc")
        assert group["passRateCI"] == pytest.approx([ref.low, ref.high], abs=1e-6)
    macro = fmean(o.count("pass") / len(o) for o in expected.values())
    assert breakdown["macro"] == {
        "groups": 57,
        "passRate": pytest.approx(macro, abs=1e-6),
        "meanScore": pytest.approx(macro, abs=1e-6),
    }
    assert breakdown["overall"]["passRateCI"] == summary(run)["overall"]["passRateCI"]  # micro: the run's own
    assert shown["summary"] == summary(run) and shown["report"] == str(tmp_path / "r.html")


def test_by_eval_and_bad_fields(mmlu, tb, tmp_path):
    by_eval = tb("report", mmlu.runs["half"], "--by", "eval", "--json", "-o", tmp_path / "r.html")
    assert by_eval.code == 0, by_eval.stderr
    assert list(by_eval.json["breakdown"]["groups"]) == ["mmlu"]
    typo = tb("report", mmlu.runs["half"], "--by", "data.subjct", "-o", tmp_path / "r.html")
    assert typo.code == 2 and "did you mean data.subject?" in typo.stderr and "answer, subject" in typo.stderr
    assert "Traceback" not in typo.stderr
    bad = tb("compare", mmlu.runs["best"], mmlu.runs["half"], "--by", "subject")
    assert bad.code == 2 and "give `eval` or a field of the cases' data as data.NAME" in bad.stderr


def test_compare_by_subject(mmlu, tb):
    a, b = mmlu.runs["best"], mmlu.runs["half"]
    result = tb("compare", a, b, "--by", "data.subject", "--json")
    assert result.code == 0, result.stderr
    comparison = result.json
    assert comparison["by"] == "data.subject" and len(comparison["groups"]) == 57
    wrong = set(mmlu.wrong["half"])
    for subject, group in comparison["groups"].items():
        mine = [c for c in mmlu.cases if mmlu.subject(c) == subject]
        regressed = [c for c in mine if c in wrong]
        assert (group["n"], group["regressed"], group["fixed"]) == (len(mine), len(regressed), 0)
        assert group["difference"] == pytest.approx(-len(regressed) / len(mine), abs=1e-6)
        assert group["ci"][0] <= group["difference"] <= group["ci"][1]
    macro = comparison["macro"]
    assert macro["groups"] == 57
    assert macro["difference"] == pytest.approx(fmean(g["difference"] for g in comparison["groups"].values()), abs=1e-5)
    assert sum(g["regressed"] for g in comparison["groups"].values()) == comparison["overall"]["regressed"] == 57
    text = tb("compare", a, b, "--by", "data.subject")
    assert (
        text.code == 0 and "by data.subject: 57 group(s)" in text.stdout and "macro (57 groups): A 1.000" in text.stdout
    )


def test_leaderboard_by_subject(mmlu, tb):
    runs = [mmlu.runs[name] for name in ("half", "best", "close")]
    result = tb("leaderboard", *runs, "--by", "data.subject", "--json")
    assert result.code == 0, result.stderr
    board = result.json
    assert board["by"] == "data.subject" and len(board["groups"]) == 57 and "evals" not in board
    for model in board["models"]:
        assert len(model["groups"]) == 57 and model["macro"]["groups"] == 57
        if model["vsBest"]:
            assert len(model["vsBest"]["groups"]) == 57
    half = next(m for m in board["models"] if m["runDir"] == str(mmlu.runs["half"]))
    assert half["groups"]["anatomy"]["meanScore"] == pytest.approx(
        fmean(0.0 if c in mmlu.wrong["half"] else 1.0 for c in mmlu.cases if mmlu.subject(c) == "anatomy")
    )
    text = tb("leaderboard", *runs, "--by", "data.subject")
    assert text.code == 0, text.stderr
    assert "mean score by data.subject" in text.stdout and "\nworld_religions " in text.stdout


def test_export_carries_the_field(mmlu, tb):
    result = tb("export", mmlu.runs["half"], "--format", "csv", "--by", "data.subject")
    assert result.code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout, newline="")))
    assert len(rows) == 114 and all(r["data.subject"] == mmlu.subject(r["caseId"]) for r in rows)
    junit = tb("export", mmlu.runs["half"], "--format", "junit", "--by", "data.subject")
    assert junit.code == 0 and '<property name="data.subject" value="abstract_algebra" />' in junit.stdout


def test_without_its_release_by_data_needs_release(mmlu, tb, tmp_path):
    moved = tmp_path / "moved"
    shutil.copytree(mmlu.runs["half"], moved / "half")
    shutil.copytree(mmlu.release, moved / "release")
    hidden = mmlu.release.with_name("mmlu-release-hidden")
    mmlu.release.rename(hidden)
    try:
        refused = tb("compare", mmlu.runs["best"], moved / "half", "--by", "data.subject")
        assert refused.code == 2
        assert "--by data.subject reads each case's data from the release" in refused.stderr
        assert "--release PATH" in refused.stderr
        given = tb(
            "compare",
            mmlu.runs["best"],
            moved / "half",
            "--by",
            "data.subject",
            "--release",
            moved / "release",
            "--json",
        )
        assert given.code == 0, given.stderr
        assert len(given.json["groups"]) == 57
        by_eval = tb("compare", mmlu.runs["best"], moved / "half", "--by", "eval")  # needs no release
        assert by_eval.code == 0, by_eval.stderr
    finally:
        hidden.rename(mmlu.release)


def test_the_html_report_shows_the_breakdown(mmlu, tb, browser, tmp_path):
    out = tmp_path / "r.html"
    result = tb("report", mmlu.runs["half"], "--vs", mmlu.runs["best"], "--by", "data.subject", "--json", "-o", out)
    assert result.code == 0, result.stderr
    shown = result.json
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(out.as_uri() + "#tab=overview")
    page.wait_for_selector("body[data-ready]")
    tables = page.locator("[data-testid=breakdown]")
    assert tables.count() == 2  # each run's
    mine = page.locator("[data-testid=breakdown][data-run='0'] [data-testid=group-row]")
    assert mine.count() == 57
    groups = shown["breakdown"]["groups"]
    for i in range(57):
        row = mine.nth(i)
        subject = row.get_attribute("data-group")
        assert float(row.locator("[data-testid=group-rate]").get_attribute("data-value")) == groups[subject]["passRate"]
    page.click("button[data-tab=compare]")
    rows = page.locator("[data-testid=group-differences] tbody tr")
    assert rows.count() == 58  # 57 subjects and the overall
    assert "Macro average (each group alike)" in page.locator("[data-testid=macro]").inner_text()
    assert problems == []
    context.close()
