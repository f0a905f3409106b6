"""`trunchbull grade RELEASE RESPONSES --run-dir DIR`: recorded responses,
graded outside `run`, written as a run directory (SPEC §8.3) without the
model calls, so that `report`, `compare` and `export` take them like any
run. The model is `recorded:<file name>`; each response becomes a record of
repeat 0 with no latency, steps or attempts (nothing was called)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import orjson

from trunchbull import __version__
from trunchbull.common.diagnostics import UsageError
from trunchbull.grading.responses import Response
from trunchbull.grading.results import write_results
from trunchbull.release.loaded import LoadedRelease
from trunchbull.rundir.records import RESPONSES, RESULTS, RUN_JSON, SUMMARY, write_json

FORMAT = "trunchbull.run"


def check_new_run_dir(run_dir: Path) -> None:
    """Nothing is overwritten: the directory must be new or empty."""
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"--run-dir {run_dir} exists and is not a directory")
    if run_dir.is_dir() and any(run_dir.iterdir()):
        raise UsageError(f"--run-dir {run_dir} exists and is not empty: nothing is overwritten; choose a new directory")


def recorded_model(responses: Path) -> str:
    return f"recorded:{responses.name}"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _record(case_id: str, response: Response) -> dict:
    return {
        "caseId": case_id,
        "repeat": 0,
        "output": response.output,
        "toolCalls": response.tool_calls,
        "toolResults": [],
        "steps": None,
        "finishReason": response.finish_reason,
        "usage": response.usage,
        "latencyMs": None,
        "attempts": None,
        "cached": False,
        "error": None,
    }


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
            log += orjson.dumps(_record(case["id"], response), option=orjson.OPT_APPEND_NEWLINE)
    (run_dir / RESPONSES).write_bytes(log)
    write_results(run_dir / RESULTS, results)
    write_json(run_dir / SUMMARY, summary)
    write_json(
        run_dir / RUN_JSON,
        {
            "format": FORMAT,
            "release": {
                "digest": release.digest,
                "title": release.title,
                "version": release.manifest.get("version"),
                "path": str(release.path.absolute()),
            },
            "model": summary.get("model"),
            "baseUrl": None,
            "apiKeyEnv": None,
            "settings": None,
            "filters": {"eval": [], "case": [], "limit": None},
            "repeat": 1,
            "samples": len(results),
            "responses": str(responses_path.absolute()),
            "trunchbull": __version__,
            "startedAt": started_at,
            "finishedAt": now(),
        },
    )
