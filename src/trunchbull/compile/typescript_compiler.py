"""The TypeScript compiler of `check --types` (TypeScript 7, a native binary,
and Node's types), installed on first use from its own pinned lockfile
(third_party/npm-typescript) into a content-addressed cache directory,
CACHE/typescript/KEY, KEY the hash of the lock's files.

It is not part of the core toolchain: that one is installed by every
checkout and is an input of every compile step in Pants (and so of every
cache key and remote-cache upload), while only `check --types` runs
TypeScript. npm installs only this platform's native build of it (the
others are optional dependencies for other platforms), and runs no install
script. The install is staged and renamed into place when complete
(node/installer.py): an interrupted one leaves nothing, two at once both
end with the same directory.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.invocation import command
from trunchbull.node.installer import (
    InstallFailed,
    install_into,
    is_installed,
    lock_key,
    pinned_lock,
    with_node_on_path,
)
from trunchbull.node.toolchain import Toolchain, cache_root

INSTALL_COMMAND = ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
APPROXIMATE_SIZE = "about 35 MB"
# npm's error codes for a registry it cannot reach (or, with --offline, a package not in its cache)
UNREACHABLE = frozenset(
    {
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "ESOCKETTIMEDOUT",
        "ENETUNREACH",
        "EHOSTUNREACH",
        "ENOTCACHED",
    }
)
_NPM_CODE = re.compile(r"\bcode (E[A-Z_]+)\b")
_FAILED_REQUEST = re.compile(r"request to \S+ failed\S*[^\n]*")


@dataclass(frozen=True)
class TypeScript:
    """An installed TypeScript: the directory holding its node_modules."""

    root: Path

    @property
    def tsc(self) -> Path:
        return self.root / "node_modules" / "typescript" / "bin" / "tsc"

    @property
    def type_roots(self) -> Path:
        """Where Node's types (@types/node) are."""
        return self.root / "node_modules" / "@types"


def _lock() -> dict[str, bytes]:
    return pinned_lock("npm-typescript", "npm_typescript")


def version() -> str:
    """The pinned TypeScript version, as the lock's package.json names it."""
    return str(orjson.loads(_lock()["package.json"])["dependencies"]["typescript"])


def install_dir() -> Path:
    return cache_root() / "typescript" / lock_key(_lock())


def installed_typescript() -> TypeScript | None:
    target = install_dir()
    return TypeScript(target) if is_installed(target) else None


def typescript(tc: Toolchain) -> TypeScript:
    """The pinned TypeScript, installed on first use (a message on stderr says so).
    A UsageError when it cannot be installed, saying what to do."""
    found = installed_typescript()
    if found is not None:
        return found
    target = install_dir()
    pinned = version()
    wanted = f"TypeScript {pinned}"
    npm = shutil.which("npm")
    if not npm:
        raise UsageError(
            f"check --types: npm is required once, to install {wanted} into {target}; "
            "install npm (it comes with Node.js) and run again"
        )
    print(
        f"trunchbull: installing {wanted} for check --types into {target} (first use; {APPROXIMATE_SIZE})",
        file=sys.stderr,
    )
    try:
        install_into(
            target,
            _lock(),
            [npm, *INSTALL_COMMAND],
            env=with_node_on_path(tc.node),
            check=lambda staged: _check_staged(tc, TypeScript(staged), pinned),
        )
    except InstallFailed as failed:
        raise UsageError(_install_failure(wanted, target, failed.output)) from None
    return TypeScript(target)


def _install_failure(wanted: str, target: Path, output: str) -> str:
    codes = _NPM_CODE.findall(output)
    if not codes or codes[0] not in UNREACHABLE:
        return f"check --types: installing {wanted} into {target} failed (npm {' '.join(INSTALL_COMMAND)}):\n{output}"
    request = _FAILED_REQUEST.search(output)
    why = f"{codes[0]}: {request.group(0)[:300].rstrip('.')}" if request else codes[0]
    return (
        f"check --types: {wanted} is installed once, from the npm registry, and npm could not reach it ({why}).\n"
        "Connect to the network (or set npm's registry or proxy for this machine) and run again; offline, "
        f"copy {target} from a machine of the same OS and CPU where `check --types` has run. "
        f"`{command()} check` without --types does not need it."
    )


def _check_staged(tc: Toolchain, ts: TypeScript, pinned: str) -> None:
    """The installed compiler runs on this machine and is the pinned version."""
    result = lifetime.run([str(tc.node), str(ts.tsc), "--version"], cwd=ts.root, env=tc.base_env())
    said = (result.stdout or result.stderr or "").strip()
    if result.returncode != 0 or said != f"Version {pinned}":
        raise UsageError(
            f"check --types: the installed TypeScript {pinned} does not run on this machine "
            f"({sys.platform}): {said[-300:] or f'exit {result.returncode}'}"
        )
