"""run.json (SPEC §8.3): what was run. Written here only, by `run` (updated
when it finishes and on every resume) and by `grade --run-dir`."""

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
    **extra,
) -> dict:
    """The run.json of a new run of `release` (a release.loaded.LoadedRelease)."""
    return {
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
        **extra,
        "trunchbull": __version__,
        "startedAt": started_at,
        "finishedAt": None,
    }


def write_json(path: Path, value: object) -> None:
    write_atomic(path, orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")


def write_run_json(run_dir: Path, meta: dict) -> None:
    write_json(run_dir / RUN_JSON, meta)


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
