"""`trunchbull grade RELEASE RESPONSES --run-dir DIR`: recorded responses,
graded outside `run`, written as a run directory (SPEC §8.3) without the
model calls, so that `report`, `compare` and `export` take them like any
run. It is written by the same writer as a run's (rundir/writer.py), in the
same steps: run.json and the record log before grading (a judge appends its
verdicts meanwhile, rundir/judgments.py), then results, summary and run.json
finished. The model is `recorded:<file name>`; each response becomes a
record of repeat 0 with no latency, steps or attempts (nothing was called).

DIR must be new or empty, with one exception: a directory `grade --run-dir`
wrote for the same release and the same responses is graded again in place,
its judge's recorded verdicts replayed rather than asked again (a grade that
was interrupted while judging continues so; a finished one is re-graded with
no judge call)."""

from __future__ import annotations

from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.grading.responses import Response
from trunchbull.release.loaded import LoadedRelease
from trunchbull.rundir.layout import RESPONSES, check_new_run_dir, is_non_empty_dir
from trunchbull.rundir.log import read_records
from trunchbull.rundir.run_json import is_run, new_run_json, read_run_json
from trunchbull.rundir.schema import recorded_response
from trunchbull.rundir.writer import RunDirWriter


def recorded_model(responses: Path) -> str:
    return f"recorded:{responses.name}"


def _records(release: LoadedRelease, responses: dict[str, Response]) -> list[dict]:
    out = []
    for case in release.cases:
        response = responses.get(case["id"])
        if response is not None:
            out.append(
                recorded_response(
                    case["id"], response.output, response.tool_calls, response.finish_reason, response.usage
                )
            )
    return out


def previous_grade(run_dir: Path, release: LoadedRelease, responses: dict[str, Response]) -> dict | None:
    """The run.json of a grade of these responses that `run_dir` holds (to
    grade again in place); None when `run_dir` is new or empty. Anything else
    there is a usage error: nothing is overwritten."""
    if not is_non_empty_dir(run_dir):
        check_new_run_dir(run_dir, "--run-dir ")
        return None
    refusal = UsageError(
        f"--run-dir {run_dir} exists and is not empty, and is not a grade of these responses against this "
        "release: nothing is overwritten; choose a new directory"
    )
    try:
        meta = read_run_json(run_dir)
    except UsageError:
        raise refusal from None
    if not is_run(meta) or meta.get("responses") is None or (meta.get("release") or {}).get("digest") != release.digest:
        raise refusal
    recorded = read_records(run_dir / RESPONSES)
    if recorded.damaged or list(recorded.records.values()) != _records(release, responses):
        raise refusal
    return meta


def start_recorded_run(
    writer: RunDirWriter,
    release: LoadedRelease,
    responses_path: Path,
    responses: dict[str, Response],
    samples: int,
    started_at: str,
    previous: dict | None,
    judge: dict | None,
) -> dict:
    """run.json (unfinished) and, for a new directory, the record log; the run.json to finish."""
    if previous is not None:
        meta = {**previous, "judge": judge, "finishedAt": None}
        writer.start(meta)
        return meta
    meta = new_run_json(
        release,
        release.path.absolute(),
        model=recorded_model(responses_path),
        base_url=None,
        api_key_env=None,
        settings=None,
        filters={"eval": [], "case": [], "limit": None},
        repeat=1,
        samples=samples,
        started_at=started_at,
        responses=str(responses_path.absolute()),
        judge=judge,
    )
    writer.start(meta)
    log = writer.record_log()
    try:
        for record in _records(release, responses):
            log.append_record(record)
    finally:
        log.close()
    return meta
