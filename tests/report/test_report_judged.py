"""The HTML report of judged runs in a real headless Chromium: each sample's
transcript shows every judge's grade and its reasoning as the judge replied
(one judge, or a panel's three), and a self-judged run is marked in its run
line. The runs are real: tests/run/fixtures/rubrics through the real
openai-compatible provider, the judges answered by the local scripted server."""

from __future__ import annotations

import pytest

from tests.report.conftest import trunchbull
from tests.support.chat_server import ChatServer, Reply

SELF = "openai-compatible:judge-self"
PANEL = ["openai-compatible:judge-a", "openai-compatible:judge-b", "openai-compatible:judge-c"]
CASES = ["--case", "verdicts.pass", "--case", "verdicts.fail"]


def reasoning(model: str) -> str:
    return f"{model} read the submission against the criterion."


def rule(text: str, model):
    """A judge request holds the default template's data block; judge-c fails what the others pass."""
    if "[BEGIN DATA]" not in text:
        return None
    return Reply(content=f"{reasoning(model)}\nGRADE: {'I' if model == 'judge-c' else 'C'}")


@pytest.fixture(scope="module")
def judged(release_of, tmp_path_factory, session_cache):
    release = release_of("rubrics")
    base = tmp_path_factory.mktemp("judged-runs")
    with ChatServer() as server:
        server.judge(rule)
        own = ["--model", SELF, "--base-url", server.url, "--judge", SELF, "--allow-self-judge"]
        panel = ["--model", "echo"] + [arg for judge in PANEL for arg in ("--judge", judge)]
        for name, flags in (("self", own), ("panel", panel)):
            run = trunchbull(
                "run", release, *flags, "--judge-base-url", server.url, "-o", base / name, *CASES, "--no-cache",
                cache=session_cache,
            )  # fmt: skip
            assert run.code == 0, run.stderr
            report = trunchbull("report", base / name, "-o", base / f"{name}.html", cache=session_cache)
            assert report.code == 0, report.stderr
    return base


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    opened = context.new_page()
    opened.problems = []
    opened.on("pageerror", lambda e: opened.problems.append(f"page error: {e}"))
    opened.on("console", lambda m: opened.problems.append(m.text) if m.type in ("error", "warning") else None)
    yield opened
    context.close()


def _transcript(page, path, case: str):
    page.goto(f"{path.as_uri()}#case={case}")
    page.wait_for_selector("body[data-ready]", timeout=15000)
    page.wait_for_selector("[data-testid=transcript]")


def test_a_panel_s_verdicts_and_reasoning_are_in_the_transcript(page, judged):
    _transcript(page, judged / "panel.html", "verdicts.pass")
    verdicts = page.query_selector_all("[data-testid=transcript] [data-testid=judge-verdict]")
    shown = {v.get_attribute("data-judge"): (v.get_attribute("data-grade"), v.inner_text()) for v in verdicts}
    assert set(shown) == set(PANEL)
    for judge, (grade, text) in shown.items():
        model = judge.split(":", 1)[1]
        assert grade == ("I" if model == "judge-c" else "C")
        assert reasoning(model) in text
    line = page.query_selector("[data-testid=judges]")
    assert line is not None and line.get_attribute("data-self-judged") == "false"
    assert "judged by " + ", ".join(PANEL) in line.inner_text()
    assert page.problems == [], page.problems


def test_a_self_judged_run_is_marked(page, judged):
    _transcript(page, judged / "self.html", "verdicts.fail")
    line = page.query_selector("[data-testid=judges]")
    assert line is not None and line.get_attribute("data-self-judged") == "true"
    assert "self-judged" in line.inner_text() and SELF in line.inner_text()
    verdicts = page.query_selector_all("[data-testid=transcript] [data-testid=judge-verdict]")
    assert [v.get_attribute("data-judge") for v in verdicts] == [SELF]
    assert reasoning("judge-self") in verdicts[0].inner_text()
    assert page.problems == [], page.problems
