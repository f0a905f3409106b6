"""The terminal and CSV renderings of a leaderboard (board.py): a row per
model with its overall figures, then a row per column (eval, or group of
--by) with each model's mean score."""

from __future__ import annotations

import csv
import io

from trunchbull.common.text_table import table_lines
from trunchbull.report.leaderboard.board import columns_of

MARKS = {"best": "best", "indistinguishable": "≈ best", "below": "below", "above": "above", None: "-"}
COLUMN_MARKS = {"below": " ▼", "above": " ▲"}  # against the best in that column


def _score(cell: dict) -> str:
    if cell["meanScore"] is None:
        return "-"
    ci = cell["meanScoreCI"]
    return f"{cell['meanScore']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _short(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cost(value: float | None, digits: int = 4) -> str:
    return "unknown" if value is None else f"${value:,.{digits}f}"


def _p(value: float) -> str:
    return "p<1e-6" if value < 1e-6 else f"p={value:.3g}"


def _difference(model: dict) -> str:
    vs = model["vsBest"]
    if not vs or vs["overall"]["difference"] is None:
        return ""
    o = vs["overall"]
    return f"{o['difference']:+.3f} [{o['ci'][0]:+.3f}, {o['ci'][1]:+.3f}] at {o['confidence']:.2%}, {_p(o['holmP'])}"


def _per_sample_tokens(model: dict) -> str:
    tokens = model["perSample"]["tokens"]
    return "-" if tokens is None else f"{tokens['total']:,.1f}"


def _summary_lines(board: dict) -> list[str]:
    _, columns = columns_of(board)
    macro = len(columns) > 1
    header = (
        "model",
        "rank",
        "vs best",
        "mean score [95% CI]",
        *(("macro",) if macro else ()),
        "- best [CI at Holm's level], Holm p",
        "tokens/sample",
        "tokens",
        "cost/sample",
        "cost",
    )
    cells = [header]
    for m in board["models"]:
        cells.append(
            (
                m["model"],
                str(m["rank"]),
                MARKS[m["verdict"]],
                _score(m["overall"]),
                *((_short(m["macro"]["meanScore"]),) if macro else ()),
                _difference(m),
                _per_sample_tokens(m),
                f"{m['tokens']['total']:,}",
                _cost(m["perSample"]["cost"], 6),
                _cost(m["cost"]),
            )
        )
    return table_lines(cells + [tuple("" for _ in header)])[:-2]  # no overall row: drop the rule and blank


def _column_lines(board: dict) -> list[str]:
    """A row per column, a column per model (▼: significantly below the best in that column)."""
    key, columns = columns_of(board)
    models = board["models"]
    cells = [(board["by"], *(m["model"] for m in models))]
    for column in columns:
        row = []
        for m in models:
            vs = ((m["vsBest"] or {}).get(key) or {}).get(column) or {}
            row.append(_short(m[key][column]["meanScore"]) + COLUMN_MARKS.get(vs.get("verdict") or "", ""))
        cells.append((column, *row))
    cells.append(("macro", *(_short(m["macro"]["meanScore"]) for m in models)))
    return table_lines(cells)


def render_board(board: dict, runs_left_out: list[tuple[str, int]]) -> str:
    _, columns = columns_of(board)
    out = [
        f"{len(board['models'])} runs over {board['sharedCases']:,} shared case(s); ranked by mean score. "
        "vs best: paired over cases, Holm-corrected for the comparisons, with the interval at the level Holm "
        "tested it at (≈ best: indistinguishable from it)",
        *_summary_lines(board),
    ]
    if len(columns) > 1:
        out += ["", f"mean score by {board['by']} (▼: significantly below the best in that column, Holm-corrected)"]
        out += _column_lines(board)
    out.append(f"note: {board['method']['differs']}")
    for name, count in runs_left_out:
        if count:
            out.append(f"note: {count:,} case(s) of {name} are not in every run and were left out")
    return "\n".join(out)


CSV_COLUMNS = [
    "rank",
    "model",
    "runDir",
    "by",
    "group",
    "cases",
    "passRate",
    "passRateLow",
    "passRateHigh",
    "meanScore",
    "meanScoreLow",
    "meanScoreHigh",
    "vsBest",
    "differenceFromBest",
    "differenceLow",
    "differenceHigh",
    "differenceConfidence",
    "difference95Low",
    "difference95High",
    "holmP",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "totalTokensPerSample",
    "costUsd",
    "costPerSampleUsd",
]


def board_csv(board: dict) -> str:
    """One row per model and group (each column, then overall)."""
    key, columns = columns_of(board)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for m in board["models"]:
        for group in [*columns, "overall"]:
            is_overall = group == "overall"
            cell = m["overall"] if is_overall else m[key][group]
            vs_best = m["vsBest"] or {}
            vs = (vs_best.get("overall") if is_overall else (vs_best.get(key) or {}).get(group)) or {}
            verdict = "best" if m["verdict"] == "best" else vs.get("verdict")
            none2 = [None, None]
            tokens = m["tokens"] if is_overall else {}
            per_sample = m["perSample"] if is_overall else {}
            values = (
                m["rank"],
                m["model"],
                m["runDir"],
                board["by"],
                group,
                cell["cases"],
                cell["passRate"],
                *(cell["passRateCI"] or none2),
                cell["meanScore"],
                *(cell["meanScoreCI"] or none2),
                verdict,
                vs.get("difference"),
                *(vs.get("ci") or none2),
                vs.get("confidence"),
                *(vs.get("ci95") or none2),
                vs.get("holmP"),
                tokens.get("input"),
                tokens.get("output"),
                tokens.get("total"),
                (per_sample.get("tokens") or {}).get("total"),
                m["cost"] if is_overall else None,
                per_sample.get("cost"),
            )
            writer.writerow(["" if v is None else v for v in values])
    return out.getvalue()
