"""Entrypoint discovery under evals/ and tools/ (SPEC §3.1)."""

from __future__ import annotations

import os
from pathlib import Path

from trunchbull.paths import MODULE_SUFFIXES, rel_posix

DECLARATION_SUFFIXES = (".d.ts", ".d.mts")


def is_discoverable(name: str) -> bool:
    return (name.endswith(MODULE_SUFFIXES) and not name.endswith(DECLARATION_SUFFIXES)
            and ".test." not in name and ".spec." not in name and not name.startswith("."))


def discover(root: Path, directory: str) -> list[str]:
    """Root-relative module paths under root/directory, bytewise sorted."""
    base = root / directory
    if not base.is_dir():
        return []
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "node_modules"]
        for name in filenames:
            if is_discoverable(name):
                found.append(rel_posix(Path(dirpath) / name, root))
    return sorted(found, key=lambda p: p.encode())
