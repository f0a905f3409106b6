"""`trunchbull grade RELEASE RESPONSES --run-dir DIR`: recorded responses,
graded outside `run`, written as a run directory (SPEC §8.3) without the
model calls, so that `report`, `compare` and `export` take them like any
run. It is written by the same writer as a run's (rundir/writer.py), in the
same steps: run.json, the record log, then results, summary and run.json
finished. The model is `recorded:<file name>`; each response becomes a
record of repeat 0 with no latency, steps or attempts (nothing was called)."""

from __future__ import annotations

from pathlib import Path

from trunchbull.grading.responses import Response
from trunchbull.release.loaded import LoadedRelease
from trunchbull.rundir.run_json import new_run_json
from trunchbull.rundir.schema import recorded_response
from trunchbull.rundir.writer import RunDirWriter


def recorded_model(responses: Path) -> str:
    return f"recorded:{responses.name}"


def write_recorded_run(
    writer: RunDirWriter,
    release: LoadedRelease,
    responses_path: Path,
    responses: dict[str, Response],
    results: list[dict],
    summary: dict,
    started_at: str,
) -> None:
    meta = new_run_json(
        release,
        release.path.absolute(),
        model=summary.get("model"),
        base_url=None,
        api_key_env=None,
        settings=None,
        filters={"eval": [], "case": [], "limit": None},
        repeat=1,
        samples=len(results),
        started_at=started_at,
        responses=str(responses_path.absolute()),
    )
    writer.start(meta)
    log = writer.record_log()
    try:
        for case in release.cases:
            response = responses.get(case["id"])
            if response is not None:
                log.append_record(
                    recorded_response(
                        case["id"], response.output, response.tool_calls, response.finish_reason, response.usage
                    )
                )
    finally:
        log.close()
    writer.finish(meta, results, summary)
