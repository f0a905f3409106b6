"""The one npm installer: a package.json and its lockfile installed into a
content-addressed cache directory, used by the pinned toolchain, a
benchmark's dependencies, the local-model runtime and the TypeScript
compiler of `check --types`.

The install runs in a staging directory beside the target and is renamed
into place only once complete (with its `.installed` marker), so that an
interrupted or failed install never leaves a half-installed tree that a
later run would trust, and two processes installing the same key at once
both end with the same complete directory.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Callable

from trunchbull.common import lifetime

MARKER = ".installed"
ERROR_TAIL_CHARS = 3000
LOCK_FILES = ("package.json", "package-lock.json")


class InstallFailed(Exception):
    """The install command failed: `output` is the end of what it printed."""

    def __init__(self, output: str):
        super().__init__(output)
        self.output = output


def pinned_lock(checkout_dir: str, package_dir: str) -> dict[str, bytes]:
    """A pinned package.json + package-lock.json of something installed on first use: the
    source checkout's third_party/<checkout_dir>, or the copy installed as package data
    trunchbull/<package_dir> (pyproject.toml, src/trunchbull/BUILD)."""
    directory = Path(__file__).resolve().parents[3] / "third_party" / checkout_dir
    if not (directory / "package-lock.json").is_file():
        directory = Path(__file__).resolve().parents[1] / package_dir
    return {name: (directory / name).read_bytes() for name in LOCK_FILES}


def lock_key(files: dict[str, bytes]) -> str:
    """The cache key of a pinned lock: its files' content, nothing of where they are."""
    digest = hashlib.sha256()
    for name in LOCK_FILES:
        digest.update(name.encode() + b"\0" + files[name] + b"\0")
    return digest.hexdigest()[:16]


def is_installed(target: Path) -> bool:
    return (target / MARKER).exists()


def install_into(
    target: Path,
    files: dict[str, bytes],
    command: list[str],
    *,
    env: dict[str, str] | None = None,
    check: Callable[[Path], None] | None = None,
) -> Path:
    """Install `files` (package.json, lockfile) with `command` into `target`,
    unless it is installed already; `check` runs on the staged tree before
    it is moved into place (it may raise to refuse it). InstallFailed when
    the command fails."""
    if is_installed(target):
        return target
    staging = target.with_name(f"{target.name}.tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        result = lifetime.run(command, cwd=staging, env=env)
        if result.returncode != 0:
            raise InstallFailed((result.stderr or result.stdout or "").strip()[-ERROR_TAIL_CHARS:])
        if check is not None:
            check(staging)
        (staging / MARKER).write_text("")
        staging.rename(target)
    except OSError:  # another process installed it first
        if not is_installed(target):
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # also when interrupted: no half-installed tree stays
    return target


def with_node_on_path(node: Path) -> dict[str, str]:
    """The environment npm runs in: ours, with the pinned Node first on PATH.

    npm reads its global config (`<prefix>/etc/npmrc`, where a machine keeps its registry's CA
    bundle or proxy) from beside the Node that runs it, so the pinned Node would hide the
    machine's: it stays the one of the Node found on PATH before, unless npm is told otherwise."""
    env = dict(os.environ)
    path = env.get("PATH", "")
    if not any(key.lower() == "npm_config_globalconfig" for key in env):
        machine_node = shutil.which("node", path=path)
        if machine_node is not None:  # npm's own rule: the prefix is the directory above node's
            env["npm_config_globalconfig"] = str(Path(machine_node).resolve().parent.parent / "etc" / "npmrc")
    env["PATH"] = f"{node.parent}{os.pathsep}{path}"
    return env
