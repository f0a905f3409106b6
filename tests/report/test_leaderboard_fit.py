"""The leaderboard over three real MMLU runs broken down by its 57 subjects,
in headless Chromium at 1,280 px: the page itself never scrolls sideways,
the ranking (with "vs best", tokens and cost, in total and per sample) is
in view whole, and every one of the 57 subject columns can be scrolled into
view beside the fixed model column. And the intervals agree with the
verdicts: the runs are made so that `compare` calls each of two models
significantly worse than the best, while the leaderboard, correcting its
two comparisons, calls both indistinguishable from it, with intervals that
contain 0 (and the uncorrected ones, labelled, that do not)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.report.conftest import ARTIFACTS, REPO

WIDTH = 1280


@pytest.fixture(scope="module")
def board(mmlu, tmp_path_factory, session_cache):
    from tests.report.conftest import trunchbull

    out = tmp_path_factory.mktemp("board") / "board.html"
    runs = [mmlu.runs[name] for name in ("closer", "best", "close")]
    result = trunchbull("leaderboard", *runs, "--by", "data.subject", "-o", out, "--json", cache=session_cache)
    assert result.code == 0, result.stderr
    return out, result.json


def test_compare_and_the_leaderboard_differ_as_the_page_says(mmlu, tb, board):
    _, data = board
    models = {m["runDir"]: m for m in data["models"]}
    assert models[str(mmlu.runs["best"])]["verdict"] == "best"
    for name, wrong in (("close", 6), ("closer", 7)):
        one = tb("compare", mmlu.runs["best"], mmlu.runs[name], "--fail-on-regression", "--json")
        assert one.code == 1 and one.json["significantlyWorse"]  # one planned comparison: significant at 95%
        vs = models[str(mmlu.runs[name])]["vsBest"]["overall"]
        assert vs["difference"] == pytest.approx(-wrong / 114, abs=1e-6)
        assert vs["ci95"] == one.json["overall"]["ci"]  # the uncorrected interval is compare's
        assert vs["ci95"][1] < 0  # which excludes 0 …
        assert vs["verdict"] == "indistinguishable" and vs["holmP"] >= 0.05  # … but not after the correction
        assert vs["ci"][0] < 0 < vs["ci"][1] and vs["confidence"] > 0.95  # and the interval shown agrees
    assert "compare tests one planned comparison at 95%" in data["method"]["differs"]


def test_every_interval_agrees_with_its_verdict(board):
    _, data = board
    for model in data["models"]:
        if model["vsBest"] is None:
            continue
        every = [model["vsBest"]["overall"], *model["vsBest"]["groups"].values()]
        assert len(every) == 58
        for vs in every:
            if vs["difference"] is None:
                continue
            excludes = vs["ci"][1] < 0 or vs["ci"][0] > 0
            assert excludes == (vs["verdict"] in ("below", "above")) == (vs["holmP"] < 0.05), vs


def test_57_columns_are_readable_at_1280_px(browser, board):
    path, data = board
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    page = context.new_page()
    problems, requests = [], []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH  # the page never scrolls sideways

    # the ranking fits: every one of its cells is in view without scrolling
    for testid in ("overall", "macro", "vs-best", "tokens-per-sample", "tokens", "cost-per-sample", "cost"):
        for box in (e.bounding_box() for e in page.query_selector_all(f"[data-testid=board] [data-testid={testid}]")):
            assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= WIDTH, testid
    assert len(page.query_selector_all("[data-testid=model-row]")) == 3
    shown = page.locator("[data-testid=vs-best][data-low]").first
    low, high = float(shown.get_attribute("data-low")), float(shown.get_attribute("data-high"))
    assert low < 0 < high and "uncorrected" in shown.inner_text()
    assert "Why compare may disagree" in page.locator("[data-testid=differs]").inner_text()

    # every subject column can be brought into view beside the fixed model column
    heads = page.locator("[data-testid=column-head]")
    assert heads.count() == 57
    assert [heads.nth(i).get_attribute("data-group") for i in range(57)] == data["groups"]
    model_column = page.locator("[data-testid=columns] thead th").first
    for i in range(57):
        head = heads.nth(i)
        head.scroll_into_view_if_needed()
        box, fixed = head.bounding_box(), model_column.bounding_box()
        assert box is not None and fixed is not None
        assert fixed["x"] >= 0 and fixed["x"] + fixed["width"] <= box["x"] + 1  # the model column stays, beside it
        assert box["x"] + box["width"] <= WIDTH
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        assert page.evaluate("([x, y]) => document.elementFromPoint(x, y).dataset.group", [x, y]) == data["groups"][i]
        cells = page.locator(f"[data-testid=column-cell][data-group='{data['groups'][i]}']")
        assert cells.count() == 3
        for j in range(3):
            cell = cells.nth(j).bounding_box()
            assert (
                cell is not None and cell["x"] + cell["width"] <= WIDTH and cell["x"] >= fixed["x"] + fixed["width"] - 1
            )
    page.locator("[data-testid=columns-scroll]").evaluate(
        "e => { e.scrollLeft = e.scrollWidth / 2; }"
    )  # mid-way: the model column stays
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "leaderboard-57.png"), full_page=True)
    if os.environ.get("TRUNCHBULL_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(ARTIFACTS / "leaderboard-57.png", REPO / "docs" / "images" / "leaderboard-57.png")
    assert problems == [] and requests == [path.as_uri()]
    context.close()
