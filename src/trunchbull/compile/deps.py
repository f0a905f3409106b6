"""The benchmark's npm dependencies found: the nearest package.json and its
lockfile (installed by `node/dependencies.py`)."""

from __future__ import annotations

from pathlib import Path

from trunchbull.common.diagnostics import Diagnostics
from trunchbull.common.paths import rel_posix
from trunchbull.common.userfiles import NOT_REGULAR_CODE, UNREADABLE, UNREADABLE_CODE, exists, probe
from trunchbull.node.dependencies import LOCKFILES, Dependencies


def find_dependencies(root: Path, repo_root: Path, diags: Diagnostics | None = None) -> Dependencies | None:
    """The nearest package.json (and its lockfile) from the benchmark root up
    to the repository root. One that is there but is no regular file is
    reported to `diags` (esbuild and npm would read it) and none is used."""
    for directory in (root, *root.parents):
        if exists(directory / "package.json"):
            found = [directory / name for name in ("package.json", *LOCKFILES) if exists(directory / name)]
            probed = [(path, probe(path)[1]) for path in found]
            problems = [(path, problem) for path, problem in probed if problem is not None]
            for path, problem in problems:
                if diags is not None:
                    code = UNREADABLE_CODE if problem.kind == UNREADABLE else NOT_REGULAR_CODE
                    diags.error(
                        code,
                        f"{path.name} {problem}",
                        file=rel_posix(path, root),
                        hint="package.json and its lockfile must be regular files",
                    )
            if problems:
                return None
            return Dependencies(directory / "package.json", next(iter(found[1:]), None))
        if directory == repo_root:
            break
    return None
