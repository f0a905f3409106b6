"""A finished run's cases as stats/run_stats.py tallies them: the one way
`report`, `compare` and `leaderboard` get a run's figures from its rows."""

from __future__ import annotations

from trunchbull.rundir.reader import RunDirectory
from trunchbull.stats.run_stats import CaseTally, tally_cases


def run_cases(run: RunDirectory) -> dict[tuple[str, str], CaseTally]:
    """(eval ID, case ID) → the case's tally, in the run's (release) order."""
    records = run.records  # (what run.record_of does, without a call per sample)
    return tally_cases(run.results, [records.get((row["caseId"], row.get("repeat", 0))) for row in run.results])
