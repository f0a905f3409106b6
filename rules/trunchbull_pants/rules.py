"""Compiling a `trunchbull_release`: the compiler's steps as Pants processes.

    config           1 process   static config + discovery (module files are
                                 empty placeholders: editing an eval does not
                                 re-run it)
    npm ci           1 per lockfile (shared by every benchmark using it)
    bundle-inspect   1 per eval/tool module; inputs: the module and what it
                                 imports (inferred; not the transformers it
                                 names), the installed dependencies (linked)
    transform-run    2 per eval with a transformer (`--run 1`, `--run 2`);
                                 inputs: its report, the transformer and its
                                 sources, the installed dependencies (linked)
    expand           1 per eval module; inputs: its report + bundle, the
                                 files it reads (inferred), the two run records
    assemble         1 process   release-wide checks, the release directory

Every process runs `python -m trunchbull.steps` (toolchain.py: the core PEX
with its sources beside it, the pinned Node toolchain linked in), so Pants
caches each one locally and in a REAPI remote cache, and the release is
byte-identical to `trunchbull build` of the same root.
"""

from __future__ import annotations

import json
import os.path
from dataclasses import dataclass

from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior
from pants.core.goals.check import CheckRequest, CheckResult, CheckResults
from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, PackageFieldSet
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
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
    Snapshot,
)
from pants.engine.process import FallibleProcessResult, Process, ProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    Dependencies,
    DependenciesRequest,
    SourcesField,
    Target,
    Targets,
    TransitiveTargets,
    TransitiveTargetsRequest,
    WrappedTarget,
    WrappedTargetRequest,
)
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from trunchbull_pants.generate import ReleaseFiles, ReleaseFilesRequest
from trunchbull_pants.target_types import (
    CONFIG_NAMES,
    MODULE_EXTENSIONS,
    TrunchbullReleaseOutputPathField,
    TrunchbullReleaseSourcesField,
    TrunchbullReleaseTarField,
    TrunchbullTransformerTarget,
)
from trunchbull_pants.toolchain import (
    TOOLCHAIN_DIR,
    CoreProcess,
    NpmInstallRequest,
    NpmInstallResult,
)

LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock")
DEPS_DIR = "__tb_deps"
DEPS_MOUNT = "__tb_nm"
OUT = "__tb_out"
RELEASE_DIR = "__tb_release"


# -----------------------------------------------------------------------------------------------
# Requests and results
# -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrunchbullReleaseFieldSet(PackageFieldSet):
    required_fields = (TrunchbullReleaseSourcesField,)

    sources: TrunchbullReleaseSourcesField
    output_path: TrunchbullReleaseOutputPathField
    tar: TrunchbullReleaseTarField


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


@dataclass(frozen=True)
class BenchmarkDependencies:
    """The nearest package.json (+ lockfile) from the root up, installed."""

    files: Digest  # package.json + lockfile at their buildroot paths
    node_modules: Digest  # `node_modules/...`, or EMPTY_DIGEST when there are no dependencies
    present: bool


@dataclass(frozen=True)
class BenchmarkDependenciesRequest:
    root: str


@dataclass(frozen=True)
class ModuleStep:
    """bundle-inspect of one module (and, for evals, expand)."""

    root: str
    module: str  # root-relative
    kind: str  # "eval" | "tool"
    address: Address | None  # its generated target (None: not generated)
    release: Address


@dataclass(frozen=True)
class ModuleStepResult:
    module: str
    kind: str
    report: Digest  # report.json + <sha>.mjs at the digest root
    expansion: Digest  # expansion.json at the digest root, or EMPTY_DIGEST


def _root_arg(root: str) -> str:
    return root or "."


def _in_root(root: str, rel: str) -> str:
    return f"{root}/{rel}" if root else rel


# -----------------------------------------------------------------------------------------------
# Steps
# -----------------------------------------------------------------------------------------------


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
    snapshot = await Get(
        Snapshot, PathGlobs(globs, glob_match_error_behavior=GlobMatchErrorBehavior.ignore)
    )
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
        files = await Get(
            Digest, DigestSubset(snapshot.digest, PathGlobs([package_json, *([lock] if lock else [])]))
        )
        at_root = await Get(Digest, RemovePrefix(files, directory)) if directory else files
        installed = await Get(
            NpmInstallResult,
            NpmInstallRequest(
                at_root,
                description=f"Install the npm dependencies of {package_json}"
                + ("" if lock else " (not locked)"),
                use_pinned_node=True,
                locked=lock is not None,
            ),
        )
        return BenchmarkDependencies(files, installed.node_modules, True)
    return BenchmarkDependencies(EMPTY_DIGEST, EMPTY_DIGEST, False)


