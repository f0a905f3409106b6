"""The release a run ran, for what its records do not hold (each case's
prompt, system prompt and tools): read from the path run.json recorded, or
from one given on the command line. A release that is gone, does not verify
or is another release is not an error: the report shows what the records
have and says why the prompts are missing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import UsageError


@dataclass
class ReleaseCases:
    cases: dict[str, dict] | None  # case ID → the release's case; None when the release is not available
    note: str | None  # why it is not available


def release_cases(meta: dict, override: Path | None = None) -> ReleaseCases:
    from trunchbull.release.loaded import load_release

    release = meta.get("release") or {}
    recorded = release.get("path")
    path = override if override is not None else (Path(recorded) if recorded else None)
    if path is None:
        return ReleaseCases(
            None,
            "the run does not record where its release is, so prompts are not shown " "(give it with --release PATH)",
        )
    if not path.exists():
        return ReleaseCases(
            None,
            f"the release {path} no longer exists, so prompts and system prompts are not "
            "shown (give it with --release PATH)",
        )
    try:
        loaded = load_release(path)
    except UsageError as err:
        return ReleaseCases(
            None, f"the release {path} cannot be used ({str(err).splitlines()[0]}), so prompts are " "not shown"
        )
    if loaded.digest != release.get("digest"):
        return ReleaseCases(
            None,
            f"{path} is now release {loaded.digest}, not the run's {release.get('digest')}, "
            "so prompts are not shown (give the run's release with --release PATH)",
        )
    return ReleaseCases({case["id"]: case for case in loaded.cases}, None)
