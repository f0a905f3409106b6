"""The terminal and CSV renderings of a leaderboard (board.py)."""

from __future__ import annotations

import csv
import io

from trunchbull.common.text_table import table_lines

MARKS = {"best": "best", "indistinguishable": "≈ best", "below": "below", None: "-"}


def _score(cell: dict) -> str:
    if cell["meanScore"] is None:
        return "-"
    ci = cell["meanScoreCI"]
    return f"{cell['meanScore']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _short(cell: dict) -> str:
    return "-" if cell["meanScore"] is None else f"{cell['meanScore']:.3f}"


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def _difference(model: dict) -> str:
    vs = model["vsBest"]
    if not vs or vs["overall"]["difference"] is None:
        return ""
    o = vs["overall"]
    return f"{o['difference']:+.3f} [{o['ci'][0]:+.3f}, {o['ci'][1]:+.3f}] p={o['holmP']:.3g}"


def render_board(board: dict, runs_left_out: list[tuple[str, int]]) -> str:
    evals = board["evals"]
    header = ("model", "rank", "vs best", "mean score [95% CI]", *evals, "- best [95% CI], Holm p", "tokens", "cost")
    cells = [header]
    for m in board["models"]:
        cells.append(
            (
                m["model"],
                str(m["rank"]),
                MARKS[m["verdict"]],
                _score(m["overall"]),
                *(_short(m["evals"][e]) for e in evals),
                _difference(m),
                f"{m['tokens']['total']:,}",
                _cost(m["cost"]),
            )
        )
    lines = table_lines(cells + [tuple("" for _ in header)])[:-2]  # no overall row: drop the rule and blank
    out = [
        f"{len(board['models'])} runs over {board['sharedCases']:,} shared case(s); ranked by mean score. "
        "vs best: paired over cases, Holm-corrected for the comparisons (≈ best: indistinguishable from it)",
        *lines,
    ]
    for name, count in runs_left_out:
        if count:
            out.append(f"note: {count:,} case(s) of {name} are not in every run and were left out")
    return "\n".join(out)


def board_csv(board: dict) -> str:
    """One row per model and group (each eval, then overall)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "rank",
            "model",
            "runDir",
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
            "holmP",
            "inputTokens",
            "outputTokens",
            "totalTokens",
            "costUsd",
        ]
    )
    for m in board["models"]:
        for group in [*board["evals"], "overall"]:
            cell = m["overall"] if group == "overall" else m["evals"][group]
            vs = (m["vsBest"] or {}).get(group) or {}
            verdict = "best" if m["verdict"] == "best" else vs.get("verdict")
            pci, sci, dci = (
                cell["passRateCI"] or [None, None],
                cell["meanScoreCI"] or [None, None],
                vs.get("ci") or [None, None],
            )
            tokens = m["tokens"] if group == "overall" else {}
            writer.writerow(
                [
                    "" if v is None else v
                    for v in (
                        m["rank"],
                        m["model"],
                        m["runDir"],
                        group,
                        cell["cases"],
                        cell["passRate"],
                        *pci,
                        cell["meanScore"],
                        *sci,
                        verdict,
                        vs.get("difference"),
                        *dci,
                        vs.get("holmP"),
                        tokens.get("input"),
                        tokens.get("output"),
                        tokens.get("total"),
                        m["cost"] if group == "overall" else None,
                    )
                ]
            )
    return out.getvalue()