def _deps_layout(deps: BenchmarkDependencies) -> dict:
    """The installed `node_modules`, linked (not copied) into a sandbox.

    The install is an immutable input at `__tb_nm/` (materialized once, shared
    by every process) and `__tb_deps/node_modules` is made a symlink to its
    real path when the step starts, so `__tb_deps/` stays a writable sandbox
    directory (bundles, transformer workspaces) and a bundle under it resolves
    package imports through the link. Node's permission model checks real
    paths and reads each symlink on the way: the core allows a read path's
    real path too, so `--deps-dir` names the link (or its parent, for
    transform-run, which reads `<deps-dir>/node_modules`). The link and the
    mount point are the same on every machine: cache keys are stable."""
    if not deps.present:
        return {}
    return {
        "immutable_input_digests": {DEPS_MOUNT: deps.node_modules},
        "realpath_links": [(f"{DEPS_DIR}/node_modules", f"{DEPS_MOUNT}/node_modules")],
    }


def transformer_of(report_json: bytes) -> str | None:
    """`cases.transformer` of an inspected eval's default export, if any."""
    try:
        report = json.loads(report_json)
    except ValueError:
        return None
    value = (((report or {}).get("inspection") or {}).get("default") or {}).get("value")
    cases = value.get("cases") if isinstance(value, dict) else None
    transformer = cases.get("transformer") if isinstance(cases, dict) else None
    return transformer if isinstance(transformer, str) else None


@dataclass(frozen=True)
class ClosureRequest:
    address: Address
    # False: do not go through transformer targets. A transformer is named by a
    # path string, not imported, so only its runs and the expansion read it:
    # editing it does not re-run bundle-inspect of the eval naming it.
    through_transformers: bool = True


@dataclass(frozen=True)
class ClosureSources:
    digest: Digest


@rule(desc="Collect the sources a Trunchbull step reads", level=LogLevel.DEBUG)
async def closure_sources(request: ClosureRequest) -> ClosureSources:
    if request.through_transformers:
        transitive = await Get(TransitiveTargets, TransitiveTargetsRequest([request.address]))
        targets = list(transitive.closure)
    else:
        wrapped = await Get(
            WrappedTarget,
            WrappedTargetRequest(request.address, description_of_origin="the Trunchbull rules"),
        )
        seen: dict[Address, Target] = {}
        frontier = [wrapped.target]
        while frontier:
            for tgt in frontier:
                seen[tgt.address] = tgt
            found = await MultiGet(
                Get(Targets, DependenciesRequest(tgt.get(Dependencies))) for tgt in frontier
            )
            following: dict[Address, Target] = {}
            for deps in found:
                for tgt in deps:
                    if tgt.address not in seen and not isinstance(tgt, TrunchbullTransformerTarget):
                        following[tgt.address] = tgt
            frontier = list(following.values())
        targets = list(seen.values())
    sources = await Get(
        SourceFiles,
        SourceFilesRequest([tgt.get(SourcesField) for tgt in targets if tgt.has_field(SourcesField)]),
    )
    return ClosureSources(sources.snapshot.digest)


async def _closure_sources(addresses: list[Address]) -> Digest:
    [address] = addresses
    closure = await Get(ClosureSources, ClosureRequest(address))
    return closure.digest


