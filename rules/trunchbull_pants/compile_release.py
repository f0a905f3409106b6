"""Compiling a `trunchbull_release`: the compiler's steps as Pants processes.

    config           1 process   static config + discovery (module files are empty
                                 placeholders: editing an eval does not re-run it)
    npm ci           1 per lockfile (shared by every benchmark using it)
    module steps     per module (steps.py): bundle-inspect, transform-run, expand
    assemble         1 process   release-wide checks, the release directory

Every process runs the core's `trunchbull.compile.steps` (core.py: the core PEX, the pinned Node
toolchain linked in), so Pants caches each one locally and in a REAPI remote cache, and the
release is byte-identical to `trunchbull build` of the same root.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior
from pants.engine.addresses import Address
from pants.engine.fs import (
    EMPTY_DIGEST,
    AddPrefix,
    CreateDigest,
    Digest,
    DigestContents,
    DigestSubset,
    FileContent,
    MergeDigests,
    PathGlobs,
    RemovePrefix,
)
from pants.engine.process import FallibleProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import WrappedTarget, WrappedTargetRequest
from pants.util.logging import LogLevel

from trunchbull_pants.benchmark_deps import BenchmarkDependencies, BenchmarkDependenciesRequest
from trunchbull_pants.closure import ClosureRequest, ClosureSources
from trunchbull_pants.core import ERRORS_MARKER, CoreProcess
from trunchbull_pants.failures import ReportedFailure
from trunchbull_pants.generate import ReleaseFiles, ReleaseFilesRequest
from trunchbull_pants.steps import OUT, ModuleStep, ModuleStepResult, in_root, root_arg
from trunchbull_pants.target_types import CONFIG_NAMES, MODULE_EXTENSIONS, TrunchbullReleaseSourcesField

RELEASE_DIR = "__tb_release"


@dataclass(frozen=True)
class CompileReleaseRequest:
    address: Address
    tar: bool = False


@dataclass(frozen=True)
class CompiledRelease:
    address: Address
    exit_code: int  # 0 ok, 1 the benchmark has errors
    diagnostics: str  # the compiler's text diagnostics (errors and warnings)
    digest: Digest  # the release directory's files, at the digest root
    tar: Digest  # `release.tar` at the digest root when requested, else EMPTY_DIGEST


class TrunchbullStepError(ReportedFailure):
    """A compile step failed for a reason other than the benchmark's errors."""


def _has_errors(contents: DigestContents) -> bool:
    """Whether a step run with `errors_are_results` found errors in the benchmark."""
    return any(c.path == ERRORS_MARKER for c in contents)


def _step_failed(result: FallibleProcessResult, what: str, address: Address) -> TrunchbullStepError | None:
    """A step that failed for a reason other than the benchmark's errors (those exit 0 with the
    marker: `errors_are_results`)."""
    if result.exit_code == 0:
        return None
    return TrunchbullStepError(
        f"trunchbull: the {what} step of {address} failed (exit code {result.exit_code}):\n"
        + result.stderr.decode(errors="replace").rstrip()
    )


async def _config_process(
    request: CompileReleaseRequest, root: str, classified: ReleaseFiles, deps: BenchmarkDependencies
) -> CoreProcess:
    """Static config + discovery. The module files only need to exist here."""
    placeholders = [
        FileContent(in_root(root, rel), b"")
        for rel in classified.files
        if rel.endswith(MODULE_EXTENSIONS) and rel not in CONFIG_NAMES
    ]
    real_config, placeholder_digest = await MultiGet(
        Get(
            Digest,
            PathGlobs(
                [in_root(root, c) for c in CONFIG_NAMES], glob_match_error_behavior=GlobMatchErrorBehavior.ignore
            ),
        ),
        Get(Digest, CreateDigest(placeholders)),
    )
    config_input = await Get(Digest, MergeDigests([placeholder_digest, real_config, deps.files]))
    return CoreProcess.create(
        ["config", root_arg(root), "--repo-root", ".", "--out", f"{OUT}/config.json"],
        input_digest=config_input,
        description=f"Read the config of {request.address}",
        output_files=[f"{OUT}/config.json"],
        errors_are_results=True,
    )


