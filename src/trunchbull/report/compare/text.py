"""The terminal rendering of a comparison (paired.py): one row per eval and
the overall row, then the regressed and fixed cases."""

from __future__ import annotations

from trunchbull.common.text_table import table_lines
from trunchbull.grading.summary_text import cost_text

LISTED = 50  # cases listed per kind; the JSON output has all of them

COLUMNS = (
    "eval",
    "cases",
    "A mean",
    "B mean",
    "B - A",
    "95% CI",
    "MDD80",
    "regressed",
    "fixed",
    "unchanged",
    "left out",
)


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(ci: list[float] | None) -> str:
    return "" if not ci else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _run_lines(label: str, run: dict) -> list[str]:
    release = run["release"]
    title = (release.get("title") or "") + (f" {release['version']}" if release.get("version") else "")
    o = run["overall"]
    ci = o["passRateCI"]
    rate = (
        "-"
        if o["passRate"] is None
        else f"{o['passRate'] * 100:.1f}%" + (f" [{ci[0] * 100:.1f}, {ci[1] * 100:.1f}]" if ci else "")
    )
    return [
        f"{label}: {run['runDir']}  model {run['model']}  release {title} ({release.get('digest')})",
        f"   its {o['samples']:,} samples: pass rate {rate}, mean score {_number(o['meanScore'])}, "
        f"{o['tokens']['total']:,} tokens, cost {cost_text(o['cost'])}, {o['errors']:,} in error",
    ]


def _cases(title: str, items: list[dict] | list[str]) -> list[str]:
    if not items:
        return []
    out = [f"{title} ({len(items):,}):"]
    for item in items[:LISTED]:
        if isinstance(item, str):
            out.append(f"  {item}")
        else:
            out.append(
                f"  {item['caseId']}  pass {_pct(item['a']['passRate'])} -> {_pct(item['b']['passRate'])}, "
                f"score {_number(item['a']['score'])} -> {_number(item['b']['score'])}"
            )
    if len(items) > LISTED:
        out.append(f"  … and {len(items) - LISTED:,} more (--json lists them all)")
    return out


def power_line(mdd: float, n: int) -> str:
    """What a non-significant result could have missed, and what more cases would see."""
    half = mdd / 2
    return (
        f"power: with {n:,} case(s), a true difference of ±{mdd:.3f} would be detected 4 times in 5; "
        f"±{half:.3f} needs about {4 * n:,} cases (the detectable difference shrinks with √cases)"
    )


def verdict(overall: dict) -> tuple[str, str]:
    """(worse | better | same | none, the sentence) of the overall difference."""
    ci = overall["ci"]
    if ci is None:
        return "none", "too few shared cases for an interval"
    if ci[1] < 0:
        return "worse", "B is significantly worse than A (the 95% CI is below 0)"
    if ci[0] > 0:
        return "better", "B is significantly better than A (the 95% CI is above 0)"
    return "same", "no significant difference (the 95% CI contains 0)"


def _table(first: str, rows: list[tuple[str, dict]]) -> list[str]:
    cells = [(first, *COLUMNS[1:])]
    for eval_id, g in rows:
        cells.append(
            (
                eval_id,
                f"{g['n']:,}",
                _number(g["meanA"]),
                _number(g["meanB"]),
                _signed(g["difference"]),
                _interval(g["ci"]),
                _number(g.get("mdd80")),
                f"{g['regressed']:,}",
                f"{g['fixed']:,}",
                f"{g['unchanged']:,}",
                f"{g['excluded']:,}",
            )
        )
    return table_lines(cells)


def _breakdown_lines(comparison: dict) -> list[str]:
    """With --by: a row per group, the macro average above the overall (micro) row."""
    if "groups" not in comparison:
        return []
    macro = comparison["macro"]
    lines = _table(comparison["by"], [*comparison["groups"].items(), ("overall (micro)", comparison["overall"])])
    macro_line = (
        f"macro ({macro['groups']:,} groups): A {_number(macro['meanA'])}, B {_number(macro['meanB'])}, "
        f"B - A {_signed(macro['difference'])} (each group alike; no interval)"
    )
    return [
        f"by {comparison['by']}: {len(comparison['groups']):,} group(s), each with its own 95% CI (not corrected "
        "for their number; the verdict is the overall one)",
        *lines,
        macro_line,
    ]


def render_comparison(comparison: dict, a: dict, b: dict) -> str:
    """`a`, `b`: each run's runDir, model, release and its own figures (`overall`)."""
    out = [
        *_run_lines("A", a),
        *_run_lines("B", b),
        "A is the baseline, B the run judged. Paired difference of mean scores (B - A) over the cases both runs "
        "graded; 95% CI: square-and-add over the cases B improved and those it regressed; MDD80: the smallest "
        "true difference these cases detect with 80% power",
        *_table("eval", [*comparison["evals"].items(), ("overall", comparison["overall"])]),
        *_breakdown_lines(comparison),
    ]
    overall = comparison["overall"]
    if overall["excluded"]:
        out.append(f"left out: {overall['excluded']:,} case(s) without a non-error sample in both runs")
    ci = overall["ci"]
    out.append("verdict: " + verdict(overall)[1])
    mdd = overall.get("mdd80")
    if ci is not None and ci[0] <= 0 <= ci[1] and mdd:
        out.append(power_line(mdd, overall["n"]))
    changed = comparison["changedCases"]
    out += _cases("regressed", [c for c in changed if c["change"] == "regressed"])
    out += _cases("fixed", [c for c in changed if c["change"] == "fixed"])
    out += _cases("added (only in B)", comparison["addedCases"])
    out += _cases("removed (only in A)", comparison["removedCases"])
    return "\n".join(out)
