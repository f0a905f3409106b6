"""The HTML report in a real headless Chromium: reports of real runs (the
agent fixture run through the real openai-compatible provider against the
local model server, with scripted tool calls and the release's real tools)
render with no console error and no network request, show summary.json's
rates, filter the case table, show transcripts with tool calls and results,
and, with --vs, list the regression first. Screenshots are saved under
.cache/test-artifacts/report/ (and into docs/images/ with
TRUNCHBULL_UPDATE_SCREENSHOTS=1)."""

from __future__ import annotations

import os
import shutil

import orjson
import pytest

from tests.report.conftest import ARTIFACTS, REPO, trunchbull
from tests.support.chat_server import ChatServer, Reply

MODEL = "openai-compatible:test-model"
CASES = ["--case", "orders.*", "--case", "plain.*", "--case", "faults.explode"]


def _script(server: ChatServer, regress: bool) -> None:
    """A: the baseline; B (regress=True): plain.one regresses, orders.b2 is fixed, orders.calls errors."""
    server.script(
        "[order-a1]",
        [
            Reply(tool_calls=[("lookup_order", {"orderId": "A1"})], usage=(11, 5)),
            Reply(content="Order A1 has shipped.", usage=(20, 7)),
        ],
    )
    server.script(
        "[order-b2]",
        [
            Reply(tool_calls=[("lookup_order", {"orderId": "B2"})]),
            Reply(content="Order B2 has shipped." if regress else "I cannot tell."),
        ],
    )
    server.script(
        "[order-calls]",
        [Reply(status=400, error_body={"error": {"message": "bad request"}})]
        if regress
        else [Reply(tool_calls=[("lookup_order", {"orderId": "C3"})]), Reply(content="done")],
    )
    server.script("[fault-explode]", [Reply(tool_calls=[("explode", {})]), Reply(content="The system is down, sorry.")])
    if regress:
        server.script("[plain-one]", [Reply(content="nothing to say")])


@pytest.fixture(scope="module")
def reports(release_of, tmp_path_factory, session_cache):
    release = release_of("agent")
    base = tmp_path_factory.mktemp("agent-runs")
    runs = {}
    for name, regress in (("a", False), ("b", True)):
        with ChatServer() as server:
            _script(server, regress)
            result = trunchbull(
                "run",
                release,
                "--model",
                MODEL,
                "--base-url",
                server.url,
                "-o",
                base / name,
                *CASES,
                "--no-cache",
                "-j",
                "4",
                cache=session_cache,
            )
            assert result.code == (1 if regress else 0), result.stderr  # B has one sample in error
        runs[name] = base / name
    single = trunchbull("report", runs["b"], "-o", base / "b.html", cache=session_cache)
    assert single.code == 0, single.stderr
    vs = trunchbull("report", runs["b"], "--vs", runs["a"], "-o", base / "vs.html", cache=session_cache)
    assert vs.code == 0, vs.stderr
    return {"release": release, **runs, "single": base / "b.html", "vs": base / "vs.html", "vsText": vs.stdout}


