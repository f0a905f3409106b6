"""The leaderboard of many runs (SPEC §9): one model × eval table (or
model × group, `--by FIELD`) over the cases every run has, ranked, each
model marked as indistinguishable from the best or significantly below it.
Every figure is stats/run_stats.py's, over the shared cases' tallies.

* **Cases.** A case enters when every run has it (same case ID and eval).
  Cases only some runs have are left out and counted per run.
* **Cells.** Per run and column (each eval, or each group of `--by`) and
  overall: the pass rate and the mean score over the shared cases, each
  with its 95% interval (stats/intervals.py, as in summary.json); beside
  the overall (micro) figure, the macro average over the columns.
* **Ranking** by the overall mean score (then the pass rate, then the model).
* **Against the best.** Every other run is compared with the top one, paired
  over the cases both scored (stats/paired.py, as `compare`); the K − 1
  comparisons of a column are corrected with Holm's step-down method, and
  each gets the interval at the level Holm tested it at
  (`holm_paired` in stats/multiple.py), so that its interval excludes 0 exactly
  when it is *significantly below* (or above) the best; otherwise it is
  *indistinguishable*. The 95% interval, uncorrected, is there too (`ci95`):
  what `compare` would say of that one pair.
* **Cost and tokens** per run, summed over the shared cases' samples and
  per sample; cost is null (unknown) when any of those samples' cost is."""

from __future__ import annotations

from trunchbull.common.diagnostics import UsageError
from trunchbull.report.run_cases import run_cases
from trunchbull.rundir.reader import RunDirectory
from trunchbull.stats.multiple import ALPHA, Corrected, holm_paired
from trunchbull.stats.paired import PairSums
from trunchbull.stats.run_stats import DIGITS, CaseTally, GroupOf, GroupTally, macro_average, rounded

OVERALL = "overall"
METHOD = {
    "cases": "shared by every run (case ID and eval)",
    "interval": "continuity-corrected Wilson score interval on the clustered effective sample size",
    "ranking": "overall mean score, then pass rate",
    "macro": "the mean of the columns' figures, each column alike (no interval)",
    "versusBest": "paired difference over the cases both graded (square-and-add over the improvements and "
    "the regressions), Holm-corrected over the comparisons of each column; `ci` at the level Holm tested "
    "the comparison at (it excludes 0 exactly when the verdict is below or above), `ci95` uncorrected",
    "alpha": round(ALPHA, DIGITS),
}
DIFFERS = (
    "compare tests one planned comparison at 95%; the leaderboard makes one per model below the best in each "
    "column and corrects them for their number (Holm), so a difference compare calls significant may be "
    "indistinguishable here"
)

Key = tuple[str, str]  # (eval ID, case ID)
Tallies = dict[Key, CaseTally]


def labels(runs: list[RunDirectory]) -> list[str]:
    """Each run's model, with its directory when two runs share a model."""
    models = [r.model for r in runs]
    return [m if models.count(m) == 1 else f"{m} ({r.path.name})" for m, r in zip(models, runs)]


def shared_cases(tallies: list[Tallies], group_of: GroupOf = None) -> list[dict[str, list[CaseTally]]]:
    """Per run, column (eval ID, or `group_of`'s label) → its tallies of the
    cases every run has, in the first run's order (the same cases at the
    same positions in every run)."""
    common = set(tallies[0]).intersection(*tallies[1:])
    keys = [key for key in tallies[0] if key in common]
    labels = [key[0] if group_of is None else group_of(*key) for key in keys]
    out: list[dict[str, list[CaseTally]]] = []
    for t in tallies:
        groups: dict[str, list[CaseTally]] = {}
        for key, label in zip(keys, labels):
            groups.setdefault(label, []).append(t[key])
        out.append(groups)
    return out


def cell(group: GroupTally) -> dict:
    return {"cases": group.cases, "samples": group.samples, "graded": group.graded, **group.rates()}


def rank_order(overall: list[GroupTally], names: list[str]) -> list[int]:
    """The runs' indices, best first: overall mean score, then pass rate, then name."""

    def key(i: int) -> tuple:
        o = overall[i].rates()
        return (-(o["meanScore"] if o["meanScore"] is not None else -1), -(o["passRate"] or 0.0), names[i])

    return sorted(range(len(overall)), key=key)


