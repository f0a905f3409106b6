"""The terminal rendering of a run's breakdown (`report --by FIELD`): a row
per group with its interval, then the macro average (every group weighs
the same) and the overall, micro, figure (every case weighs the same)."""

from __future__ import annotations

from trunchbull.common.text_table import table_lines
from trunchbull.grading.summary_text import cost_text


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def pct_interval(ci: list[float] | None) -> str:
    return "" if not ci else f"[{ci[0] * 100:.1f}, {ci[1] * 100:.1f}]"


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_breakdown(field: str, breakdown: dict) -> str:
    header = (field, "cases", "samples", "pass", "fail", "error", "pass rate", "95% CI", "mean score", "tokens", "cost")
    cells = [header]
    for value, g in [*breakdown["groups"].items(), ("overall (micro)", breakdown["overall"])]:
        cells.append(
            (
                value,
                f"{g['cases']:,}",
                f"{g['samples']:,}",
                f"{g['passed']:,}",
                f"{g['failed']:,}",
                f"{g['errors']:,}",
                pct(g["passRate"]),
                pct_interval(g["passRateCI"]),
                number(g["meanScore"]),
                f"{g['tokens']['total']:,}",
                cost_text(g["cost"]),
            )
        )
    macro = breakdown["macro"]
    macro_row = (f"macro ({macro['groups']:,} groups)", "", "", "", "", "", pct(macro["passRate"]), "")
    rows = table_lines([*cells[:-1], (*macro_row, number(macro["meanScore"]), "", ""), cells[-1]])
    rows.insert(len(rows) - 3, rows[1])  # a rule above the macro row too
    return "\n".join(
        [
            f"by {field}: {len(breakdown['groups']):,} group(s); macro: the mean of the groups' figures, "
            "each group alike; micro (overall): every case alike",
            *rows,
        ]
    )
