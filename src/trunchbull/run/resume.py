"""A new run or a resumed one (SPEC §8.4): the run directory checked before
anything is called or written, and, on --resume, the samples already
recorded set apart from those still to run."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.samples import Sample
from trunchbull.rundir.layout import RESPONSES, RUN_JSON, is_non_empty_dir
from trunchbull.rundir.run_json import is_run, read_run_json
from trunchbull.rundir.writer import RunDirWriter


def previous_run(run_dir: Path, resume: bool, rerun_errors: bool) -> dict | None:
    """The recorded run.json when resuming; None for a new run."""
    if rerun_errors and not resume:
        raise UsageError("--rerun-errors re-runs the failed samples of a run being resumed: add --resume")
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"{run_dir} exists and is not a directory")
    non_empty = is_non_empty_dir(run_dir)
    if not resume:
        if non_empty:
            raise UsageError(
                f"{run_dir} exists and is not empty: nothing is overwritten. Continue that run with "
                "--resume, or choose a new directory"
            )
        return None
    if not non_empty:
        raise UsageError(f"--resume: {run_dir} holds no run to resume")
    previous = read_run_json(run_dir)
    if not is_run(previous):
        raise UsageError(f"--resume: {run_dir / RUN_JSON} is not a trunchbull run")
    return previous


def check_same_release(previous: dict | None, release: LoadedRelease, target: Path) -> None:
    recorded = (previous or {}).get("release") or {}
    if previous is not None and recorded.get("digest") != release.digest:
        raise UsageError(
            f"--resume: {target} is release {release.digest}, but the run being resumed ran "
            f"{recorded.get('digest')}; resume against the same release"
        )


@dataclass
class Reconciled:
    done: dict[tuple[str, int], dict]  # the records kept, by (case ID, repeat)
    todo: list[Sample]  # the samples still to record, in plan order
    rerun: int  # recorded samples in error dropped for --rerun-errors


def reconcile(writer: RunDirWriter, samples: list[Sample], resuming: bool, rerun_errors: bool) -> Reconciled:
    """What is recorded already (a torn last line is cut off the log) and what is left."""
    if not resuming:
        return Reconciled({}, list(samples), 0)
    log_path = writer.path / RESPONSES
    recorded, rerun = writer.resume_log(rerun_errors)
    if recorded.duplicates:  # written before run directories were locked, or edited
        print(
            f"trunchbull: warning: {log_path} records {recorded.duplicates} sample(s) more than once; the run "
            "goes on from the first record of each, but report, compare and export refuse the log until "
            "it holds one line per sample",
            file=sys.stderr,
        )
    for damage in recorded.damaged:
        print(f"trunchbull: warning: {damage.describe(log_path)}; its sample runs again", file=sys.stderr)
    done = recorded.records
    return Reconciled(done, [s for s in samples if (s.case_id, s.repeat) not in done], rerun)
