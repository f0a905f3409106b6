"""`trunchbull grade RELEASE RESPONSES --run-dir DIR`: recorded responses,
graded outside `run`, written as a run directory (SPEC §8.3) without the
model calls, so that `report`, `compare` and `export` take them like any
run. The model is `recorded:<file name>`; each response becomes a record of
repeat 0 with no latency, steps or attempts (nothing was called)."""

from __future__ import annotations

from pathlib import Path

import orjson

from trunchbull.grading.responses import Response
from trunchbull.release.loaded import LoadedRelease
from trunchbull.rundir.layout import RESPONSES, RESULTS, SUMMARY
from trunchbull.rundir.results import write_results
from trunchbull.rundir.run_json import new_run_json, now, write_json, write_run_json
from trunchbull.rundir.schema import recorded_response


def recorded_model(responses: Path) -> str:
    return f"recorded:{responses.name}"


def write_recorded_run(
    run_dir: Path,
    release: LoadedRelease,
    responses_path: Path,
    responses: dict[str, Response],
    results: list[dict],
    summary: dict,
    started_at: str,
) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    log = bytearray()
    for case in release.cases:
        response = responses.get(case["id"])
        if response is not None:
            record = recorded_response(
                case["id"], response.output, response.tool_calls, response.finish_reason, response.usage
            )
            log += orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    (run_dir / RESPONSES).write_bytes(log)
    write_results(run_dir / RESULTS, results)
    write_json(run_dir / SUMMARY, summary)
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
    meta["finishedAt"] = now()
    write_run_json(run_dir, meta)
