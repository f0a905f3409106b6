"""The terminal rendering of a summary (summary.py): one row per eval and
the overall row."""

from __future__ import annotations

from trunchbull.common.text_table import table_lines
from trunchbull.stats.passk import shown_ks


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _interval(ci: list[float] | None) -> str:
    return "" if not ci else f"[{ci[0] * 100:.1f}, {ci[1] * 100:.1f}]"


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def cost_text(value: float | None) -> str:
    """USD, or "unknown" (a price is unknown: never shown as 0)."""
    if value is None:
        return "unknown"
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


COLUMNS = (
    "eval",
    "samples",
    "pass",
    "fail",
    "error",
    "pass rate",
    "95% CI",
    "mean score",
    "tokens",
    "cost",
    "p50 ms",
    "p90 ms",
)


def render_summary(summary: dict) -> str:
    release = summary["release"]
    title = (release.get("title") or "") + (f" {release['version']}" if release.get("version") else "")
    rows = [(eval_id, group) for eval_id, group in summary["evals"].items()] + [("overall", summary["overall"])]
    cells = [COLUMNS]
    for eval_id, g in rows:
        cells.append(
            (
                eval_id,
                f"{g['samples']:,}",
                f"{g['passed']:,}",
                f"{g['failed']:,}",
                f"{g['errors']:,}",
                _pct(g["passRate"]),
                _interval(g["passRateCI"]),
                _number(g["meanScore"]),
                f"{g['tokens']['total']:,}",
                cost_text(g.get("cost")),
                _ms(g["latencyMs"]["p50"]),
                _ms(g["latencyMs"]["p90"]),
            )
        )
    out = [f"release {title} ({release['digest']})", *table_lines(cells)]
    overall = summary["overall"]
    if "passAtK" in overall:
        repeats = len(overall["passAtK"])  # k = 1 … K; the JSON has every k, the terminal a few
        ks = ", ".join(f"pass@{k} {_pct(overall['passAtK'].get(str(k)))}" for k in shown_ks(repeats))
        out.append(f"{ks}; pass^{repeats} {_pct(overall['passHatK'])}")
    judge = overall.get("judge")
    if judge:
        out += _judge_lines(summary, judge)
    return "\n".join(out)


def _judge_lines(summary: dict, judge: dict) -> list[str]:
    judges = summary.get("judges") or []
    named = ", ".join(
        j["model"] + (" (the model under test: self-judged)" if j.get("selfJudge") else "") for j in judges
    )
    lines = [
        f"judge{'s' * (len(judges) > 1)} {named or '?'}: {judge['requests']:,} request(s), "
        f"{judge['cached']:,} from the cache, {judge['errors']:,} in error; "
        f"{judge['tokens']['total']:,} tokens, cost {cost_text(judge['cost'])} (not in the figures above)"
    ]
    for eval_id, group in summary["evals"].items():
        panel = (group.get("judge") or {}).get("panel")
        if panel:
            kappa = panel["fleissKappa"]
            lines.append(
                f"  {eval_id}: a panel of {panel['judges']} agreed on {_pct(panel['percentAgreement'])} of judge pairs "
                f"over {panel['samples']:,} sample(s) all graded; Fleiss' kappa "
                + ("-" if kappa is None else f"{kappa:.3f}")
            )
    return lines
