"""Markdown renderings for where teams read results: a pull-request comment
or a CI job summary ($GITHUB_STEP_SUMMARY). GitHub-flavoured Markdown; the
verdict comes first, then the tables, then the regressed cases (listed),
the fixed ones (folded). Every ID, label and model is a code span, so no
text of a run is read as Markdown or HTML."""

from __future__ import annotations

import html
import re

from trunchbull.grading.summary_text import cost_text
from trunchbull.report.compare.text import verdict

LISTED = 50  # cases listed per kind; `compare --json` has all of them
VERDICT_MARK = {"worse": "❌", "better": "✅", "same": "➖", "none": "➖"}


def code(text: object) -> str:
    """A code span holding `text` on one line, safe inside a table cell."""
    value = re.sub(r"[\r\n]+", " ", str(text)).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _groups(n: int) -> str:
    return f"{n:,} group" + ("" if n == 1 else "s")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _pct_ci(ci: list[float] | None) -> str:
    return "" if not ci else f"{ci[0] * 100:.1f} – {ci[1] * 100:.1f}%"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}".replace("-", "−")


def _signed_ci(ci: list[float] | None) -> str:
    return "" if not ci else f"{_signed(ci[0])} to {_signed(ci[1])}"


def _table(header: list[str], rows: list[list[str]], numeric_from: int = 1) -> list[str]:
    align = ["---" if i < numeric_from else "---:" for i in range(len(header))]
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(align) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _folded(title: str, lines: list[str]) -> list[str]:
    """`lines` folded under `title` (plain text: a summary element holds HTML, not Markdown)."""
    return ["<details>", f"<summary>{html.escape(title)}</summary>", "", *lines, "", "</details>"]


def _title(release: dict, model: str) -> str:
    name = " ".join(str(p) for p in (release.get("title"), release.get("version")) if p) or "run"
    return f"{name} · {model}"


# The summary of one run


def _summary_rows(groups: list[tuple[str, dict]]) -> list[list[str]]:
    return [
        [
            code(name) if i < len(groups) - 1 else f"**{name}**",
            f"{g['cases']:,}",
            f"{g['samples']:,}",
            f"{g['passed']:,}",
            f"{g['failed']:,}",
            f"{g['errors']:,}",
            _pct(g["passRate"]),
            _pct_ci(g["passRateCI"]),
            _num(g["meanScore"]),
            f"{g['tokens']['total']:,}",
            cost_text(g.get("cost")),
        ]
        for i, (name, g) in enumerate(groups)
    ]


SUMMARY_HEADER = ["cases", "samples", "pass", "fail", "error", "pass rate", "95% CI", "mean score", "tokens", "cost"]


def summary_markdown(summary: dict, model: str, breakdown: dict | None = None) -> str:
    """A run's summary: the headline (pass rate, interval, errors) first,
    then a row per eval, and with a breakdown a row per group (folded)."""
    o = summary["overall"]
    mark = "⚠️" if o["errors"] else "📋"
    headline = (
        f"**{mark} {_title(summary['release'], model)}: pass rate {_pct(o['passRate'])}"
        + (f" (95% CI {_pct_ci(o['passRateCI'])})" if o["passRateCI"] else "")
        + f" over {o['cases']:,} cases, mean score {_num(o['meanScore'])}**"
    )
    out = [headline, ""]
    if o["errors"]:
        out += [f"{o['errors']:,} of {o['samples']:,} samples ended in error (infrastructure failures).", ""]
    rows = [*summary["evals"].items(), ("overall", o)]
    out += _table(["eval", *SUMMARY_HEADER], _summary_rows(rows))
    if breakdown is not None:
        macro = breakdown["macro"]
        groups = [*breakdown["groups"].items(), ("overall (micro)", breakdown["overall"])]
        lines = [
            *_table([breakdown["by"], *SUMMARY_HEADER], _summary_rows(groups)),
            "",
            f"Macro average over {_groups(macro['groups'])} (each alike): pass rate {_pct(macro['passRate'])}, "
            f"mean score {_num(macro['meanScore'])}.",
        ]
        out += ["", *_folded(f"By {breakdown['by']}: {_groups(len(breakdown['groups']))}", lines)]
    return "\n".join(out) + "\n"


# A comparison of two runs