@rule(desc="Bundle, inspect and expand one Trunchbull module", level=LogLevel.DEBUG)
async def module_step(request: ModuleStep) -> ModuleStepResult:
    deps = await Get(BenchmarkDependencies, BenchmarkDependenciesRequest(request.root))
    if request.address is not None:
        sources, bundle_sources = await MultiGet(
            Get(ClosureSources, ClosureRequest(request.address, through_transformers=True)),
            Get(ClosureSources, ClosureRequest(request.address, through_transformers=False)),
        )
        sources, bundle_sources = sources.digest, bundle_sources.digest
    else:
        sources = bundle_sources = await _closure_sources([request.release])
    deps_link = _deps_layout(deps)
    argv = [
        "bundle-inspect",
        _root_arg(request.root),
        "--module",
        request.module,
        "--kind",
        request.kind,
        "--repo-root",
        ".",
        "--bundle-dir",
        "__tb_bundles",
        "--out",
        f"{OUT}/report.json",
    ]
    if deps.present:
        # As `trunchbull build` does: bundles are imported from <deps>/bundles so
        # package imports resolve through <deps>/node_modules (a symlink to the
        # shared install's real path, which the sandbox then allows reading).
        argv[argv.index("__tb_bundles")] = f"{DEPS_DIR}/bundles"
        argv += ["--deps-dir", f"{DEPS_DIR}/node_modules"]
    input_digest = await Get(Digest, MergeDigests([bundle_sources, deps.files]))
    bundled = await Get(
        ProcessResult,
        CoreProcess,
        CoreProcess.create(
            argv,
            input_digest=input_digest,
            **deps_link,
            description=f"Bundle and inspect {_in_root(request.root, request.module)}",
            output_directories=[OUT],
        ),
    )
    report = await Get(Digest, RemovePrefix(bundled.output_digest, OUT))
    if request.kind != "eval":
        return ModuleStepResult(request.module, request.kind, report, EMPTY_DIGEST)
    report_in = await Get(Digest, AddPrefix(report, "__tb_in"))
    report_json = await Get(DigestContents, DigestSubset(report, PathGlobs(["report.json"])))
    expand_argv = [
        "expand",
        _root_arg(request.root),
        "--report",
        "__tb_in/report.json",
        "--out",
        f"{OUT}/expansion.json",
    ]
    runs: list[Digest] = []
    if report_json and transformer_of(report_json[0].content) is not None:
        # The transformer's two deliberately varied runs, each its own cached
        # process (different argv, so both execute); expand compares them.
        run_input = await Get(Digest, MergeDigests([sources, report_in]))
        run_results = await MultiGet(
            Get(
                ProcessResult,
                CoreProcess,
                CoreProcess.create(
                    [
                        "transform-run",
                        _root_arg(request.root),
                        "--report",
                        "__tb_in/report.json",
                        "--run",
                        str(n),
                        *(["--deps-dir", DEPS_DIR] if deps.present else []),
                        "--out",
                        f"{OUT}/run.json",
                    ],
                    input_digest=run_input,
                    **deps_link,
                    description=(
                        f"Run the transformer of {_in_root(request.root, request.module)} "
                        f"(run {n} of 2)"
                    ),
                    output_files=[f"{OUT}/run.json", f"{OUT}/run.json.stdout"],
                ),
            )
            for n in (1, 2)
        )
        for n, result in zip((1, 2), run_results):
            moved = await Get(Digest, RemovePrefix(result.output_digest, OUT))
            runs.append(await Get(Digest, AddPrefix(moved, f"__tb_runs/{n}")))
            expand_argv += ["--transform-run", f"__tb_runs/{n}/run.json"]
    expand_input = await Get(Digest, MergeDigests([sources, report_in, *runs]))
    expanded = await Get(
        ProcessResult,
        CoreProcess,
        CoreProcess.create(
            expand_argv,
            input_digest=expand_input,
            description=f"Expand the cases of {_in_root(request.root, request.module)}",
            output_files=[f"{OUT}/expansion.json"],
        ),
    )
    expansion = await Get(Digest, RemovePrefix(expanded.output_digest, OUT))
    return ModuleStepResult(request.module, request.kind, report, expansion)


