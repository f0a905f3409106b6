"""The leaderboard as one self-contained HTML page, in the report's style
(its stylesheet, report/html/web/style.css, inline) and under the same
Content-Security-Policy: no script, no request. Every value is escaped.

Two tables, so that it reads at 1,280 px with any number of columns: the
ranking (a row per model: overall and macro figures, the difference from
the best with the interval at the level Holm tested it at, tokens and cost
in total and per sample), which always fits; and the columns (each eval,
or each group of --by), in a box that scrolls sideways with the model
column fixed. Each cell draws its interval as a small inline SVG whisker
on [0, 1]."""

from __future__ import annotations

import html

from trunchbull import __version__
from trunchbull.report.html.bundle import WEB_DIR
from trunchbull.report.html.page import CSP
from trunchbull.report.leaderboard.board import columns_of

EXTRA_CSS = """
main { max-width: 100%; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: 4px; }
.scroll table.summary { margin: 0; }
table.board td.cell { min-width: 132px; }
table.board tr.below td { color: var(--muted); }
table.board td.model { white-space: normal; min-width: 180px; max-width: 260px; overflow-wrap: anywhere; }
table.by-column th:first-child, table.by-column td:first-child {
  position: sticky; left: 0; z-index: 1; background: #fff; box-shadow: 1px 0 0 var(--line);
}
table.by-column th:first-child { z-index: 2; }
table.by-column td.model { max-width: 220px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.whisker { display: block; margin-top: 2px; }
.mark { font-size: 12px; font-weight: 600; padding: 0 7px; border-radius: 9px; white-space: nowrap; }
.mark.best { background: #dcfce7; color: var(--pass); }
.mark.indistinguishable { background: #e0f2fe; color: #0369a1; }
.mark.below { background: #fee2e2; color: var(--fail); }
.mark.above { background: #fef3c7; color: var(--error); }
.small { font-size: 12px; }
main p { max-width: 960px; }
"""
MARK_TEXT = {"best": "best", "indistinguishable": "≈ best", "below": "below the best", "above": "above the best"}
COLUMN_MARK = {"below": "▼ below", "above": "▲ above"}
WIDTH, HEIGHT = 110, 10


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _whisker(mean: float | None, ci: list[float] | None) -> str:
    if mean is None or not ci:
        return ""

    def x(v: float) -> float:
        return round(v * WIDTH, 1)

    return (
        f'<svg class="whisker" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{mean:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]">'
        f'<line x1="0" x2="{WIDTH}" y1="5" y2="5" stroke="#e5e7eb"/>'
        f'<line x1="{x(ci[0])}" x2="{x(ci[1])}" y1="5" y2="5" stroke="#2563eb" stroke-width="2"/>'
        f'<circle cx="{x(mean)}" cy="5" r="3" fill="#2563eb"/></svg>'
    )


def _cell(cell: dict, testid: str, model: str, group: str, versus: dict | None = None) -> str:
    if cell["meanScore"] is None:
        return f'<td class="n cell" data-testid="{testid}" data-model="{_e(model)}" data-group="{_e(group)}">–</td>'
    ci = cell["meanScoreCI"]
    interval = f' <span class="muted small">[{ci[0]:.3f}, {ci[1]:.3f}]</span>' if ci else ""
    mark = COLUMN_MARK.get((versus or {}).get("verdict") or "", "")
    marked = f' <span class="mark {_e(versus["verdict"])}">{mark}</span>' if mark and versus else ""
    return (
        f'<td class="n cell" data-testid="{testid}" data-model="{_e(model)}" data-group="{_e(group)}" '
        f'data-value="{cell["meanScore"]}">{cell["meanScore"]:.3f}{interval}{marked}'
        f'{_whisker(cell["meanScore"], ci)}</td>'
    )


def _versus(model: dict) -> str:
    vs = (model["vsBest"] or {}).get("overall") or {}
    if vs.get("difference") is None:
        return '<td class="n" data-testid="vs-best"></td>'
    ci, ci95 = vs["ci"], vs["ci95"]
    holm_p = vs["holmP"]
    p_text = f"= {holm_p:.3g}" if holm_p >= 1e-6 else "&lt; 1e-6"
    return (
        f'<td class="n" data-testid="vs-best" data-low="{ci[0]}" data-high="{ci[1]}" '
        f'data-confidence="{vs["confidence"]}" data-holm-p="{holm_p}">{vs["difference"]:+.3f} '
        f'[{ci[0]:+.3f}, {ci[1]:+.3f}]<br><span class="muted small">{vs["confidence"] * 100:.2f}% interval, Holm '
        f'p {p_text}</span><br><span class="muted small">95% uncorrected: [{ci95[0]:+.3f}, {ci95[1]:+.3f}]</span></td>'
    )


def _money(value: float | None, digits: int) -> str:
    return "unknown" if value is None else f"${value:,.{digits}f}"