def _difference_rows(groups: list[tuple[str, dict]]) -> list[list[str]]:
    return [
        [
            code(name) if i < len(groups) - 1 else f"**{name}**",
            f"{g['n']:,}",
            _num(g["meanA"]),
            _num(g["meanB"]),
            _signed(g["difference"]),
            _signed_ci(g["ci"]),
            f"{g['regressed']:,}",
            f"{g['fixed']:,}",
            f"{g['excluded']:,}",
        ]
        for i, (name, g) in enumerate(groups)
    ]


DIFFERENCE_HEADER = ["cases", "A mean", "B mean", "B − A", "95% CI", "regressed", "fixed", "left out"]


def _case_lines(items: list[dict]) -> list[str]:
    out = [
        f"- {code(c['caseId'])} ({code(c['evalId'])}): pass {_pct(c['a']['passRate'])} → "
        f"{_pct(c['b']['passRate'])}, score {_num(c['a']['score'])} → {_num(c['b']['score'])}"
        for c in items[:LISTED]
    ]
    if len(items) > LISTED:
        out.append(f"- … and {len(items) - LISTED:,} more (`trunchbull compare --json` lists them all)")
    return out


def _run_row(label: str, run: dict) -> list[str]:
    o = run["overall"]
    return [
        label,
        code(run["model"]),
        f"{o['samples']:,}",
        _pct(o["passRate"]) + (f" ({_pct_ci(o['passRateCI'])})" if o["passRateCI"] else ""),
        _num(o["meanScore"]),
        f"{o['tokens']['total']:,}",
        cost_text(o["cost"]),
        f"{o['errors']:,}",
    ]


def comparison_markdown(comparison: dict) -> str:
    """The verdict first (with the overall difference and its interval),
    the regressions listed, then the runs, the differences per eval (and
    per group with a breakdown), and the fixes (folded)."""
    overall = comparison["overall"]
    kind, sentence = verdict(overall)
    line = f"**{VERDICT_MARK[kind]} Verdict: {sentence}**"
    if overall["difference"] is not None:
        line += (
            f" — B − A {_signed(overall['difference'])} (95% CI {_signed_ci(overall['ci'])}) over "
            f"{overall['n']:,} shared cases; {overall['regressed']:,} regressed, {overall['fixed']:,} fixed."
        )
    out = [line, ""]
    changed = comparison["changedCases"]
    regressed = [c for c in changed if c["change"] == "regressed"]
    fixed = [c for c in changed if c["change"] == "fixed"]
    if regressed:
        out += [f"**Regressed ({len(regressed):,})**, largest drop first:", "", *_case_lines(regressed), ""]
    else:
        out += ["No case regressed.", ""]
    out += _table(
        ["", "model", "samples", "pass rate (95% CI)", "mean score", "tokens", "cost", "errors"],
        [_run_row("A (baseline)", comparison["a"]), _run_row("B", comparison["b"])],
        numeric_from=2,
    )
    rows = [*comparison["evals"].items(), ("overall", overall)]
    out += ["", *_table(["eval", *DIFFERENCE_HEADER], _difference_rows(rows))]
    if "groups" in comparison:
        macro = comparison["macro"]
        groups = [*comparison["groups"].items(), ("overall (micro)", overall)]
        lines = [
            *_table([comparison["by"], *DIFFERENCE_HEADER], _difference_rows(groups)),
            "",
            f"Macro average over {_groups(macro['groups'])} (each alike): A {_num(macro['meanA'])}, "
            f"B {_num(macro['meanB'])}, B − A {_signed(macro['difference'])}. Each group's interval is its own "
            "(not corrected for their number); the verdict is the overall one.",
        ]
        out += ["", *_folded(f"By {comparison['by']}: {_groups(len(comparison['groups']))}", lines)]
    if fixed:
        out += ["", *_folded(f"Fixed ({len(fixed):,})", _case_lines(fixed))]
    for title, ids in (
        ("Added (only in B)", comparison["addedCases"]),
        ("Removed (only in A)", comparison["removedCases"]),
    ):
        if ids:
            shown = ", ".join(code(i) for i in ids[:LISTED]) + (" …" if len(ids) > LISTED else "")
            out += ["", *_folded(f"{title} ({len(ids):,})", [shown])]
    return "\n".join(out) + "\n"
