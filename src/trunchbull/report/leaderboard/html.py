"""The leaderboard as one self-contained HTML page, in the report's style
(its stylesheet, report/html/web/style.css, inline) and under the same
Content-Security-Policy: no script, no request. Every value is escaped; each
cell draws its interval as a small inline SVG whisker on [0, 1]."""

from __future__ import annotations

import html

from trunchbull import __version__
from trunchbull.report.html.bundle import WEB_DIR
from trunchbull.report.html.page import CSP

EXTRA_CSS = """
table.board td.cell { min-width: 150px; }
table.board tr.below td { color: var(--muted); }
.whisker { display: block; margin-top: 2px; }
.mark { font-size: 12px; font-weight: 600; padding: 0 7px; border-radius: 9px; }
.mark.best { background: #dcfce7; color: var(--pass); }
.mark.indistinguishable { background: #e0f2fe; color: #0369a1; }
.mark.below { background: #fee2e2; color: var(--fail); }
main p { max-width: 960px; }
"""
MARK_TEXT = {"best": "best", "indistinguishable": "≈ best", "below": "below the best"}
WIDTH, HEIGHT = 120, 10


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _whisker(cell: dict) -> str:
    mean, ci = cell["meanScore"], cell["meanScoreCI"]
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


def _cell(cell: dict, testid: str, model: str, group: str) -> str:
    if cell["meanScore"] is None:
        return '<td class="n cell">–</td>'
    ci = cell["meanScoreCI"]
    interval = f' <span class="muted">[{ci[0]:.3f}, {ci[1]:.3f}]</span>' if ci else ""
    return (
        f'<td class="n cell" data-testid="{testid}" data-model="{_e(model)}" data-group="{_e(group)}" '
        f'data-value="{cell["meanScore"]}">{cell["meanScore"]:.3f}{interval}{_whisker(cell)}</td>'
    )


def render_board_html(board: dict, title: str, notes: list[str]) -> bytes:
    css = ((WEB_DIR / "style.css").read_text() + EXTRA_CSS).replace("</style", "<\\/style")
    evals = board["evals"]
    head = "".join(f"<th>{_e(h)}</th>" for h in ("#", "model", "", "overall", *evals, "vs best", "tokens", "cost"))
    rows = []
    for m in board["models"]:
        vs = (m["vsBest"] or {}).get("overall") or {}
        against = (
            f'{vs["difference"]:+.3f} <span class="muted">[{vs["ci"][0]:+.3f}, {vs["ci"][1]:+.3f}], '
            f'Holm p = {vs["holmP"]:.3g}</span>'
            if vs.get("difference") is not None
            else ""
        )
        cost = "unknown" if m["cost"] is None else f"${m['cost']:,.4f}"
        rows.append(
            f'<tr class="{_e(m["verdict"] or "")}" data-testid="model-row" data-model="{_e(m["model"])}" '
            f'data-verdict="{_e(m["verdict"] or "")}">'
            f'<td class="n">{m["rank"]}</td><td><code>{_e(m["model"])}</code><br>'
            f'<span class="muted">{_e(m["runDir"])}</span></td>'
            f'<td><span class="mark {_e(m["verdict"] or "")}">{_e(MARK_TEXT.get(m["verdict"], ""))}</span></td>'
            + _cell(m["overall"], "overall", m["model"], "overall")
            + "".join(_cell(m["evals"][e], "eval-cell", m["model"], e) for e in evals)
            + f'<td class="n">{against}</td><td class="n">{m["tokens"]["total"]:,}</td>'
            f'<td class="n" data-testid="cost">{_e(cost)}</td></tr>'
        )
    note_html = "".join(f'<p class="warning" data-testid="note">{_e(n)}</p>' for n in notes)
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
<table class="summary board" data-testid="board"><thead><tr>{head}</tr></thead><tbody>
{"".join(rows)}
</tbody></table>
<p class="muted">Each cell is the mean score over the cases every run has, with its 95% interval (Wilson score
interval on the clustered effective sample size). Each model is compared with the best, paired over the cases
both graded (Newcombe's square-and-add interval); the p-values of the comparisons are corrected with Holm's
method. <em>≈ best</em>: not significantly different from the best at 5% after the correction; <em>below the
best</em>: significantly below it. Cost and tokens are summed over the shared cases' samples; a cost is
unknown when some sample's price is.</p>
</main>
<footer class="muted">Generated by trunchbull {_e(__version__)}.</footer>
</body>
</html>
"""
    return page.encode()
