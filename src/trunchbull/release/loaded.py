"""The one reader of a built release for grading and running: load and
verify it (directory or .tar), parse its cases, and lay out what Node needs
at run time (the module bundles beside the release's installed runtime
dependencies)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from trunchbull.common.diagnostics import UsageError
from trunchbull.common.userfiles import exists
from trunchbull.release.manifest import CASES, MODULES_DIR, PROTOCOL_VERSION, Manifest


@dataclass
class LoadedRelease:
    path: Path
    manifest: Manifest
    files: dict[str, bytes]
    _read: Any = field(repr=False, default=None)  # the release as read_release gave it

    @cached_property
    def cases(self) -> list[dict]:
        """The parsed cases.jsonl, on first use (25,000 cases take ~0.2 s: a
        run starts its workers first)."""
        from trunchbull.release.files import load_cases

        data = self.files.get(CASES, b"")
        try:  # one parse of the whole file is much faster than one per line
            return orjson.loads(
                b"[" + b",".join([line for line in data.split(b"\n") if line and not line.isspace()]) + b"]"
            )
        except orjson.JSONDecodeError:
            return load_cases(self._read)

    @property
    def digest(self) -> str:
        return self.manifest.digest

    @property
    def title(self) -> str:
        return self.manifest.title


def load_release(path: Path) -> LoadedRelease:
    """A verified release, or a UsageError saying why it cannot be used."""
    from trunchbull.release.files import ReleaseError, read_release
    from trunchbull.release.verify import verify

    if not exists(path):
        raise UsageError(f"{path}: no such release directory or .tar")
    try:
        release = read_release(path)
    except (ReleaseError, OSError) as err:
        raise UsageError(str(err)) from None
    problems = verify(release)
    if problems:
        shown = "\n  ".join(problems[:10])
        raise UsageError(f"{path} does not verify, so it cannot be used:\n  {shown}")
    manifest = release.manifest
    if manifest.protocol_version != PROTOCOL_VERSION:
        raise UsageError(
            f"{path}: release protocolVersion {manifest.protocol_version!r} is not supported "
            f"(expected {PROTOCOL_VERSION})"
        )
    return LoadedRelease(path, manifest, release.files, release)


@dataclass(frozen=True)
class RuntimeLayout:
    """Where the release's bundles are on disk for Node, and every path a
    sandboxed worker may read to import them."""

    modules_dir: Path
    read_paths: list[Path]

    def bundle(self, module: str) -> Path | None:
        """The file of a release module name (`modules/<sha256>.mjs`); None when it is not one."""
        name = module.split("/", 1)[1] if module.startswith("modules/") else None
        if not name or "/" in name:
            return None
        return self.modules_dir / name


def runtime_layout(release: LoadedRelease, workdir: Path) -> RuntimeLayout:
    """With runtime dependencies, the bundles are copied into `workdir` beside
    a symlink to the installed node_modules (installed once per lockfile into
    the content-addressed dependency cache, as at build time); a release
    directory without dependencies is used in place."""
    deps = release.manifest.dependencies
    if release.path.is_dir() and not deps:
        modules = (release.path / MODULES_DIR).resolve()
        if modules.is_dir():
            return RuntimeLayout(modules, [modules])
    target = workdir / MODULES_DIR
    target.mkdir(parents=True)
    for name, data in release.files.items():
        if name.startswith(f"{MODULES_DIR}/"):
            (workdir / name).write_bytes(data)
    read = [workdir.resolve()]
    if deps:
        from trunchbull.node.dependencies import Dependencies, install
        from trunchbull.node.toolchain import toolchain

        pkg_dir = workdir / "package"
        pkg_dir.mkdir()
        package_json = deps.get("packageJson") or "package.json"
        lockfile = deps.get("lockfile")
        for member in (package_json, lockfile):
            if member:
                (pkg_dir / Path(member).name).write_bytes(release.files[member])
        installed = install(
            Dependencies(pkg_dir / Path(package_json).name, pkg_dir / Path(lockfile).name if lockfile else None),
            toolchain(),
        )
        os.symlink(installed / "node_modules", workdir / "node_modules")
        read.append(installed.resolve())
    return RuntimeLayout(target.resolve(), read)