@pytest.fixture
def page(browser):
    """A fresh page that records console messages, page errors and requests."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    opened = context.new_page()
    opened.problems = []
    opened.requests = []
    opened.on(
        "console",
        lambda m: opened.problems.append(f"console.{m.type}: {m.text}") if m.type in ("error", "warning") else None,
    )
    opened.on("pageerror", lambda e: opened.problems.append(f"page error: {e}"))
    opened.on("request", lambda r: opened.requests.append(r.url))
    yield opened
    context.close()


def _open(page, path):
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]", timeout=15000)


def _screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    if os.environ.get("TRUNCHBULL_UPDATE_SCREENSHOTS") == "1":
        (REPO / "docs" / "images").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ARTIFACTS / f"{name}.png", REPO / "docs" / "images" / f"report-{name}.png")


def test_renders_with_no_console_error_and_no_network_request(page, reports):
    for name in ("single", "vs"):
        page.requests.clear()
        _open(page, reports[name])
        for tab in page.query_selector_all("button[data-tab]"):
            tab.click()
        page.click("button[data-tab=cases]")
        page.click(".case-table .body .row")
        page.wait_for_selector("[data-testid=transcript]")
        assert page.problems == [], page.problems
        assert page.requests == [reports[name].as_uri()], page.requests  # the file itself, nothing else


def test_per_eval_rates_match_the_summary(page, reports):
    summary = orjson.loads((reports["b"] / "summary.json").read_bytes())
    _open(page, reports["single"])
    _screenshot(page, "overview")
    shown = {
        cell.get_attribute("data-eval"): (float(cell.get_attribute("data-value")), cell.inner_text())
        for cell in page.query_selector_all("[data-testid=rate][data-run='0']")
    }
    expected = {**{e: g["passRate"] for e, g in summary["evals"].items()}, "overall": summary["overall"]["passRate"]}
    assert set(shown) == set(expected) == {"orders", "faults", "plain", "overall"}
    for eval_id, rate in expected.items():
        assert shown[eval_id] == (rate, f"{rate * 100:.1f}%")
    assert page.query_selector_all("figure svg"), "the charts are drawn"
    # the score histogram has a bar for the failures' 0 and one for the passes' 1 (at the domain's end)
    bars = page.locator("figure", has_text="Score distribution").locator("g[aria-label=rect] rect")
    assert bars.count() == 2


def test_filters_narrow_the_case_table(page, reports):
    summary = orjson.loads((reports["b"] / "summary.json").read_bytes())
    _open(page, reports["single"])
    page.click("button[data-tab=cases]")
    count = page.locator("[data-testid=case-count]")
    assert count.get_attribute("data-count") == str(summary["overall"]["samples"]) == "8"
    page.select_option("[data-testid=outcome-filter]", "fail")
    assert count.get_attribute("data-count") == str(summary["overall"]["failed"])
    assert {r.get_attribute("data-case") for r in page.query_selector_all(".case-table .body .row")} == {
        "plain.one",
        "plain.four",
    }
    page.select_option("[data-testid=outcome-filter]", "")
    page.fill("[data-testid=search]", "SHIPPED")  # output text, any case
    assert count.get_attribute("data-count") == "2"
    page.fill("[data-testid=search]", "where is order b2")  # prompt text
    rows = page.query_selector_all(".case-table .body .row")
    assert [r.get_attribute("data-case") for r in rows] == ["orders.b2"]
    page.fill("[data-testid=search]", "")
    page.select_option("[data-testid=eval-filter]", "plain")
    assert count.get_attribute("data-count") == "4"
    page.click(".case-table .head [data-col=case]")  # sort by case ID
    assert [r.get_attribute("data-case") for r in page.query_selector_all(".case-table .body .row")] == [
        "plain.four",
        "plain.one",
        "plain.three",
        "plain.two",
    ]
    _screenshot(page, "cases")


def test_transcript_shows_the_tool_call_and_its_result(page, reports):
    _open(page, reports["single"])
    page.click("button[data-tab=cases]")
    page.click(".case-table .body .row[data-case='orders.a1']")
    transcript = page.locator("[data-testid=transcript]")
    assert transcript.locator("[data-testid=system]").inner_text().endswith("You are a support agent. Use the tools.")
    assert "[order-a1] Where is order A1?" in transcript.locator("[data-testid=prompt]").inner_text()
    call = transcript.locator("[data-testid=tool-call][data-tool=lookup_order]")
    assert '"orderId": "A1"' in call.inner_text()
    assert orjson.loads(call.locator("[data-testid=tool-result] pre").inner_text()) == {
        "orderId": "A1",
        "status": "shipped",
        "carrier": "DHL",
    }
    assert "Order A1 has shipped." in transcript.locator("[data-testid=output]").inner_text()
    assert transcript.locator("[data-testid=finish]").inner_text() == "stop"
    assert transcript.locator("[data-testid=usage]").inner_text() == "31 in · 12 out · 43 total"
    assert "contains 'shipped'" in transcript.locator("[data-testid=evaluator-message]").inner_text()
    _screenshot(page, "transcript")
    page.click("[data-testid=close]")
    page.click(".case-table .body .row[data-case='faults.explode']")
    error = page.locator("[data-testid=transcript] [data-testid=tool-call][data-tool=explode] [data-testid=tool-error]")
    assert "the order system is down" in error.inner_text()
    page.click("[data-testid=close]")
    page.click(".case-table .body .row[data-case='orders.calls']")
    assert page.locator("[data-testid=transcript] [data-testid=outcome]").inner_text() == "error"
    assert "provider" in page.locator("[data-testid=transcript] [data-testid=error]").inner_text()


def test_vs_view_lists_the_regression_first_and_opens_both_transcripts(page, reports):
    _open(page, reports["vs"])
    changes = page.query_selector_all("[data-testid=change]")
    # orders.b2 (fixed) comes before plain.one (regressed) in release order: regressions are listed first
    assert [(c.get_attribute("data-case"), c.get_attribute("data-change")) for c in changes] == [
        ("plain.one", "regressed"),
        ("orders.b2", "fixed"),
    ]
    overall = page.locator("[data-testid=differences] tr[data-eval=overall] [data-testid=difference]")
    comparison = orjson.loads(
        trunchbull("compare", reports["a"], reports["b"], "--json", cache=REPO / ".cache" / "unused").stdout
    )
    assert float(overall.get_attribute("data-value")) == comparison["overall"]["difference"]
    _screenshot(page, "compare")
    changes[0].click()
    transcripts = page.query_selector_all("[data-testid=panel] [data-testid=transcript]")
    assert [(t.get_attribute("data-run"), t.get_attribute("data-case")) for t in transcripts] == [
        ("1", "plain.one"),
        ("0", "plain.one"),
    ]  # A (the baseline) left, B right
    assert [t.query_selector("[data-testid=outcome]").inner_text() for t in transcripts] == ["pass", "fail"]
    _screenshot(page, "compare-transcripts")
    assert "regressed (1):" in reports["vsText"] and "plain.one" in reports["vsText"]
    assert page.problems == []


def test_a_large_run_keeps_only_the_visible_rows_in_the_page(page, release_of, tb, tmp_path):
    result = tb("run", release_of("pairs"), "--model", "echo", "-o", tmp_path / "run", "--repeat", "300", "--no-cache")
    assert result.code == 0, result.stderr
    assert tb("report", tmp_path / "run", "-o", tmp_path / "r.html").code == 0
    _open(page, tmp_path / "r.html")
    page.click("button[data-tab=cases]")
    assert page.locator("[data-testid=case-count]").get_attribute("data-count") == "2100"
    assert len(page.query_selector_all(".case-table .body .row")) < 60
    page.eval_on_selector(".case-table .body", "el => { el.scrollTop = el.scrollHeight }")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.case-table .body .row')].some(r => r.dataset.case === 'beta.3')"
    )
    assert page.problems == []


def test_without_its_release_the_report_says_why_prompts_are_missing(release_of, tb, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(release_of("pairs"), release)
    assert tb("run", release, "--model", "echo", "-o", tmp_path / "run", "--no-cache").code == 0
    shutil.rmtree(release)
    result = tb("report", tmp_path / "run", "-o", tmp_path / "r.html")
    assert result.code == 0, result.stderr
    assert f"the release {release} no longer exists" in result.stderr
    html = (tmp_path / "r.html").read_text()
    assert "no longer exists, so prompts and system prompts are not shown" in html
    assert "Alpha one?" in html  # echo's outputs (the prompts) are in the records
    assert "Answer yes or no." not in html  # the system prompt was only in the release
    given = tb("report", tmp_path / "run", "-o", tmp_path / "r2.html", "--release", release_of("pairs"))
    assert given.code == 0 and "Answer yes or no." in (tmp_path / "r2.html").read_text()


def test_no_api_key_in_a_report(release_of, tb, tmp_path):
    key = "sk-test-0123456789abcdef"
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(orjson.dumps({"caseId": "alpha.1", "output": f"my key is {key}"}) + b"\n")
    tb("grade", release_of("pairs"), answers, "--run-dir", tmp_path / "run")
    result = tb("report", tmp_path / "run", "-o", tmp_path / "r.html", env={"OPENAI_API_KEY": key})
    assert result.code == 0, result.stderr
    html = (tmp_path / "r.html").read_text()
    assert key not in html and "my key is [redacted]" in html


def test_base_urls_are_shown_without_credentials(release_of, tb, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(b'{"caseId": "alpha.1", "output": "yes"}\n')
    tb("grade", release_of("pairs"), answers, "--run-dir", tmp_path / "run")
    meta = orjson.loads((tmp_path / "run" / "run.json").read_bytes())
    meta["baseUrl"] = "https://user:hunter2-password@llm.example:8443/v1?api_key=q-secret#frag"
    (tmp_path / "run" / "run.json").write_bytes(orjson.dumps(meta))
    assert tb("report", tmp_path / "run", "-o", tmp_path / "r.html").code == 0
    html = (tmp_path / "r.html").read_text()
    assert "https://llm.example:8443/v1" in html
    assert "hunter2-password" not in html and "q-secret" not in html


def test_transcript_panel_walks_the_table_and_leaves_it_usable(page, reports):
    _open(page, reports["single"])
    page.click("button[data-tab=cases]")
    rows = [r.get_attribute("data-case") for r in page.query_selector_all(".case-table .body .row")]
    # the evaluator's message has its own column
    message = page.locator(".case-table .body .row[data-case='orders.a1'] .cell.message").inner_text()
    assert "contains 'shipped'" in message
    page.click(f".case-table .body .row[data-case='{rows[0]}']")
    transcript = page.locator("[data-testid=panel] [data-testid=transcript]")
    assert transcript.get_attribute("data-case") == rows[0]
    assert page.locator("[data-testid=position]").inner_text() == f"1 of {len(rows)}"
    page.keyboard.press("ArrowDown")  # the next row of the table, in its order
    assert transcript.get_attribute("data-case") == rows[1]
    page.click("[data-testid=next]")
    assert transcript.get_attribute("data-case") == rows[2]
    assert page.locator(".case-table .body .row.selected").get_attribute("data-case") == rows[2]
    page.keyboard.press("k")
    assert transcript.get_attribute("data-case") == rows[1]
    # the panel does not cover the table: another row opens directly, without closing first
    page.click(f".case-table .body .row[data-case='{rows[-1]}']")
    assert transcript.get_attribute("data-case") == rows[-1]
    page.keyboard.press("ArrowDown")  # the last row: nothing after it
    assert transcript.get_attribute("data-case") == rows[-1]
    page.keyboard.press("Escape")
    assert page.locator("[data-testid=panel]").is_hidden()
    # a model without a price: its cost is unknown, not $0
    page.click("button[data-tab=overview]")
    assert page.locator("[data-testid=cost]").first.inner_text() == "unknown"
    assert page.problems == []


def _open_at(page, path, fragment: str) -> None:
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector("body[data-ready]", timeout=15000)


def test_a_link_opens_a_tab_a_case_or_a_sample(page, reports):
    _open_at(page, reports["single"], "#tab=cases")
    assert page.locator("[data-testid=tab-cases]").is_visible() and not page.locator("[data-testid=panel]").is_visible()
    assert page.locator("button[data-tab=cases]").get_attribute("class") == "tab-button active"

    _open_at(page, reports["single"], "#case=orders.a1")  # a case: its first sample, in the case table
    transcript = page.locator("[data-testid=panel] [data-testid=transcript]")
    assert transcript.get_attribute("data-case") == "orders.a1"
    assert page.locator(".case-table .body .row.selected").get_attribute("data-case") == "orders.a1"
    link = page.locator("[data-testid=permalink]").get_attribute("href")
    assert link == "#case=orders.a1&repeat=0"

    # what is shown is in the address bar, so copying it gives the link
    page.click("[data-testid=next]")
    following = transcript.get_attribute("data-case")
    assert following != "orders.a1" and page.evaluate("location.hash") == f"#case={following}&repeat=0"
    page.click("[data-testid=close]")
    assert page.evaluate("location.hash") == "#tab=cases"
    page.click("button[data-tab=overview]")
    assert page.evaluate("location.hash") == "#tab=overview"

    # a link followed in an open page
    page.evaluate("location.hash = '#case=plain.one&repeat=0'")
    page.wait_for_function(
        "document.querySelector('[data-testid=panel] [data-testid=transcript]')?.dataset.case === 'plain.one'"
    )
    assert page.locator("[data-testid=tab-cases]").is_visible()

    # with --vs, a case opens both runs' transcripts
    _open_at(page, reports["vs"], "#case=plain.one")
    transcripts = page.query_selector_all("[data-testid=panel] [data-testid=transcript]")
    assert [t.get_attribute("data-case") for t in transcripts] == ["plain.one", "plain.one"]
    assert page.locator("[data-testid=tab-compare]").is_visible()
    assert page.locator("[data-testid=position]").inner_text() == "1 of 2"  # it walks the changed cases

    # a fragment that names nothing in the report shows the first tab
    _open_at(page, reports["single"], "#case=no.such.case")
    assert (
        page.locator("[data-testid=tab-overview]").is_visible() and not page.locator("[data-testid=panel]").is_visible()
    )
    assert page.problems == []
