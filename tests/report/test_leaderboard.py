"""`trunchbull leaderboard` on runs with known outcomes (made by the real
`grade --run-dir` and a real `run` of one eval): a clearly best model, one
indistinguishable from it, one significantly below, one run with fewer cases
(the others' extra cases are left out, with a warning); the JSON, the CSV,
the terminal table, and the HTML page in headless Chromium."""

from __future__ import annotations

import csv
import io

import orjson
import pytest

from tests.report.conftest import graded_run, write_jsonl

CASES = ["alpha.1", "alpha.2", "alpha.3", "alpha.4", "beta.1", "beta.2", "beta.3"]


@pytest.fixture(scope="module")
def runs(release_of, tmp_path_factory, session_cache):
    from tests.report.conftest import trunchbull

    def tb(*args):
        return trunchbull(*args, cache=session_cache)

    base = tmp_path_factory.mktemp("board")
    release = release_of("pairs")
    answers = {
        "best": {c: "yes" for c in CASES},  # 7 of 7
        "twin": {c: ("no" if c == "beta.2" else "yes") for c in CASES},  # 6 of 7
        "worst": {c: "no" for c in CASES},  # 0 of 7
    }
    out = {name: graded_run(tb, release, a, base / name / "run", f"{name}.jsonl") for name, a in answers.items()}
    # a run of the alpha eval only, replaying the best answers
    replay = write_jsonl(base / "alpha.jsonl", [{"caseId": c, "output": "yes"} for c in CASES[:4]])
    result = tb("run", release, "--model", f"replay:{replay}", "--eval", "alpha", "-o", base / "alpha", "--no-cache")
    assert result.code == 0, result.stderr
    out["alpha"] = base / "alpha"
    out["base"] = base
    return out


def test_best_indistinguishable_and_below(runs, tb, tmp_path):
    result = tb("leaderboard", runs["worst"], runs["twin"], runs["best"], "--json", "--csv", tmp_path / "b.csv")
    assert result.code == 0, result.stderr
    board = result.json
    assert board["sharedCases"] == 7 and board["evals"] == ["alpha", "beta"]
    models = {m["model"]: m for m in board["models"]}
    assert [m["model"] for m in board["models"]] == [
        "recorded:best.jsonl",
        "recorded:twin.jsonl",
        "recorded:worst.jsonl",
    ]
    best, twin, worst = (models[f"recorded:{n}.jsonl"] for n in ("best", "twin", "worst"))
    assert (best["rank"], best["verdict"], best["vsBest"]) == (1, "best", None)
    assert best["overall"]["meanScore"] == 1.0 and best["overall"]["meanScoreCI"][1] == 1.0
    assert twin["verdict"] == "indistinguishable" and worst["verdict"] == "below"
    assert twin["vsBest"]["overall"]["difference"] == pytest.approx(-1 / 7, abs=1e-6)
    assert worst["vsBest"]["overall"]["difference"] == -1.0 and worst["vsBest"]["overall"]["ci"][1] < 0
    # Holm: the smaller p-value is multiplied by the 2 comparisons, the larger by 1 (and kept monotone)
    w, t = worst["vsBest"]["overall"], twin["vsBest"]["overall"]
    # (from the unrounded p-values: twice a value rounded to 6 decimals is within 1e-6 of it)
    assert w["holmP"] == pytest.approx(min(1.0, 2 * w["pValue"]), abs=2e-6)
    assert t["holmP"] == pytest.approx(max(t["pValue"], w["holmP"]), abs=2e-6)
    assert twin["evals"]["beta"]["meanScore"] == pytest.approx(2 / 3, abs=1e-6)
    # the same intervals as the run's own summary (every case is shared)
    summary = orjson.loads((runs["twin"] / "summary.json").read_bytes())
    assert twin["overall"]["passRateCI"] == summary["overall"]["passRateCI"]
    assert all(m["leftOut"] == 0 for m in board["models"]) and best["cost"] is None  # recorded answers: no price
    rows = list(csv.DictReader(io.StringIO((tmp_path / "b.csv").read_text())))
    assert len(rows) == 9 and {r["group"] for r in rows} == {"alpha", "beta", "overall"}
    overall = {r["model"]: r for r in rows if r["group"] == "overall"}
    assert overall["recorded:worst.jsonl"]["vsBest"] == "below" and overall["recorded:best.jsonl"]["costUsd"] == ""
    text = tb("leaderboard", runs["worst"], runs["twin"], runs["best"])
    assert text.code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert "recorded:best.jsonl" in lines[3] and "≈ best" in lines[4] and "below" in lines[5]
    assert "unknown" in lines[3]


def test_runs_with_fewer_cases_rank_over_the_shared_ones(runs, tb):
    result = tb("leaderboard", runs["best"], runs["alpha"], runs["worst"], "--json")
    assert result.code == 0, result.stderr
    board = result.json
    assert board["sharedCases"] == 4 and board["evals"] == ["alpha"]
    left = {m["model"]: m["leftOut"] for m in board["models"]}
    assert left == {
        "recorded:best.jsonl": 3,
        "recorded:worst.jsonl": 3,
        next(m for m in left if m.startswith("replay:")): 0,
    }
    assert "3 case(s) of recorded:best.jsonl are not in every run and were left out" in result.stderr
    assert tb("leaderboard", runs["best"]).code == 2  # one run is not a leaderboard


def test_the_html_page_in_chromium(runs, tb, browser, tmp_path):
    page_path = tmp_path / "board.html"
    result = tb("leaderboard", runs["worst"], runs["twin"], runs["best"], runs["alpha"], "-o", page_path, "--json")
    assert result.code == 0, result.stderr
    board = result.json
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    problems, requests = [], []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_path.as_uri())
    page.wait_for_selector("body[data-ready]")
    rows = page.query_selector_all("[data-testid=model-row]")
    assert [(r.get_attribute("data-model"), r.get_attribute("data-verdict")) for r in rows] == [
        (m["model"], m["verdict"]) for m in board["models"]
    ]
    for m in board["models"]:
        cell = page.locator(f"[data-testid=overall][data-model='{m['model']}']")
        assert float(cell.get_attribute("data-value")) == m["overall"]["meanScore"]
        assert cell.locator("svg.whisker").count() == 1
    assert "left out" in page.locator("[data-testid=note]").first.inner_text()
    assert page.locator("[data-testid=cost]").first.inner_text() == "unknown"
    page.screenshot(path=str(tmp_path / "board.png"))
    assert problems == [] and requests == [page_path.as_uri()]
    context.close()
