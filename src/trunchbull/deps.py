"""The benchmark's npm dependencies: found from the nearest package.json and
installed from its lockfile into a content-addressed cache directory."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from trunchbull.diagnostics import UsageError
from trunchbull.toolchain import Toolchain, cache_root

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

    def key(self, tc: Toolchain) -> str:
        digest = hashlib.sha256()
        for path in self.files():
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        digest.update(str(tc.root).encode())
        return digest.hexdigest()[:24]


def find_dependencies(root: Path, repo_root: Path) -> Dependencies | None:
    for directory in (root, *root.parents):
        if (directory / "package.json").is_file():
            lock = next((directory / name for name in LOCKFILES if (directory / name).is_file()), None)
            return Dependencies(directory / "package.json", lock)
        if directory == repo_root:
            break
    return None


def install(deps: Dependencies, tc: Toolchain) -> Path:
    """Install once per (package.json, lockfile, toolchain); return the directory
    holding node_modules, where bundles are placed so their imports resolve."""
    target = cache_root() / "deps" / deps.key(tc)
    if (target / ".installed").exists():
        return target
    command = LOCKFILES[deps.lockfile.name] if deps.lockfile else UNLOCKED_INSTALL
    if not shutil.which(command[0]):
        source = deps.lockfile.name if deps.lockfile else "package.json"
        raise UsageError(f"{command[0]} is needed to install the benchmark's dependencies from {source}")
    staging = target.with_name(f"{target.name}.tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in deps.files():
        shutil.copyfile(path, staging / path.name)
    env = dict(os.environ)
    env["PATH"] = f"{tc.node.parent}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(command, cwd=staging, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise UsageError(f"installing dependencies from {deps.package_json} failed ({' '.join(command)}):\n"
                         f"{result.stderr.strip()[-3000:]}")
    (staging / ".installed").write_text("")
    try:
        staging.rename(target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return target
