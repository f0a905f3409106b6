"""The Trunchbull core (Python 3.11+) as a Pants-resolved tool, and one run of one of its
compile steps (`CoreProcess` -> `Process`).

* Installed (the default): a VenvPex of `[trunchbull]`'s requirement (`trunchbull==<version>`)
  from the lockfile shipped in the plugin or from `install_from_resolve`, as Pants installs its
  own Python tools.
* From source (`[trunchbull].core`): a VenvPex of the core target's third-party requirements,
  with its sources shipped beside it (`PEX_EXTRA_SYS_PATH`), so a source edit does not rebuild it.

Either way the PEX selects its interpreter itself (a Python 3.11+ on `[python-bootstrap]`'s
search path) instead of Pants asking the pex CLI for one up front: that lookup is a process that
runs again after every pantsd restart (~5 s), while a built PEX is a cache hit.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Iterable, Mapping

from pants.backend.python.subsystems.setup import PythonSetup
from pants.backend.python.util_rules.pex import PexLayout, PexRequest, VenvPex, VenvPexProcess
from pants.backend.python.util_rules.pex_from_targets import PexFromTargetsRequest
from pants.backend.python.util_rules.python_sources import PythonSourceFilesRequest, StrippedPythonSourceFiles
from pants.core.util_rules.system_binaries import BashBinary, LnBinary, MkdirBinary
from pants.engine.addresses import Addresses, UnparsedAddressInputs
from pants.engine.fs import EMPTY_DIGEST, AddPrefix, Digest, MergeDigests
from pants.engine.process import Process
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import TransitiveTargets, TransitiveTargetsRequest
from pants.option.global_options import GlobalOptions
from pants.util.frozendict import FrozenDict
from pants.util.logging import LogLevel

from trunchbull_pants.npm import ca_env
from trunchbull_pants.pex_cache import PexCacheRepaired, PexCacheRepairRequest
from trunchbull_pants.subsystems import TrunchbullSubsystem
from trunchbull_pants.toolchain import TOOLCHAIN_DIR, NodeToolchain, ToolchainRequest

CORE_DIR = "__trunchbull_core"

# Flags of the pex CLI for the core's PEX (measured on a cold machine, docs/pants.md):
# * `--pip-version vendored` (unless `[python].pip_version` is set): Pants' default pip, 23.1.2,
#   is not inside the pex CLI; on a cold machine pex first downloads and installs it (~5 s) before
#   resolving anything. The lockfile pins every distribution by hash (`--no-deps`), so the pip
#   that downloads them chooses nothing; pex 2.1.137's vendored pip runs on every interpreter that
#   pex itself runs on (3.11 here; it fails on 3.12+ regardless of the pip).
# * Not `--no-compress`, although storing polars' zip instead of deflating it saves ~10 s of a
#   cold build: pex 2.1.137 caches an uncompressed wheel zip inside the directory of the
#   compressed one, which then blocks every compressed PEX holding the same wheel (mypy's,
#   pytest's, a user's `pex_binary`) on that machine. pex_cache.py repairs what an earlier build
#   with the flag left.
VENDORED_PIP_ARGS = ("--pip-version", "vendored")
# Written by a step run with `errors_are_results` when the benchmark has errors (its exit code 1).
ERRORS_MARKER = "__tb_benchmark_has_errors"


@dataclass(frozen=True)
class CoreRequest:
    pass


@dataclass(frozen=True)
class TrunchbullCore:
    pex: VenvPex
    sources: Digest  # from source: the stripped core sources under CORE_DIR/; else empty


@dataclass(frozen=True)
class CoreProcess:
    """Run the core's `trunchbull.compile.steps <argv>` in a sandbox holding `input_digest`, with the
    toolchain at `TOOLCHAIN_DIR`."""

    argv: tuple[str, ...]
    input_digest: Digest
    description: str
    output_files: tuple[str, ...] = ()
    output_directories: tuple[str, ...] = ()
    extra_env: tuple[tuple[str, str], ...] = ()
    extra_immutable_input_digests: tuple[tuple[str, Digest], ...] = ()
    timeout_seconds: int | None = None
    level: LogLevel = LogLevel.DEBUG
    # (flag, directory): `flag <real path of directory>` is appended to argv. For immutable
    # inputs: Node's permission model checks real paths, and the real path of an immutable input
    # is outside the sandbox.
    realpath_args: tuple[tuple[str, str], ...] = ()
    # (link, directory): before the step runs, `link` is made a symlink to the real path of
    # `directory` (an immutable input). Node's permission model reads every symlink on the way to
    # a file, so a link straight to the real path (no intermediate sandbox symlink) is what a read
    # path can allow. Made at run time, so the cache key holds only the two fixed paths.
    realpath_links: tuple[tuple[str, str], ...] = ()
    # Exit code 1 (the benchmark has errors) is a result like success: the process exits 0 and
    # writes ERRORS_MARKER, so that Pants caches it (it caches only successful processes) and a
    # failing `check` or `package` is not recomputed. Exit code 2 (environment) stays a failure.
    errors_are_results: bool = False

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
        errors_are_results: bool = False,
    ) -> CoreProcess:
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
            errors_are_results,
        )


def _pex_args(python_setup: PythonSetup) -> tuple[str, ...]:
    pip = VENDORED_PIP_ARGS if python_setup.options.is_default("pip_version") else ()
    return pip


async def _core_from_source(address: str, subsystem: TrunchbullSubsystem, python_setup: PythonSetup) -> TrunchbullCore:
    addresses = await Get(
        Addresses,
        UnparsedAddressInputs([address], owning_address=None, description_of_origin="`[trunchbull].core`"),
    )
    transitive = await Get(TransitiveTargets, TransitiveTargetsRequest(addresses))
    pex, sources = await MultiGet(
        Get(
            VenvPex,
            PexFromTargetsRequest(
                addresses,
                output_filename="trunchbull-core.pex",
                internal_only=False,
                layout=PexLayout.PACKED,
                include_source_files=False,
                main=subsystem.main,
                additional_args=_pex_args(python_setup),
            ),
        ),
        Get(StrippedPythonSourceFiles, PythonSourceFilesRequest(transitive.closure, include_resources=True)),
    )
    core_sources = await Get(Digest, AddPrefix(sources.stripped_source_files.snapshot.digest, CORE_DIR))
    return TrunchbullCore(pex, core_sources)


@rule(desc="Build the Trunchbull core PEX", level=LogLevel.DEBUG)
async def build_core(_: CoreRequest, subsystem: TrunchbullSubsystem, python_setup: PythonSetup) -> TrunchbullCore:
    await Get(PexCacheRepaired, PexCacheRepairRequest())  # before pex reads its zip cache
    if subsystem.core:
        return await _core_from_source(subsystem.core, subsystem, python_setup)
    # The core's own interpreter constraints (Python 3.11+), unless it comes from a resolve and
    # they were not set: then the resolve's, as Pants does for its tools. (Pants would otherwise
    # apply the repository's `[python].interpreter_constraints` to the default lockfile too.)
    from_resolve = subsystem.install_from_resolve and subsystem.options.is_default("interpreter_constraints")
    request = subsystem.to_pex_request(
        interpreter_constraints=None if from_resolve else subsystem.interpreter_constraints
    )
    # Not `internal_only`: the PEX picks its interpreter from its constraints when it runs, so no
    # interpreter lookup has to run first (see the module docstring).
    request = dataclasses.replace(
        request,
        internal_only=False,
        layout=PexLayout.PACKED,
        additional_args=(*request.additional_args, *_pex_args(python_setup)),
    )
    pex = await Get(VenvPex, PexRequest, request)
    return TrunchbullCore(pex, EMPTY_DIGEST)


@rule(level=LogLevel.DEBUG)
async def core_process(
    request: CoreProcess,
    global_options: GlobalOptions,
    bash: BashBinary,
    mkdir: MkdirBinary,
    ln: LnBinary,
) -> Process:
    core, toolchain = await MultiGet(Get(TrunchbullCore, CoreRequest()), Get(NodeToolchain, ToolchainRequest()))
    input_digest = await Get(Digest, MergeDigests([request.input_digest, core.sources]))
    env = {
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        **({"PEX_EXTRA_SYS_PATH": CORE_DIR} if core.sources != EMPTY_DIGEST else {}),
        **ca_env(global_options),
        **dict(request.extra_env),
    }
    process = await Get(
        Process,
        VenvPexProcess(
            core.pex,
            argv=request.argv,
            description=request.description,
            input_digest=input_digest,
            extra_env=env,
            output_files=(*request.output_files, *([ERRORS_MARKER] if request.errors_are_results else [])) or None,
            output_directories=request.output_directories or None,
            timeout_seconds=request.timeout_seconds,
            level=request.level,
        ),
    )
    # The toolchain (and other immutable inputs) by their real paths: Node's permission model
    # (inspection of user code) checks real paths. The argv stays the same on every machine, so
    # the cache key does too.
    script = f'export TRUNCHBULL_TOOLCHAIN="$(cd {TOOLCHAIN_DIR} && pwd -P)"; '
    for link, directory in request.realpath_links:
        parent = os.path.dirname(link)
        script += (f"{mkdir.path} -p {parent} && " if parent else "") + (
            f'{ln.path} -s "$(cd {directory} && pwd -P)" {link} || exit 2; '
        )
    for flag, directory in request.realpath_args:
        script += f'set -- "$@" {flag} "$(cd {directory} && pwd -P)"; '
    if request.errors_are_results:
        script += f'"$@"; code=$?; if [ "$code" = 1 ]; then : > {ERRORS_MARKER}; exit 0; fi; exit "$code"'
    else:
        script += 'exec "$@"'
    return dataclasses.replace(
        process,
        argv=(bash.path, "-c", script, "trunchbull-step", *process.argv),
        immutable_input_digests=FrozenDict(
            {
                **process.immutable_input_digests,
                TOOLCHAIN_DIR: toolchain.digest,
                **dict(request.extra_immutable_input_digests),
            }
        ),
    )


def rules():
    return collect_rules()
