"""What `run TARGET` names: a built release (a directory holding
release.json, or a release .tar), or a benchmark root, which is built first
into ROOT/dist/release exactly as `trunchbull build ROOT` does."""

from __future__ import annotations

import sys
from pathlib import Path

from trunchbull.common.diagnostics import UsageError


def resolve_target(target: Path, *, as_json: bool) -> tuple[int, Path | None]:
    """(exit code, the release to run); the release is None when a root did
    not build (its diagnostics are printed, the code says why)."""
    if not target.exists():
        raise UsageError(f"{target}: no such release or benchmark root")
    if target.is_file():
        import tarfile

        if target.suffix == ".tar" or tarfile.is_tarfile(target):
            return 0, target
        if target.name.startswith("benchmark.config."):
            return _build(target, as_json)
        raise UsageError(f"{target} is neither a release (.tar or directory) nor a benchmark root")
    if (target / "release.json").is_file():
        return 0, target
    return _build(target, as_json)


def _build(root: Path, as_json: bool) -> tuple[int, Path | None]:
    from trunchbull.compile.building import build_release

    code, outcome, out = build_release(root, None, as_json=as_json)
    if out is not None and not as_json:
        assert outcome.release is not None  # built
        print(f"built {out}: {outcome.release.manifest.describe_counts()}", file=sys.stderr)
    return code, out
