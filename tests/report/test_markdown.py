"""Markdown for pull-request comments and CI job summaries, from the real
CLI on real MMLU runs, read back structurally: the verdict is the first
line, the regressions are listed (in the order of `compare --json`), every
table has as many cells per row as its header, IDs are code spans."""

from __future__ import annotations

import re

from tests.report.mmlu_runs import summary


def tables(text: str) -> list[list[list[str]]]:
    """Each Markdown table: its rows (header, delimiter, body) split into cells, escaped pipes kept."""
    out: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def test_compare_markdown_puts_the_verdict_first_and_lists_the_regressions(mmlu, tb):
    a, b = mmlu.runs["best"], mmlu.runs["half"]
    md = tb("compare", a, b, "--markdown", "--fail-on-regression")
    assert md.code == 1  # the gate is the same as without --markdown
    lines = md.stdout.splitlines()
    assert lines[0].startswith("**❌ Verdict: B is significantly worse than A")
    assert "B − A −0.500 (95% CI −" in lines[0] and "over 114 shared cases; 57 regressed, 0 fixed." in lines[0]
    listed = lines.index("**Regressed (57)**, largest drop first:")
    items = [line for line in lines[listed + 2 :] if line.startswith("- ")][:50]
    regressed = tb("compare", a, b, "--json").json["regressedCases"]
    assert [re.match(r"- `([^`]+)`", item).group(1) for item in items] == regressed[:50]  # type: ignore[union-attr]
    assert "- … and 7 more (`trunchbull compare --json` lists them all)" in lines
    found = tables(md.stdout)
    runs, evals = found[0], found[1]
    assert runs[0][:2] == ["", "model"] and [row[0] for row in runs[2:]] == ["A (baseline)", "B"]
    assert evals[0][0] == "eval" and [row[0] for row in evals[2:]] == ["`mmlu`", "**overall**"]
    assert all(len(row) == len(table[0]) for table in found for row in table)


def test_compare_markdown_with_a_breakdown_folds_its_57_rows(mmlu, tb):
    md = tb("compare", mmlu.runs["best"], mmlu.runs["close"], "--markdown", "--by", "data.subject")
    assert md.code == 0, md.stderr
    assert md.stdout.startswith("**❌ Verdict: B is significantly worse than A")
    assert "<summary>By data.subject: 57 groups</summary>" in md.stdout
    by_subject = next(t for t in tables(md.stdout) if t[0][0] == "data.subject")
    assert len(by_subject) == 2 + 57 + 1 and by_subject[-1][0] == "**overall (micro)**"
    assert "Macro average over 57 groups (each alike): A 1.000" in md.stdout


def test_no_regression_says_so(mmlu, tb):
    md = tb("compare", mmlu.runs["half"], mmlu.runs["best"], "--markdown")
    assert md.code == 0, md.stderr
    assert md.stdout.startswith("**✅ Verdict: B is significantly better than A")
    assert "\nNo case regressed.\n" in md.stdout and "<summary>Fixed (57)</summary>" in md.stdout


def test_report_markdown_summary_and_comparison(mmlu, tb, tmp_path):
    run = mmlu.runs["half"]
    md = tb("report", run, "--markdown", "-o", tmp_path / "r.html")
    assert md.code == 0, md.stderr
    first = md.stdout.splitlines()[0]
    overall = summary(run)["overall"]
    assert first.startswith("**📋 MMLU 1.0.0 · replay:") and f"pass rate {overall['passRate'] * 100:.1f}%" in first
    assert "over 114 cases" in first
    (evals,) = tables(md.stdout)
    assert [row[0] for row in evals[2:]] == ["`mmlu`", "**overall**"]
    assert md.stderr.strip().startswith("report: ") and (tmp_path / "r.html").is_file()  # stdout is Markdown only
    vs = tb("report", run, "--vs", mmlu.runs["best"], "--markdown", "--by", "data.subject", "-o", tmp_path / "v.html")
    assert vs.code == 0, vs.stderr
    assert vs.stdout.startswith("**❌ Verdict: B is significantly worse than A")  # the comparison's verdict first
    assert vs.stdout.count("<summary>By data.subject: 57 groups</summary>") == 2  # the comparison's and the run's


def test_markdown_code_spans_hold_any_text():
    from trunchbull.report.markdown import code

    assert code("a|b") == "`a\\|b`"  # a pipe would split a table cell
    assert code("x`y") == "``x`y``" and code("`x") == "`` `x ``"
    assert code("line\nbreak") == "`line break`"
