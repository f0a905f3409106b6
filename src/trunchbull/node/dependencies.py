"""A benchmark's npm dependencies (its package.json and lockfile), installed
from the lockfile into a content-addressed cache directory: at build time for
bundling, and at run time for a release that records them."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.common.userfiles import read_file
from trunchbull.node.installer import InstallFailed, install_into, is_installed, with_node_on_path
from trunchbull.node.toolchain import Toolchain, cache_root

LOCKFILES = {
    "package-lock.json": ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
    "npm-shrinkwrap.json": ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
    "pnpm-lock.yaml": ["pnpm", "install", "--frozen-lockfile"],
    "yarn.lock": ["yarn", "install", "--frozen-lockfile"],
}
UNLOCKED_INSTALL = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]


@dataclass(frozen=True)
class Dependencies:
    package_json: Path
    lockfile: Path | None

    @property
    def locked(self) -> bool:
        return self.lockfile is not None

    def files(self) -> list[Path]:
        return [self.package_json, *([self.lockfile] if self.lockfile else [])]

    def contents(self) -> dict[str, bytes]:
        """Each file's name and bytes (raises FileProblem)."""
        return {path.name: read_file(path) for path in self.files()}

    def key(self, tc: Toolchain) -> str:
        digest = hashlib.sha256()
        for name, data in self.contents().items():
            digest.update(name.encode() + b"\0" + data + b"\0")
        digest.update(str(tc.root).encode())
        return digest.hexdigest()[:24]


def install(deps: Dependencies, tc: Toolchain) -> Path:
    """Install once per (package.json, lockfile, toolchain); return the directory
    holding node_modules, where bundles are placed so their imports resolve."""
    target = cache_root() / "deps" / deps.key(tc)
    if is_installed(target):
        return target
    command = LOCKFILES[deps.lockfile.name] if deps.lockfile else UNLOCKED_INSTALL
    if not shutil.which(command[0]):
        source = deps.lockfile.name if deps.lockfile else "package.json"
        raise UsageError(f"{command[0]} is needed to install the benchmark's dependencies from {source}")
    try:
        return install_into(target, deps.contents(), command, env=with_node_on_path(tc.node))
    except InstallFailed as failed:
        raise UsageError(
            f"installing dependencies from {deps.package_json} failed ({' '.join(command)}):\n{failed.output}"
        ) from None
