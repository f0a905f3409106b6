"""`npm ci` of one lockfile directory in a sandboxed, cached process, with the `node` and `npm`
found on `[trunchbull].bootstrap_search_path` (only installs use them; compile steps run the
pinned Node)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from pants.core.util_rules.system_binaries import BashBinary, BinaryPathRequest, BinaryPaths, BinaryPathTest
from pants.engine.env_vars import EnvironmentVars, EnvironmentVarsRequest
from pants.engine.fs import Digest
from pants.engine.process import Process, ProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.option.global_options import GlobalOptions
from pants.util.logging import LogLevel

from trunchbull_pants.subsystems import TrunchbullSubsystem

NPM_CACHE = "trunchbull_npm"
# Where an install that runs with the pinned Node links the toolchain in (see `pinned_node`).
PINNED_NODE_DIR = "__trunchbull_toolchain"


@dataclass(frozen=True)
class SystemNode:
    """The `node` + `npm` found on the search path: used only to run `npm ci`."""

    node: str
    npm: str
    fingerprint: str

    @property
    def path_env(self) -> str:
        dirs = []
        for binary in (self.node, self.npm):
            parent = binary.rsplit("/", 1)[0]
            if parent not in dirs:
                dirs.append(parent)
        return ":".join(dirs)


@dataclass(frozen=True)
class NpmInstallRequest:
    """`npm ci` of one lockfile directory: `digest` holds `package.json` and the lockfile at its
    root. The result is the `node_modules` directory."""

    digest: Digest
    description: str
    # An installed toolchain whose `node_modules/.bin` goes first on PATH (a benchmark's install
    # scripts then see the same Node as the compile steps), or None.
    pinned_node: Digest | None = None
    # Without a lockfile: `npm install` (the release records it as not locked).
    locked: bool = True


@dataclass(frozen=True)
class NpmInstallResult:
    node_modules: Digest  # holds `node_modules/...`


def ca_env(global_options: GlobalOptions) -> dict[str, str]:
    """Node honours the CA bundle Pants is configured with (`[GLOBAL].ca_certs_path`)."""
    ca = global_options.ca_certs_path
    return {"NODE_EXTRA_CA_CERTS": ca} if ca else {}


@rule(desc="Find node and npm", level=LogLevel.DEBUG)
async def find_system_node(subsystem: TrunchbullSubsystem) -> SystemNode:
    env = await Get(EnvironmentVars, EnvironmentVarsRequest(["PATH"]))
    search_path: list[str] = []
    for entry in subsystem.bootstrap_search_path:
        if entry == "<PATH>":
            search_path.extend(p for p in env.get("PATH", "").split(os.pathsep) if p)
        else:
            search_path.append(entry)
    node_request = BinaryPathRequest(
        binary_name="node",
        search_path=search_path,
        test=BinaryPathTest(["--version"], fingerprint_stdout=True),
    )
    # npm is a `#!/usr/bin/env node` script: it cannot run in the empty-environment test
    # sandbox, so it is found, not tested.
    npm_request = BinaryPathRequest(binary_name="npm", search_path=search_path)
    node_paths, npm_paths = await MultiGet(
        Get(BinaryPaths, BinaryPathRequest, node_request), Get(BinaryPaths, BinaryPathRequest, npm_request)
    )
    rationale = "install the pinned Trunchbull Node toolchain (`[trunchbull].toolchain_lockfile`)"
    node = node_paths.first_path_or_raise(node_request, rationale=rationale)
    npm = npm_paths.first_path_or_raise(npm_request, rationale=rationale)
    return SystemNode(node.path, npm.path, f"{node.fingerprint}:{npm.fingerprint}")


@rule(desc="npm ci", level=LogLevel.DEBUG)
async def npm_install(
    request: NpmInstallRequest,
    system: SystemNode,
    bash: BashBinary,
    subsystem: TrunchbullSubsystem,
    global_options: GlobalOptions,
) -> NpmInstallResult:
    immutable: dict[str, Digest] = {}
    path = system.path_env
    if request.pinned_node is not None:
        immutable[PINNED_NODE_DIR] = request.pinned_node
        path = f"{{chroot}}/{PINNED_NODE_DIR}/node_modules/.bin:{path}"
    script = (
        'export HOME="$PWD/.home" npm_config_cache="$PWD/.npm-cache" '
        'PATH="${PATH//\\{chroot\\}/$PWD}"; '
        f'exec npm {"ci" if request.locked else "install"} '
        "--no-audit --no-fund --loglevel=error --no-update-notifier"
    )
    result = await Get(
        ProcessResult,
        Process(
            argv=(bash.path, "-c", script),
            input_digest=request.digest,
            immutable_input_digests=immutable,
            description=request.description,
            output_directories=("node_modules",),
            env={
                "PATH": path,
                # Not read by npm: makes a new system Node a new cache key.
                "TRUNCHBULL_SYSTEM_NODE": system.fingerprint,
                **ca_env(global_options),
            },
            append_only_caches={NPM_CACHE: ".npm-cache"},
            timeout_seconds=subsystem.install_timeout,
            level=LogLevel.DEBUG,
        ),
    )
    return NpmInstallResult(result.output_digest)


def rules():
    return collect_rules()
