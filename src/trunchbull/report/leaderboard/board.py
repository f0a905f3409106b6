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
from trunchbull.stats.paired import PairedDifference, paired_difference
from trunchbull.stats.quantiles import CONFIDENCE
from trunchbull.stats.run_stats import DIGITS, CaseTally, cost, rates, rounded, tokens

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


def shared_groups(tallies: list[Tallies]) -> dict[str, list[Key]]:
    """Each eval's cases that every run has (in the first run's order), and
    `overall`: all of them."""
    keys = [key for key in tallies[0] if all(key in t for t in tallies[1:])]
    groups: dict[str, list[Key]] = {}
    for key in keys:
        groups.setdefault(key[0], []).append(key)
    groups[OVERALL] = keys
    return groups


def cell(cases: list[CaseTally]) -> dict:
    return {
        "cases": len(cases),
        "samples": sum(c.samples for c in cases),
        "graded": sum(c.graded for c in cases),
        **rates(cases),
    }


def rank_order(cells: list[dict[str, dict]], names: list[str]) -> list[int]:
    """The runs' indices, best first: overall mean score, then pass rate, then name."""

    def key(i: int) -> tuple:
        o = cells[i][OVERALL]
        return (-(o["meanScore"] if o["meanScore"] is not None else -1), -(o["passRate"] or 0.0), names[i])

    return sorted(range(len(cells)), key=key)


def against(best: Tallies, other: Tallies, keys: list[Key]) -> PairedDifference | None:
    """`other` − `best` over the cases of `keys` that both scored."""
    pairs = [(best[k], other[k]) for k in keys if best[k].scored and other[k].scored]
    return paired_difference(
        [a.score for a, _ in pairs],  # type: ignore[misc]  # both scored
        [b.score for _, b in pairs],  # type: ignore[misc]
        [min(a.scored, b.scored) for a, b in pairs],
    )


def versus_best(tallies: list[Tallies], order: list[int], groups: dict[str, list[Key]]) -> dict[int, dict[str, dict]]:
    """Per run below the best, per group: its paired difference from the
    best, Holm-corrected over the runs of the group, and its verdict."""
    best, others = order[0], order[1:]
    versus: dict[int, dict[str, dict]] = {i: {} for i in others}
    for group, keys in groups.items():
        results = {i: against(tallies[best], tallies[i], keys) for i in others}
        tested = [i for i in others if results[i] is not None]
        adjusted = dict(zip(tested, holm([results[i].p_value for i in tested])))  # type: ignore[union-attr]
        for i in others:
            r = results[i]
            if r is None:
                versus[i][group] = {"n": 0, "difference": None, "ci": None, "pValue": None, "verdict": None}
                continue
            below = adjusted[i] < ALPHA and r.difference < 0
            versus[i][group] = {
                "n": r.n,
                "difference": rounded(r.difference),
                "ci": [rounded(r.low), rounded(r.high)],
                "pValue": rounded(r.p_value),
                "holmP": rounded(adjusted[i]),
                "verdict": "below" if below else "indistinguishable",
            }
    return versus


def build_board(runs: list[RunDirectory]) -> dict:
    if len(runs) < 2:
        raise UsageError("a leaderboard needs at least two run directories")
    names = labels(runs)
    tallies = [run_cases(run) for run in runs]
    groups = shared_groups(tallies)
    if not groups[OVERALL]:
        raise UsageError("the runs share no case (by case ID and eval): there is nothing to rank")
    eval_order = [g for g in groups if g != OVERALL]
    cells = [{group: cell([t[k] for k in keys]) for group, keys in groups.items()} for t in tallies]
    order = rank_order(cells, names)
    versus = versus_best(tallies, order, groups)
    shared = set(groups[OVERALL])
    models = []
    for rank, i in enumerate(order, 1):
        kept = [tallies[i][k] for k in groups[OVERALL]]
        models.append(
            {
                "rank": rank,
                "model": names[i],
                "runDir": str(runs[i].path),
                "release": runs[i].digest,
                "verdict": "best" if rank == 1 else versus[i][OVERALL]["verdict"],
                "overall": cells[i][OVERALL],
                "evals": {e: cells[i][e] for e in eval_order},
                "vsBest": None
                if rank == 1
                else {"overall": versus[i][OVERALL], **{e: versus[i][e] for e in eval_order}},
                "leftOut": sum(1 for k in tallies[i] if k not in shared),
                "tokens": tokens(kept),
                "cost": cost(kept),
            }
        )
    return {
        "method": METHOD,
        "releaseChanged": len({r.digest for r in runs}) > 1,
        "sharedCases": len(groups[OVERALL]),
        "evals": eval_order,
        "models": models,
    }
