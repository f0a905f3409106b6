"""Two run directories compared (SPEC §9): the release check, then the
paired statistics of paired.py, with a description of each run and its own
figures over all its cases (stats/run_stats.py, as in its summary)."""

from __future__ import annotations

from trunchbull.common.diagnostics import UsageError
from trunchbull.report.compare.paired import compare_results
from trunchbull.report.run_cases import run_cases
from trunchbull.rundir.reader import RunDirectory
from trunchbull.stats.run_stats import CaseTally, GroupOf, grouped

RUN_FIGURES = ("samples", "errors", "passRate", "passRateCI", "meanScore", "meanScoreCI", "tokens", "cost")


def describe_run(run: RunDirectory, cases: dict[tuple[str, str], CaseTally]) -> dict:
    release = run.meta.get("release") or {}
    figures = grouped(cases, run.summary["evals"])[1].statistics()
    return {
        "runDir": str(run.path),
        "model": run.model,
        "repeat": run.meta.get("repeat"),
        "release": {"title": release.get("title"), "version": release.get("version"), "digest": run.digest},
        "overall": {key: figures[key] for key in RUN_FIGURES},
    }


def compare_runs(
    a: RunDirectory,
    b: RunDirectory,
    allow_release_change: bool = False,
    by: str | None = None,
    group_of: GroupOf = None,
) -> dict:
    """`by` (the field of `--by`) with `group_of` (its groups) adds the breakdown."""
    changed = a.digest != b.digest
    if changed and not allow_release_change:
        raise UsageError(
            f"{a.path} and {b.path} ran different releases ({a.digest} and {b.digest}), so their cases "
            "may not be the same. Compare runs of one release, or pass --allow-release-change to pair "
            "cases by ID (added and removed cases are listed)"
        )
    order = [*a.summary["evals"], *b.summary["evals"]]
    cases_a, cases_b = run_cases(a), run_cases(b)
    by_id_a = {case_id: case for (_, case_id), case in cases_a.items()}  # case IDs are unique in a release
    by_id_b = {case_id: case for (_, case_id), case in cases_b.items()}
    return {
        "a": describe_run(a, cases_a),
        "b": describe_run(b, cases_b),
        "releaseChanged": changed,
        **({"by": by} if by else {}),
        **compare_results(by_id_a, by_id_b, order, breakdown=by is not None, group_of=group_of),
    }