@rule(desc="Compile a Trunchbull release", level=LogLevel.DEBUG)
async def compile_release(request: CompileReleaseRequest) -> CompiledRelease:
    wrapped = await Get(
        WrappedTarget,
        WrappedTargetRequest(request.address, description_of_origin="the Trunchbull rules"),
    )
    target = wrapped.target
    root = request.address.spec_path
    classified, deps = await MultiGet(
        Get(
            ReleaseFiles,
            ReleaseFilesRequest(
                request.address, tuple(target[TrunchbullReleaseSourcesField].value or ())
            ),
        ),
        Get(BenchmarkDependencies, BenchmarkDependenciesRequest(root)),
    )

    # 1. config + discovery. The module files only need to exist here.
    config_inputs = [
        FileContent(_in_root(root, rel), b"")
        for rel in classified.files
        if rel.endswith(MODULE_EXTENSIONS) and rel not in CONFIG_NAMES
    ]
    real_config = await Get(
        Digest,
        PathGlobs(
            [_in_root(root, c) for c in CONFIG_NAMES],
            glob_match_error_behavior=GlobMatchErrorBehavior.ignore,
        ),
    )
    placeholders = await Get(Digest, CreateDigest(config_inputs))
    config_input = await Get(Digest, MergeDigests([placeholders, real_config, deps.files]))
    config_result = await Get(
        FallibleProcessResult,
        CoreProcess,
        CoreProcess.create(
            ["config", _root_arg(root), "--repo-root", ".", "--out", f"{OUT}/config.json"],
            input_digest=config_input,
            description=f"Read the config of {request.address}",
            output_files=[f"{OUT}/config.json"],
        ),
    )
    config_stderr = config_result.stderr.decode()
    if config_result.exit_code != 0:
        if config_result.exit_code == 1:
            return CompiledRelease(request.address, 1, config_stderr, EMPTY_DIGEST, EMPTY_DIGEST)
        raise ValueError(f"trunchbull config step failed for {request.address}:\n{config_stderr}")
    config_contents = await Get(DigestContents, Digest, config_result.output_digest)
    config = json.loads(config_contents[0].content)
    config_digest = await Get(Digest, RemovePrefix(config_result.output_digest, OUT))

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
    argv = [
        "assemble",
        _root_arg(root),
        "--repo-root",
        ".",
        "--config",
        "__tb/config.json",
        "--out",
        RELEASE_DIR,
    ]
    pieces = [await Get(Digest, AddPrefix(config_digest, "__tb"))]
    for i, result in enumerate(results):
        pieces.append(await Get(Digest, AddPrefix(result.report, f"__tb/m{i}")))
        argv += ["--report", f"__tb/m{i}/report.json"]
        if result.kind == "eval":
            pieces.append(await Get(Digest, AddPrefix(result.expansion, f"__tb/m{i}")))
            argv += ["--expansion", f"__tb/m{i}/expansion.json"]
    if request.tar:
        argv.append("--tar")
    all_sources = await _closure_sources([request.address])
    assemble_input = await Get(Digest, MergeDigests([all_sources, deps.files, *pieces]))
    assembled = await Get(
        FallibleProcessResult,
        CoreProcess,
        CoreProcess.create(
            argv,
            input_digest=assemble_input,
            description=f"Assemble the release of {request.address}",
            output_directories=[RELEASE_DIR],
            output_files=[f"{RELEASE_DIR}.tar"] if request.tar else [],
        ),
    )
    diagnostics = config_stderr + assembled.stderr.decode()
    if assembled.exit_code not in (0, 1):
        raise ValueError(f"trunchbull assemble step failed for {request.address}:\n{diagnostics}")
    if assembled.exit_code != 0:
        return CompiledRelease(request.address, 1, diagnostics, EMPTY_DIGEST, EMPTY_DIGEST)
    release_files, tar = await MultiGet(
        Get(Digest, DigestSubset(assembled.output_digest, PathGlobs([f"{RELEASE_DIR}/**"]))),
        Get(Digest, DigestSubset(assembled.output_digest, PathGlobs([f"{RELEASE_DIR}.tar"]))),
    )
    release = await Get(Digest, RemovePrefix(release_files, RELEASE_DIR))
    if request.tar:
        contents = await Get(DigestContents, Digest, tar)
        tar = await Get(
            Digest, CreateDigest([FileContent("release.tar", c.content) for c in contents])
        )
    return CompiledRelease(request.address, 0, diagnostics, release, tar)


# -----------------------------------------------------------------------------------------------
# Goals
# -----------------------------------------------------------------------------------------------


class TrunchbullCompileError(Exception):
    pass


@rule(desc="Package a Trunchbull release", level=LogLevel.DEBUG)
async def package_trunchbull_release(field_set: TrunchbullReleaseFieldSet) -> BuiltPackage:
    compiled = await Get(
        CompiledRelease, CompileReleaseRequest(field_set.address, tar=bool(field_set.tar.value))
    )
    if compiled.exit_code != 0:
        raise TrunchbullCompileError(
            f"{field_set.address}: the benchmark has errors\n{compiled.diagnostics.rstrip()}"
        )
    output_path = field_set.output_path.value_or_default(file_ending=None)
    pieces = [await Get(Digest, AddPrefix(compiled.digest, output_path))]
    if field_set.tar.value:
        # `<output_path>.tar` beside the directory, as `trunchbull build --tar` writes it.
        contents = await Get(DigestContents, Digest, compiled.tar)
        pieces.append(
            await Get(
                Digest,
                CreateDigest([FileContent(f"{output_path}.tar", c.content) for c in contents]),
            )
        )
    merged = await Get(Snapshot, MergeDigests(pieces))
    extra = [compiled.diagnostics.rstrip()] if compiled.diagnostics.strip() else []
    return BuiltPackage(
        merged.digest,
        artifacts=(BuiltPackageArtifact(relpath=output_path, extra_log_lines=tuple(extra)),),
    )


class TrunchbullCheckRequest(CheckRequest):
    field_set_type = TrunchbullReleaseFieldSet
    tool_name = "trunchbull"


@rule(desc="Check Trunchbull benchmarks", level=LogLevel.DEBUG)
async def check_trunchbull(request: TrunchbullCheckRequest) -> CheckResults:
    compiled = await MultiGet(
        Get(CompiledRelease, CompileReleaseRequest(fs.address)) for fs in request.field_sets
    )
    return CheckResults(
        [
            CheckResult(
                exit_code=c.exit_code,
                stdout="",
                stderr=c.diagnostics,
                partition_description=str(c.address),
            )
            for c in compiled
        ],
        checker_name="trunchbull",
    )


def rules():
    return [
        *collect_rules(),
        UnionRule(PackageFieldSet, TrunchbullReleaseFieldSet),
        UnionRule(CheckRequest, TrunchbullCheckRequest),
    ]