def _ranking(board: dict, macro: bool) -> str:
    heads = ["#", "model", "", "overall (micro)", *(["macro"] if macro else []), "vs best"]
    heads += ["tokens / sample", "tokens", "cost / sample", "cost"]
    rows = []
    for m in board["models"]:
        verdict = m["verdict"] or ""
        per = m["perSample"]
        tokens = "–" if per["tokens"] is None else f"{per['tokens']['total']:,.1f}"
        rows.append(
            f'<tr class="{_e(verdict)}" data-testid="model-row" data-model="{_e(m["model"])}" '
            f'data-verdict="{_e(verdict)}"><td class="n">{m["rank"]}</td>'
            f'<td class="model"><code>{_e(m["model"])}</code><br><span class="muted small">{_e(m["runDir"])}</span></td>'
            f'<td><span class="mark {_e(verdict)}">{_e(MARK_TEXT.get(verdict, ""))}</span></td>'
            + _cell(m["overall"], "overall", m["model"], "overall")
            + (f'<td class="n" data-testid="macro">{_e(_num(m["macro"]["meanScore"]))}</td>' if macro else "")
            + _versus(m)
            + f'<td class="n" data-testid="tokens-per-sample">{tokens}</td>'
            f'<td class="n" data-testid="tokens">{m["tokens"]["total"]:,}</td>'
            f'<td class="n" data-testid="cost-per-sample">{_e(_money(per["cost"], 6))}</td>'
            f'<td class="n" data-testid="cost">{_e(_money(m["cost"], 4))}</td></tr>'
        )
    head = "".join(f"<th>{_e(h)}</th>" for h in heads)
    return (
        f'<div class="scroll"><table class="summary board ranking" data-testid="board"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div>'
    )


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _columns(board: dict) -> str:
    key, columns = columns_of(board)
    head = '<th>model</th>' + "".join(
        f'<th data-testid="column-head" data-group="{_e(c)}">{_e(c)}</th>' for c in columns
    )
    rows = []
    for m in board["models"]:
        versus = ((m["vsBest"] or {}).get(key)) or {}
        cells = "".join(_cell(m[key][c], "column-cell", m["model"], c, versus.get(c)) for c in columns)
        rows.append(
            f'<tr class="{_e(m["verdict"] or "")}" data-testid="column-row" data-model="{_e(m["model"])}">'
            f'<td class="model" title="{_e(m["model"])}"><code>{_e(m["model"])}</code></td>{cells}</tr>'
        )
    return (
        f'<div class="scroll" data-testid="columns-scroll"><table class="summary board by-column" '
        f'data-testid="columns"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
    )


def render_board_html(board: dict, title: str, notes: list[str]) -> bytes:
    css = ((WEB_DIR / "style.css").read_text() + EXTRA_CSS).replace("</style", "<\\/style")
    _, columns = columns_of(board)
    by = board["by"]
    macro = len(columns) > 1
    note_html = "".join(f'<p class="warning" data-testid="note">{_e(n)}</p>' for n in notes)
    columns_html = ""
    if macro:
        columns_html = (
            f"<h2>Mean score by {_e(by)}</h2><p class=\"muted\">{len(columns):,} columns; the model column stays "
            "in place while the table scrolls sideways. ▼: significantly below the best in that column (Holm-"
            "corrected over the models of the column).</p>" + _columns(board)
        )
    page = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title>
<style>{css}</style>
</head>
<body data-ready="1">
<header class="page-head"><h1>{_e(title)}</h1>
<div class="run-line muted">{len(board["models"])} runs over {board["sharedCases"]:,} shared cases;
ranked by mean score, with 95% intervals.</div></header>
<main>
{note_html}
{_ranking(board, macro)}
<p class="muted">Each score is the mean over the cases every run has, with its 95% interval (Wilson score
interval on the clustered effective sample size); <em>macro</em> weighs every {_e(by)} alike, <em>overall</em>
every case. Each model is compared with the best, paired over the cases both graded; the comparisons of a
column are corrected with Holm's method, and the interval shown is the one at the level Holm tested the
comparison at, so it excludes 0 exactly when the model is <em>below the best</em> (<em>≈ best</em>: not
significantly different after the correction); the 95% interval beside it is uncorrected.
<span data-testid="differs">Why <code>compare</code> may disagree: it tests one planned comparison at 95%, while
the leaderboard makes one per model below the best and corrects them for their number, so a difference
<code>compare</code> calls significant may be indistinguishable here.</span> Tokens and cost are summed over the
shared cases' samples, and per sample (with <code>--repeat</code>, the totals grow with the repeats, the
per-sample figures do not); a cost is unknown when some sample's price is.</p>
{columns_html}
</main>
<footer class="muted">Generated by trunchbull {_e(__version__)}.</footer>
</body>
</html>
"""
    return page.encode()