@rule(desc="Compile a Trunchbull release", level=LogLevel.DEBUG)
async def compile_release(request: CompileReleaseRequest) -> CompiledRelease:
    wrapped = await Get(
        WrappedTarget, WrappedTargetRequest(request.address, description_of_origin="the Trunchbull rules")
    )
    root = request.address.spec_path
    classified, deps = await MultiGet(
        Get(
            ReleaseFiles,
            ReleaseFilesRequest(request.address, tuple(wrapped.target[TrunchbullReleaseSourcesField].value or ())),
        ),
        Get(BenchmarkDependencies, BenchmarkDependenciesRequest(root)),
    )

    # 1. config + discovery. As `trunchbull build`, the later stages still run after a config
    # error (every problem is reported in one run), unless no eval was found. The release's
    # closure (what the assembly reads) is requested beside it: it runs dependency inference, whose
    # import scans need only the Node toolchain, so on a cold machine they run while the core's PEX
    # is still being built instead of after it.
    config_process = await _config_process(request, root, classified, deps)
    config_result, all_sources = await MultiGet(
        Get(FallibleProcessResult, CoreProcess, config_process),
        Get(ClosureSources, ClosureRequest(request.address)),
    )
    failure = _step_failed(config_result, "config", request.address)
    if failure:
        raise failure
    config_contents = await Get(DigestContents, Digest, config_result.output_digest)
    config = json.loads(next(c.content for c in config_contents if c.path == f"{OUT}/config.json"))
    if _has_errors(config_contents) and not config["evals"]:
        return CompiledRelease(request.address, 1, config_result.stderr.decode(), EMPTY_DIGEST, EMPTY_DIGEST)
    config_only = await Get(Digest, DigestSubset(config_result.output_digest, PathGlobs([f"{OUT}/**"])))
    config_digest = await Get(Digest, RemovePrefix(config_only, OUT))

    # 2. bundle + inspect each module, expand each eval.
    generated = set(classified.files)

    def module_address(rel: str) -> Address | None:
        if rel not in generated:
            return None
        return Address(root, target_name=request.address.target_name, relative_file_path=rel)

    steps = [
        ModuleStep(root, rel, kind, module_address(rel), request.address)
        for kind, paths in (("eval", config["evals"]), ("tool", config["tools"]))
        for rel in paths
    ]
    results = await MultiGet(Get(ModuleStepResult, ModuleStep, step) for step in steps)

    # 3. assemble.
    argv = ["assemble", root_arg(root), "--repo-root", ".", "--config", "__tb/config.json", "--out", RELEASE_DIR]
    prefixed = [AddPrefix(config_digest, "__tb")]
    for i, result in enumerate(results):
        prefixed.append(AddPrefix(result.report, f"__tb/m{i}"))
        argv += ["--report", f"__tb/m{i}/report.json"]
        if result.kind == "eval":
            prefixed.append(AddPrefix(result.expansion, f"__tb/m{i}"))
            argv += ["--expansion", f"__tb/m{i}/expansion.json"]
    if request.tar:
        argv.append("--tar")
    pieces = await MultiGet(Get(Digest, AddPrefix, p) for p in prefixed)
    assemble_input = await Get(Digest, MergeDigests([all_sources.digest, deps.files, *pieces]))
    assembled = await Get(
        FallibleProcessResult,
        CoreProcess,
        CoreProcess.create(
            argv,
            input_digest=assemble_input,
            description=f"Assemble the release of {request.address}",
            output_directories=[RELEASE_DIR],
            output_files=[f"{RELEASE_DIR}.tar"] if request.tar else [],
            errors_are_results=True,
        ),
    )
    failure = _step_failed(assembled, "assemble", request.address)
    if failure:
        raise failure
    # Assembly reports every diagnostic of the compile, the config's included, sorted as the CLI
    # sorts them.
    diagnostics = assembled.stderr.decode()
    assembled_contents = await Get(DigestContents, DigestSubset(assembled.output_digest, PathGlobs([ERRORS_MARKER])))
    if _has_errors(assembled_contents):
        return CompiledRelease(request.address, 1, diagnostics, EMPTY_DIGEST, EMPTY_DIGEST)
    release_files, tar = await MultiGet(
        Get(Digest, DigestSubset(assembled.output_digest, PathGlobs([f"{RELEASE_DIR}/**"]))),
        Get(Digest, DigestSubset(assembled.output_digest, PathGlobs([f"{RELEASE_DIR}.tar"]))),
    )
    release = await Get(Digest, RemovePrefix(release_files, RELEASE_DIR))
    if request.tar:
        contents = await Get(DigestContents, Digest, tar)
        tar = await Get(Digest, CreateDigest([FileContent("release.tar", c.content) for c in contents]))
    return CompiledRelease(request.address, 0, diagnostics, release, tar)


def rules():
    return collect_rules()
