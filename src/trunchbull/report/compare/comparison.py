"""Two run directories compared (SPEC §9): the release check, then the
paired statistics of paired.py, with a description of each run."""

from __future__ import annotations

from trunchbull.common.diagnostics import UsageError
from trunchbull.report.compare.paired import compare_results
from trunchbull.rundir.reader import RunDirectory


def describe_run(run: RunDirectory) -> dict:
    release = run.meta.get("release") or {}
    return {
        "runDir": str(run.path),
        "model": run.model,
        "repeat": run.meta.get("repeat"),
        "release": {"title": release.get("title"), "version": release.get("version"), "digest": run.digest},
    }


def compare_runs(a: RunDirectory, b: RunDirectory, allow_release_change: bool = False) -> dict:
    changed = a.digest != b.digest
    if changed and not allow_release_change:
        raise UsageError(
            f"{a.path} and {b.path} ran different releases ({a.digest} and {b.digest}), so their cases "
            "may not be the same. Compare runs of one release, or pass --allow-release-change to pair "
            "cases by ID (added and removed cases are listed)"
        )
    order = [*a.summary["evals"], *b.summary["evals"]]
    return {
        "a": describe_run(a),
        "b": describe_run(b),
        "releaseChanged": changed,
        **compare_results(a.results, b.results, order),
    }
