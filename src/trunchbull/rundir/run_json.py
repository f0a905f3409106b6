"""run.json (SPEC §8.3): what was run. Its keys and their values are made
here only, for `run` (updated when it finishes and on every resume) and for
`grade --run-dir`; written through writer.py."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import orjson

from trunchbull import __version__
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.files import write_atomic
from trunchbull.rundir.layout import RUN_JSON

FORMAT = "trunchbull.run"


def now() -> str:
    """A run.json timestamp: UTC, milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Every run.json has these keys, in this order, whoever wrote it (`run`, `run --resume`,
# `grade --run-dir`); a run.json of an older version may lack some (readers use .get).
KEYS = (
    "format",
    "release",  # {digest, title, version, path (absolute)}
    "model",  # the model SPEC, or `recorded:<file name>` for `grade --run-dir`
    "baseUrl",
    "apiKeyEnv",  # the key's variable name, never the key
    "settings",  # the call settings (null: none, nothing was called)
    "filters",  # {eval, case, limit}
    "repeat",
    "samples",
    "responses",  # `grade --run-dir`: the responses file's absolute path; null for `run`
    "price",  # the price the costs are at, null when unknown (run/prices.py)
    "budget",  # {maxCost, maxTotalTokens} the run was given, or null
    "modelInfo",  # what a local model said about itself, or null
    "judge",  # the judges of model-graded kinds, their endpoint and settings (run/judge_options.py), or null
    "batch",  # batch mode: {poll} (run/batch/), or null for a live run
    "cache",  # whether the response cache is used (false: --no-cache, kept by --resume); null: no calls
    "warnings",  # said once each on stderr, kept here
    "resumes",  # how many times the run was resumed
    "trunchbull",  # the version that wrote it
    "startedAt",
    "finishedAt",  # null until every sample is graded
)


def new_run_json(
    release,
    release_path: Path,
    *,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    settings: dict | None,
    filters: dict,
    repeat: int,
    samples: int,
    started_at: str,
    responses: str | None = None,
    price: dict | None = None,
    budget: dict | None = None,
    model_info: dict | None = None,
    judge: dict | None = None,
    batch: dict | None = None,
    cache: bool | None = None,
) -> dict:
    """The run.json of a new run of `release` (a release.loaded.LoadedRelease)."""
    meta = {
        "format": FORMAT,
        "release": {
            "digest": release.digest,
            "title": release.title,
            "version": release.manifest.version,
            "path": str(release_path),
        },
        "model": model,
        "baseUrl": base_url,
        "apiKeyEnv": api_key_env,
        "settings": settings,
        "filters": filters,
        "repeat": repeat,
        "samples": samples,
        "responses": responses,
        "price": price,
        "budget": budget,
        "modelInfo": model_info,
        "judge": judge,
        "batch": batch,
        "cache": cache,
        "warnings": [],
        "resumes": 0,
        "trunchbull": __version__,
        "startedAt": started_at,
        "finishedAt": None,
    }
    assert tuple(meta) == KEYS
    return meta


def resumed_run_json(
    previous: dict,
    release_path: Path,
    *,
    price: dict | None,
    budget: dict | None,
    model_info: dict | None,
    judge: dict | None = None,
    batch: dict | None = None,
    cache: bool | None = None,
) -> dict:
    """The run.json of a run being resumed: the same release (its digest is
    checked), where it is now; this run's price; the budget, model info and
    judge given now, else the run's own; not finished."""
    meta = {key: previous.get(key) for key in KEYS}
    meta.update({key: value for key, value in previous.items() if key not in meta})  # kept as they were
    meta["release"] = {**previous["release"], "path": str(release_path)}
    meta["price"] = price
    if budget is not None:
        meta["budget"] = budget
    if model_info is not None:
        meta["modelInfo"] = model_info
    if judge is not None:
        meta["judge"] = judge
    if batch is not None:
        meta["batch"] = batch
    if cache is not None:
        meta["cache"] = cache
    meta["warnings"] = list(previous.get("warnings") or [])
    meta["resumes"] = int(previous.get("resumes") or 0) + 1
    meta["finishedAt"] = None
    return meta


def add_warnings(meta: dict, warnings: list[str]) -> None:
    """Warnings said during the run, each kept once."""
    meta["warnings"] = list(dict.fromkeys([*(meta.get("warnings") or []), *warnings]))


def mark_finished(meta: dict) -> None:
    meta["finishedAt"] = now()


def write_run_json(run_dir: Path, meta: dict) -> None:
    write_atomic(run_dir / RUN_JSON, orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")


def read_run_json(run_dir: Path) -> dict:
    """run.json as an object (any format: callers check `is_run`)."""
    path = run_dir / RUN_JSON
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"{run_dir} has no {RUN_JSON}: it is not a run directory") from None
    except (OSError, orjson.JSONDecodeError) as err:
        raise UsageError(f"{path} cannot be read: {err}") from None
    if type(data) is not dict:
        raise UsageError(f"{path} is not a JSON object")
    return data


def is_run(meta: dict) -> bool:
    return meta.get("format") == FORMAT
