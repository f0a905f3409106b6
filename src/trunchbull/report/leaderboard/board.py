"""The leaderboard of many runs (SPEC §9): one model × eval table over the
cases every run has, ranked, each model marked as indistinguishable from
the best or significantly below it. Every figure is stats/run_stats.py's,
over the shared cases' tallies.

* **Cases.** A case enters when every run has it (same case ID and eval).
  Cases only some runs have are left out and counted per run.
* **Cells.** Per run and eval (and overall): the pass rate and the mean
  score over the shared cases, each with its 95% interval (stats/intervals.py,
  as in summary.json).
* **Ranking** by the overall mean score (then the pass rate, then the model).
* **Against the best.** Every other run is compared with the top one, paired
  over the cases both scored (stats/paired.py, as `compare`); the p-values of
  the K − 1 comparisons of a column are corrected with Holm's step-down
  method (stats/multiple.py). A model is *significantly below* the best when
  its corrected p-value is below 0.05 and its difference is negative, else
  *indistinguishable*.
* **Cost and tokens** per run, summed over the shared cases' samples; cost
  is null (unknown) when any of those samples' cost is unknown."""

from __future__ import annotations

from trunchbull.common.diagnostics import UsageError
from trunchbull.report.run_cases import run_cases
from trunchbull.rundir.reader import RunDirectory
from trunchbull.stats.multiple import holm
from trunchbull.stats.paired import PairedDifference, PairSums, paired_from_sums
from trunchbull.stats.quantiles import CONFIDENCE
from trunchbull.stats.run_stats import DIGITS, CaseTally, GroupTally, rounded

ALPHA = 1 - CONFIDENCE
OVERALL = "overall"
METHOD = {
    "cases": "shared by every run (case ID and eval)",
    "interval": "continuity-corrected Wilson score interval on the clustered effective sample size",
    "ranking": "overall mean score, then pass rate",
    "versusBest": "paired difference over the cases both graded (square-and-add over the improvements and "
    "the regressions), Holm-corrected over the comparisons of each column",
    "alpha": round(ALPHA, DIGITS),
}

Key = tuple[str, str]  # (eval ID, case ID)
Tallies = dict[Key, CaseTally]


def labels(runs: list[RunDirectory]) -> list[str]:
    """Each run's model, with its directory when two runs share a model."""
    models = [r.model for r in runs]
    return [m if models.count(m) == 1 else f"{m} ({r.path.name})" for m, r in zip(models, runs)]


def shared_cases(tallies: list[Tallies]) -> list[dict[str, list[CaseTally]]]:
    """Per run, eval ID → its tallies of the cases every run has, in the
    first run's order (the same cases at the same positions in every run)."""
    common = set(tallies[0]).intersection(*tallies[1:])
    keys = [key for key in tallies[0] if key in common]
    out: list[dict[str, list[CaseTally]]] = []
    for t in tallies:
        groups: dict[str, list[CaseTally]] = {}
        for key in keys:
            groups.setdefault(key[0], []).append(t[key])
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


def versus_best(cases: list[dict[str, list[CaseTally]]], order: list[int]) -> dict[int, dict[str, dict]]:
    """Per run below the best, per eval and overall: its paired difference
    from the best, Holm-corrected over the runs of the column, and its verdict."""
    best, others = order[0], order[1:]
    sums = {i: {e: against(cases[best][e], cases[i][e]) for e in cases[best]} for i in others}
    for i in others:
        total = PairSums()
        for part in sums[i].values():
            total.merge(part)
        sums[i][OVERALL] = total
    versus: dict[int, dict[str, dict]] = {i: {} for i in others}
    for group in [*cases[best], OVERALL]:
        results = {i: paired_from_sums(sums[i][group]) for i in others}
        tested = [i for i in others if results[i] is not None]
        adjusted = dict(zip(tested, holm([results[i].p_value for i in tested])))  # type: ignore[union-attr]
        for i in others:
            versus[i][group] = _versus(results[i], adjusted.get(i))
    return versus


def _versus(r: PairedDifference | None, holm_p: float | None) -> dict:
    if r is None or holm_p is None:
        return {"n": 0, "difference": None, "ci": None, "pValue": None, "verdict": None}
    return {
        "n": r.n,
        "difference": rounded(r.difference),
        "ci": [rounded(r.low), rounded(r.high)],
        "pValue": rounded(r.p_value),
        "holmP": rounded(holm_p),
        "verdict": "below" if holm_p < ALPHA and r.difference < 0 else "indistinguishable",
    }


def build_board(runs: list[RunDirectory]) -> dict:
    if len(runs) < 2:
        raise UsageError("a leaderboard needs at least two run directories")
    names = labels(runs)
    tallies = [run_cases(run) for run in runs]
    cases = shared_cases(tallies)
    if not cases[0]:
        raise UsageError("the runs share no case (by case ID and eval): there is nothing to rank")
    eval_order = list(cases[0])
    groups = [{e: GroupTally.of(part) for e, part in run.items()} for run in cases]
    for run_groups in groups:
        run_groups[OVERALL] = GroupTally.merged(run_groups.values())
    order = rank_order([g[OVERALL] for g in groups], names)
    versus = versus_best(cases, order)
    shared = sum(len(part) for part in cases[0].values())
    models = []
    for rank, i in enumerate(order, 1):
        overall = groups[i][OVERALL]
        models.append(
            {
                "rank": rank,
                "model": names[i],
                "runDir": str(runs[i].path),
                "release": runs[i].digest,
                "verdict": "best" if rank == 1 else versus[i][OVERALL]["verdict"],
                "overall": cell(overall),
                "evals": {e: cell(groups[i][e]) for e in eval_order},
                "vsBest": None
                if rank == 1
                else {"overall": versus[i][OVERALL], **{e: versus[i][e] for e in eval_order}},
                "leftOut": len(tallies[i]) - shared,
                "tokens": overall.tokens(),
                "cost": overall.total_cost(),
            }
        )
    return {
        "method": METHOD,
        "releaseChanged": len({r.digest for r in runs}) > 1,
        "sharedCases": shared,
        "evals": eval_order,
        "models": models,
    }