def against(best: list[CaseTally], other: list[CaseTally]) -> PairSums:
    """The paired sums of `other` − `best` over the cases (at the same positions) both scored."""
    pairs = [(a, b) for a, b in zip(best, other) if a.scored and b.scored]
    return PairSums.of(
        [a.score_sum / a.scored for a, _ in pairs],
        [b.score_sum / b.scored for _, b in pairs],
        [min(a.scored, b.scored) for a, b in pairs],
    )


def versus_best(cases: list[dict[str, list[CaseTally]]], order: list[int]) -> dict[int, dict[str | None, dict]]:
    """Per run below the best, per column and overall (key None): its paired
    difference from the best, Holm-corrected over the runs of the column,
    its interval at the corrected level, and its verdict."""
    best, others = order[0], order[1:]
    sums: dict[int, dict[str | None, PairSums]] = {
        i: {e: against(cases[best][e], cases[i][e]) for e in cases[best]} for i in others
    }
    for i in others:
        total = PairSums()
        for part in list(sums[i].values()):
            total.merge(part)
        sums[i][None] = total
    versus: dict[int, dict[str | None, dict]] = {i: {} for i in others}
    for group in [*cases[best], None]:
        for i, corrected in zip(others, holm_paired([sums[i][group] for i in others])):
            versus[i][group] = _versus(corrected)
    return versus


def _versus(c: Corrected | None) -> dict:
    if c is None:
        return {"n": 0, "difference": None, "ci": None, "confidence": None, "ci95": None, "pValue": None,
                "holmP": None, "verdict": None}  # fmt: skip
    r = c.result
    return {
        "n": r.n,
        "difference": rounded(r.difference),
        "ci": [rounded(c.low), rounded(c.high)],
        "confidence": rounded(c.confidence),
        "ci95": [rounded(r.low), rounded(r.high)],
        "pValue": rounded(c.p_value),
        "holmP": rounded(c.holm_p),
        "verdict": ("below" if r.difference < 0 else "above") if c.rejected else "indistinguishable",
    }


def build_board(runs: list[RunDirectory], by: str | None = None, group_of: GroupOf = None) -> dict:
    """`by` (--by's field; None: by eval) with `group_of` its groups (None: by eval)."""
    if len(runs) < 2:
        raise UsageError("a leaderboard needs at least two run directories")
    names = labels(runs)
    tallies = [run_cases(run) for run in runs]
    cases = shared_cases(tallies, group_of)
    if not cases[0]:
        raise UsageError("the runs share no case (by case ID and eval): there is nothing to rank")
    columns = list(cases[0])
    key = "evals" if group_of is None else "groups"
    groups = [{e: GroupTally.of(part) for e, part in run.items()} for run in cases]
    overall = [GroupTally.merged(run_groups.values()) for run_groups in groups]
    order = rank_order(overall, names)
    versus = versus_best(cases, order)
    shared = sum(len(part) for part in cases[0].values())
    models = []
    for rank, i in enumerate(order, 1):
        models.append(
            {
                "rank": rank,
                "model": names[i],
                "runDir": str(runs[i].path),
                "release": runs[i].digest,
                "verdict": "best" if rank == 1 else versus[i][None]["verdict"],
                "overall": cell(overall[i]),
                "macro": macro_average(groups[i].values()),
                key: {e: cell(groups[i][e]) for e in columns},
                "vsBest": None if rank == 1 else {OVERALL: versus[i][None], key: {e: versus[i][e] for e in columns}},
                "leftOut": len(tallies[i]) - shared,
                "tokens": overall[i].tokens(),
                "cost": overall[i].total_cost(),
                "perSample": overall[i].per_sample(),
            }
        )
    return {
        "method": {**METHOD, "differs": DIFFERS},
        "releaseChanged": len({r.digest for r in runs}) > 1,
        "sharedCases": shared,
        "by": by or "eval",
        key: columns,
        "models": models,
    }


def columns_of(board: dict) -> tuple[str, list[str]]:
    """("evals" or "groups", the board's columns)."""
    key = "evals" if "evals" in board else "groups"
    return key, board[key]
