"""A benchmark's npm dependencies: the nearest `package.json` (+ lockfile) from the benchmark
root up to the build root, installed with `npm ci` (the pinned Node first on PATH) and shared by
every benchmark with the same lockfile."""

from __future__ import annotations

import os.path
from dataclasses import dataclass

from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior
from pants.engine.fs import EMPTY_DIGEST, Digest, DigestSubset, PathGlobs, RemovePrefix, Snapshot
from pants.engine.rules import Get, collect_rules, rule
from pants.util.logging import LogLevel

from trunchbull_pants.npm import NpmInstallRequest, NpmInstallResult
from trunchbull_pants.toolchain import NodeToolchain, ToolchainRequest

LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock")
DEPS_DIR = "__tb_deps"
DEPS_MOUNT = "__tb_nm"


@dataclass(frozen=True)
class BenchmarkDependenciesRequest:
    root: str


@dataclass(frozen=True)
class BenchmarkDependencies:
    files: Digest  # package.json + lockfile at their buildroot paths
    node_modules: Digest  # `node_modules/...`, or EMPTY_DIGEST when there are no dependencies
    present: bool

    def layout(self) -> dict:
        """The installed `node_modules`, linked (not copied) into a step's sandbox: keyword
        arguments of `CoreProcess.create`.

        The install is an immutable input at `__tb_nm/` (materialized once, shared by every
        process) and `__tb_deps/node_modules` is made a symlink to its real path when the step
        starts, so `__tb_deps/` stays a writable sandbox directory (bundles, transformer
        workspaces) and a bundle under it resolves package imports through the link. Node's
        permission model checks real paths and reads each symlink on the way: the core allows a
        read path's real path too, so `--deps-dir` names the link (or its parent, for
        transform-run, which reads `<deps-dir>/node_modules`). The link and the mount point are the
        same on every machine: cache keys are stable."""
        if not self.present:
            return {}
        return {
            "immutable_input_digests": {DEPS_MOUNT: self.node_modules},
            "realpath_links": [(f"{DEPS_DIR}/node_modules", f"{DEPS_MOUNT}/node_modules")],
        }


@rule(desc="Find the benchmark's npm dependencies", level=LogLevel.DEBUG)
async def benchmark_dependencies(request: BenchmarkDependenciesRequest) -> BenchmarkDependencies:
    directories = []
    current = request.root
    while True:
        directories.append(current)
        if not current:
            break
        current = os.path.dirname(current)
    globs = [os.path.join(d, name) for d in directories for name in ("package.json", *LOCKFILES)]
    snapshot = await Get(Snapshot, PathGlobs(globs, glob_match_error_behavior=GlobMatchErrorBehavior.ignore))
    present = set(snapshot.files)
    for directory in directories:
        package_json = os.path.join(directory, "package.json")
        if package_json not in present:
            continue
        lock = next(
            (os.path.join(directory, n) for n in LOCKFILES if os.path.join(directory, n) in present),
            None,
        )
        if lock and not lock.endswith(("package-lock.json", "npm-shrinkwrap.json")):
            raise ValueError(
                f"{lock}: the Trunchbull Pants rules install dependencies with npm; "
                "pnpm and yarn lockfiles are supported by the CLI only"
            )
        files = await Get(Digest, DigestSubset(snapshot.digest, PathGlobs([package_json, *([lock] if lock else [])])))
        at_root = await Get(Digest, RemovePrefix(files, directory)) if directory else files
        toolchain = await Get(NodeToolchain, ToolchainRequest())
        installed = await Get(
            NpmInstallResult,
            NpmInstallRequest(
                at_root,
                description=f"Install the npm dependencies of {package_json}" + ("" if lock else " (not locked)"),
                pinned_node=toolchain.digest,
                locked=lock is not None,
            ),
        )
        # In memory with its tree, like the toolchain (see toolchain.py): every bundle-inspect and
        # transform-run process links it in.
        node_modules = await Get(Snapshot, Digest, installed.node_modules)
        return BenchmarkDependencies(files, node_modules.digest, True)
    return BenchmarkDependencies(EMPTY_DIGEST, EMPTY_DIGEST, False)


def rules():
    return collect_rules()
