"""The pinned Node toolchain and the Trunchbull core, as Pants-managed inputs.

* `NodeToolchain`: `npm ci` of the toolchain lockfile (Node 22, esbuild,
  @babel/parser, the AI SDK) in a sandboxed, cached process. Its output
  digest is linked into every Node process with `immutable_input_digests`
  (materialized once, not copied per sandbox). The Node binary is part of the
  digest, so its fingerprint is part of every cache key.
* `TrunchbullCore`: a VenvPex of the core's third-party requirements (orjson,
  polars, jsonschema), with the core's sources shipped beside it
  (`PEX_EXTRA_SYS_PATH`), so editing a `.py` file does not rebuild the PEX.
* `CoreProcess` -> `Process`: one run of `python -m trunchbull.steps ...`
  with both of the above.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Iterable, Mapping

from pants.backend.python.util_rules.pex import VenvPex, VenvPexProcess
from pants.backend.python.util_rules.pex_from_targets import PexFromTargetsRequest
from pants.backend.python.util_rules.python_sources import (
    PythonSourceFilesRequest,
    StrippedPythonSourceFiles,
)
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.core.util_rules.system_binaries import (
    BashBinary,
    BinaryPathRequest,
    BinaryPaths,
    BinaryPathTest,
    LnBinary,
    MkdirBinary,
)
from pants.engine.env_vars import EnvironmentVars, EnvironmentVarsRequest
from pants.engine.addresses import Addresses, UnparsedAddressInputs
from pants.engine.fs import AddPrefix, Digest, DigestSubset, MergeDigests, PathGlobs, RemovePrefix
from pants.engine.process import Process, ProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import SourcesField, Targets, TransitiveTargets, TransitiveTargetsRequest
from pants.option.global_options import GlobalOptions
from pants.util.logging import LogLevel

from trunchbull_pants.subsystems import TrunchbullSubsystem

TOOLCHAIN_DIR = "__trunchbull_toolchain"
CORE_DIR = "__trunchbull_core"
NODE = f"{TOOLCHAIN_DIR}/node_modules/.bin/node"
NPM_CACHE = "trunchbull_npm"


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
    """`npm ci` of one lockfile directory: `digest` holds `package.json` and
    the lockfile at its root. The result is the `node_modules` directory."""

    digest: Digest
    description: str
    # With the pinned toolchain's Node first on PATH (a benchmark's install
    # scripts then see the same Node as the compile steps).
    use_pinned_node: bool = False
    # Without a lockfile: `npm install` (the release records it as not locked).
    locked: bool = True


@dataclass(frozen=True)
class NpmInstallResult:
    node_modules: Digest  # holds `node_modules/...`


@dataclass(frozen=True)
class NodeToolchain:
    digest: Digest  # holds node_modules/.bin/node, esbuild, ...


@dataclass(frozen=True)
class ToolchainRequest:
    pass


@dataclass(frozen=True)
class CoreRequest:
    pass


@dataclass(frozen=True)
class TrunchbullCore:
    pex: VenvPex
    sources: Digest  # the stripped core sources under CORE_DIR/


@dataclass(frozen=True)
class CoreProcess:
    """Run `python -m trunchbull.steps <argv>` in a sandbox holding
    `input_digest`, with the toolchain at `TOOLCHAIN_DIR` and the core."""

    argv: tuple[str, ...]
    input_digest: Digest
    description: str
    output_files: tuple[str, ...] = ()
    output_directories: tuple[str, ...] = ()
    extra_env: tuple[tuple[str, str], ...] = ()
    extra_immutable_input_digests: tuple[tuple[str, Digest], ...] = ()
    timeout_seconds: int | None = None
    level: LogLevel = LogLevel.DEBUG
    # (flag, directory): `flag <real path of directory>` is appended to argv. For
    # immutable inputs: Node's permission model checks real paths, and the
    # real path of an immutable input is outside the sandbox.
    realpath_args: tuple[tuple[str, str], ...] = ()
    # (link, directory): before the step runs, `link` is made a symlink to the
    # real path of `directory` (an immutable input). Node's permission model
    # reads every symlink on the way to a file, so a link straight to the real
    # path (no intermediate sandbox symlink) is what a read path can allow.
    # Made at run time, so the cache key holds only the two fixed paths.
    realpath_links: tuple[tuple[str, str], ...] = ()

    @classmethod
    def create(
        cls,
        argv: Iterable[str],
        *,
        input_digest: Digest,
        description: str,
        output_files: Iterable[str] = (),
        output_directories: Iterable[str] = (),
        extra_env: Mapping[str, str] | None = None,
        immutable_input_digests: Mapping[str, Digest] | None = None,
        timeout_seconds: int | None = None,
        level: LogLevel = LogLevel.DEBUG,
        realpath_args: Iterable[tuple[str, str]] = (),
        realpath_links: Iterable[tuple[str, str]] = (),
    ) -> "CoreProcess":
        return cls(
            tuple(argv),
            input_digest,
            description,
            tuple(output_files),
            tuple(output_directories),
            tuple(sorted((extra_env or {}).items())),
            tuple(sorted((immutable_input_digests or {}).items())),
            timeout_seconds,
            level,
            tuple(realpath_args),
            tuple(realpath_links),
        )


@rule(desc="Find node and npm", level=LogLevel.DEBUG)
async def find_system_node(subsystem: TrunchbullSubsystem) -> SystemNode:
    env = await Get(EnvironmentVars, EnvironmentVarsRequest(["PATH"]))
    search_path = []
    for entry in subsystem.bootstrap_search_path:
        if entry == "<PATH>":
            search_path.extend(p for p in env.get("PATH", "").split(os.pathsep) if p)
        else:
            search_path.append(entry)
    node_paths, npm_paths = await MultiGet(
        Get(
            BinaryPaths,
            BinaryPathRequest(
                binary_name="node",
                search_path=search_path,
                test=BinaryPathTest(["--version"], fingerprint_stdout=True),
            ),
        ),
        Get(
            BinaryPaths,
            BinaryPathRequest(
                # npm is a `#!/usr/bin/env node` script: it cannot run in the
                # empty-environment test sandbox, so it is found, not tested.
                binary_name="npm",
                search_path=search_path,
            ),
        ),
    )
    node = node_paths.first_path_or_raise(
        BinaryPathRequest(binary_name="node", search_path=search_path),
        rationale="install the pinned Trunchbull Node toolchain (`[trunchbull].toolchain_lockfile`)",
    )
    npm = npm_paths.first_path_or_raise(
        BinaryPathRequest(binary_name="npm", search_path=search_path),
        rationale="install the pinned Trunchbull Node toolchain (`[trunchbull].toolchain_lockfile`)",
    )
    return SystemNode(node.path, npm.path, f"{node.fingerprint}:{npm.fingerprint}")


def _ca_env(global_options: GlobalOptions) -> dict[str, str]:
    ca = global_options.ca_certs_path
    return {"NODE_EXTRA_CA_CERTS": ca} if ca else {}


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
    if request.use_pinned_node:
        toolchain = await Get(NodeToolchain, ToolchainRequest())
        immutable[TOOLCHAIN_DIR] = toolchain.digest
        path = f"{{chroot}}/{TOOLCHAIN_DIR}/node_modules/.bin:{path}"
    script = (
        'export HOME="$PWD/.home" npm_config_cache="$PWD/.npm-cache" '
        'PATH="${PATH//\\{chroot\\}/$PWD}"; '
        f'exec npm {"ci" if request.locked else "install"} '
        '--no-audit --no-fund --loglevel=error --no-update-notifier'
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
                **_ca_env(global_options),
            },
            append_only_caches={NPM_CACHE: ".npm-cache"},
            timeout_seconds=subsystem.install_timeout,
            level=LogLevel.DEBUG,
        ),
    )
    return NpmInstallResult(result.output_digest)


@rule(desc="Install the pinned Node toolchain", level=LogLevel.DEBUG)
async def install_toolchain(_: ToolchainRequest, subsystem: TrunchbullSubsystem) -> NodeToolchain:
    targets = await Get(
        Targets,
        UnparsedAddressInputs(
            [subsystem.toolchain_lockfile],
            owning_address=None,
            description_of_origin="the option `[trunchbull].toolchain_lockfile`",
        ),
    )
    sources = await Get(
        SourceFiles, SourceFilesRequest([tgt.get(SourcesField) for tgt in targets])
    )
    lock_dirs = {
        f.rsplit("/", 1)[0] if "/" in f else ""
        for f in sources.files
        if f.endswith("package-lock.json")
    }
    if len(lock_dirs) != 1:
        raise ValueError(
            f"`[trunchbull].toolchain_lockfile` ({subsystem.toolchain_lockfile}) must own exactly "
            f"one package-lock.json (with its package.json), found: {sorted(lock_dirs)}"
        )
    lock_dir = lock_dirs.pop()
    digest = sources.snapshot.digest
    if lock_dir:
        digest = await Get(
            Digest,
            DigestSubset(
                digest, PathGlobs([f"{lock_dir}/package.json", f"{lock_dir}/package-lock.json"])
            ),
        )
        digest = await Get(Digest, RemovePrefix(digest, lock_dir))
    installed = await Get(
        NpmInstallResult,
        NpmInstallRequest(digest, description="Install the pinned Node toolchain (npm ci)"),
    )
    return NodeToolchain(installed.node_modules)


@rule(desc="Build the Trunchbull core PEX", level=LogLevel.DEBUG)
async def build_core(_: CoreRequest, subsystem: TrunchbullSubsystem) -> TrunchbullCore:
    addresses = await Get(
        Addresses,
        UnparsedAddressInputs(
            [subsystem.core], owning_address=None, description_of_origin="`[trunchbull].core`"
        ),
    )
    transitive = await Get(TransitiveTargets, TransitiveTargetsRequest(addresses))
    pex, sources = await MultiGet(
        Get(
            VenvPex,
            PexFromTargetsRequest(
                addresses,
                output_filename="trunchbull-core.pex",
                internal_only=True,
                include_source_files=False,
            ),
        ),
        Get(
            StrippedPythonSourceFiles,
            PythonSourceFilesRequest(transitive.closure, include_resources=True),
        ),
    )
    core_sources = await Get(
        Digest, AddPrefix(sources.stripped_source_files.snapshot.digest, CORE_DIR)
    )
    return TrunchbullCore(pex, core_sources)


@rule(level=LogLevel.DEBUG)
async def core_process(
    request: CoreProcess,
    global_options: GlobalOptions,
    bash: BashBinary,
    mkdir: MkdirBinary,
    ln: LnBinary,
) -> Process:
    core, toolchain = await MultiGet(
        Get(TrunchbullCore, CoreRequest()), Get(NodeToolchain, ToolchainRequest())
    )
    input_digest = await Get(Digest, MergeDigests([request.input_digest, core.sources]))
    env = {
        "PEX_EXTRA_SYS_PATH": CORE_DIR,
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        **_ca_env(global_options),
        **dict(request.extra_env),
    }
    process = await Get(
        Process,
        VenvPexProcess(
            core.pex,
            argv=("-m", "trunchbull.steps", *request.argv),
            description=request.description,
            input_digest=input_digest,
            extra_env=env,
            output_files=request.output_files or None,
            output_directories=request.output_directories or None,
            timeout_seconds=request.timeout_seconds,
            level=request.level,
        ),
    )
    # The toolchain (and other immutable inputs) by their real paths: Node's
    # permission model (inspection of user code) checks real paths. The argv
    # stays the same on every machine, so the cache key does too.
    script = f'export TRUNCHBULL_TOOLCHAIN="$(cd {TOOLCHAIN_DIR} && pwd -P)"; '
    for link, directory in request.realpath_links:
        parent = os.path.dirname(link)
        script += (f"{mkdir.path} -p {parent} && " if parent else "") + (
            f'{ln.path} -s "$(cd {directory} && pwd -P)" {link} || exit 2; '
        )
    for flag, directory in request.realpath_args:
        script += f'set -- "$@" {flag} "$(cd {directory} && pwd -P)"; '
    script += 'exec "$@"'
    return dataclasses.replace(
        process,
        argv=(bash.path, "-c", script, "trunchbull-step", *process.argv),
        immutable_input_digests={
            **process.immutable_input_digests,
            TOOLCHAIN_DIR: toolchain.digest,
            **dict(request.extra_immutable_input_digests),
        },
    )


def rules():
    return collect_rules()
