"""The pinned Node toolchain (Node 22, esbuild, @babel/parser, the AI SDK): `npm ci` of its
lockfile in a sandboxed, cached process.

The lockfile is the one shipped in this plugin (`trunchbull_pants/toolchain/`), or the `files`
target that `[trunchbull].toolchain_lockfile` names. The installed `node_modules` is linked into
every Node process with `immutable_input_digests` (materialized once, not copied per sandbox).
The Node binary is part of the digest, so its fingerprint is part of every cache key.
"""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass

from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.engine.addresses import UnparsedAddressInputs
from pants.engine.fs import CreateDigest, Digest, DigestSubset, FileContent, PathGlobs, RemovePrefix, Snapshot
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import SourcesField, Targets
from pants.util.logging import LogLevel

from trunchbull_pants.npm import PINNED_NODE_DIR, NpmInstallRequest, NpmInstallResult
from trunchbull_pants.subsystems import TrunchbullSubsystem

TOOLCHAIN_DIR = PINNED_NODE_DIR
NODE = f"{TOOLCHAIN_DIR}/node_modules/.bin/node"
LOCKFILE_NAMES = ("package.json", "package-lock.json")


@dataclass(frozen=True)
class NodeToolchain:
    digest: Digest  # holds node_modules/.bin/node, esbuild, ...


@dataclass(frozen=True)
class ToolchainRequest:
    pass


class ToolchainLockfileError(ValueError):
    pass


def shipped_lockfile() -> list[FileContent]:
    """The toolchain's package.json + package-lock.json, as resources of this package."""
    files = []
    for name in LOCKFILE_NAMES:
        content = pkgutil.get_data(__name__.rsplit(".", 1)[0], f"toolchain/{name}")
        if content is None:
            raise ToolchainLockfileError(
                f"trunchbull_pants/toolchain/{name} is missing from the plugin: set "
                "`[trunchbull].toolchain_lockfile` to a `files` target holding the toolchain's "
                "package.json and package-lock.json"
            )
        files.append(FileContent(name, content))
    return files


async def _configured_lockfile(address: str) -> Digest:
    targets = await Get(
        Targets,
        UnparsedAddressInputs(
            [address], owning_address=None, description_of_origin="the option `[trunchbull].toolchain_lockfile`"
        ),
    )
    sources = await Get(SourceFiles, SourceFilesRequest([tgt.get(SourcesField) for tgt in targets]))
    lock_dirs = {f.rsplit("/", 1)[0] if "/" in f else "" for f in sources.files if f.endswith("package-lock.json")}
    if len(lock_dirs) != 1:
        raise ToolchainLockfileError(
            f"`[trunchbull].toolchain_lockfile` ({address}) must own exactly one package-lock.json "
            f"(with its package.json), found: {sorted(lock_dirs)}"
        )
    lock_dir = lock_dirs.pop()
    digest = sources.snapshot.digest
    if lock_dir:
        digest = await Get(Digest, DigestSubset(digest, PathGlobs([f"{lock_dir}/{n}" for n in LOCKFILE_NAMES])))
        digest = await Get(Digest, RemovePrefix(digest, lock_dir))
    return digest


@rule(desc="Install the pinned Node toolchain", level=LogLevel.DEBUG)
async def install_toolchain(_: ToolchainRequest, subsystem: TrunchbullSubsystem) -> NodeToolchain:
    if subsystem.toolchain_lockfile:
        lockfile = await _configured_lockfile(subsystem.toolchain_lockfile)
    else:
        lockfile = await Get(Digest, CreateDigest(shipped_lockfile()))
    installed = await Get(
        NpmInstallResult, NpmInstallRequest(lockfile, description="Install the pinned Node toolchain (npm ci)")
    )
    # A Snapshot's digest carries its tree in memory. Every Process that links the toolchain in
    # needs that tree for its input digest; a digest read back from the process cache (a fresh
    # pantsd, CI) would otherwise be loaded from the store again for each of them (~70 ms each
    # for the toolchain's 5,000 files: 12 s of a 150-process build).
    snapshot = await Get(Snapshot, Digest, installed.node_modules)
    return NodeToolchain(snapshot.digest)


def rules():
    return collect_rules()
