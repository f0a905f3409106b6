"""The per-module compile steps, each a cached `CoreProcess`:

bundle-inspect   1 per eval/tool module; inputs: the module and what it imports
                 (inferred; not the transformers it names), the installed dependencies
                 (linked)
transform-run    2 per eval with a transformer (`--run 1`, `--run 2`); inputs: its report,
                 the transformer and its sources, the installed dependencies (linked)
expand           1 per eval module; inputs: its report + bundle, the files it reads
                 (inferred), the two run records
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pants.engine.addresses import Address
from pants.engine.fs import (
    EMPTY_DIGEST,
    AddPrefix,
    Digest,
    DigestContents,
    DigestSubset,
    MergeDigests,
    PathGlobs,
    RemovePrefix,
)
from pants.engine.process import ProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.logging import LogLevel

from trunchbull_pants.benchmark_deps import DEPS_DIR, BenchmarkDependencies, BenchmarkDependenciesRequest
from trunchbull_pants.closure import ClosureRequest, ClosureSources
from trunchbull_pants.core import CoreProcess

OUT = "__tb_out"


def root_arg(root: str) -> str:
    return root or "."


def in_root(root: str, rel: str) -> str:
    return f"{root}/{rel}" if root else rel


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


async def _transform_runs(
    request: ModuleStep, deps: BenchmarkDependencies, sources: Digest, report_in: Digest
) -> list[Digest]:
    """The transformer's two deliberately varied runs, each its own cached process (different
    argv, so both execute); expand compares them. Their records, under `__tb_runs/<n>/`."""
    run_input = await Get(Digest, MergeDigests([sources, report_in]))
    results = await MultiGet(
        Get(
            ProcessResult,
            CoreProcess,
            CoreProcess.create(
                [
                    "transform-run",
                    root_arg(request.root),
                    "--report",
                    "__tb_in/report.json",
                    "--run",
                    str(n),
                    *(["--deps-dir", DEPS_DIR] if deps.present else []),
                    "--out",
                    f"{OUT}/run.json",
                ],
                input_digest=run_input,
                **deps.layout(),
                description=f"Run the transformer of {in_root(request.root, request.module)} (run {n} of 2)",
                output_files=[f"{OUT}/run.json", f"{OUT}/run.json.stdout"],
            ),
        )
        for n in (1, 2)
    )
    runs = []
    for n, result in zip((1, 2), results):
        moved = await Get(Digest, RemovePrefix(result.output_digest, OUT))
        runs.append(await Get(Digest, AddPrefix(moved, f"__tb_runs/{n}")))
    return runs


@rule(desc="Bundle, inspect and expand one Trunchbull module", level=LogLevel.DEBUG)
async def module_step(request: ModuleStep) -> ModuleStepResult:
    deps = await Get(BenchmarkDependencies, BenchmarkDependenciesRequest(request.root))
    if request.address is not None:
        closure, bundle_closure = await MultiGet(
            Get(ClosureSources, ClosureRequest(request.address, through_transformers=True)),
            Get(ClosureSources, ClosureRequest(request.address, through_transformers=False)),
        )
    else:
        closure = bundle_closure = await Get(ClosureSources, ClosureRequest(request.release))
    argv = [
        "bundle-inspect",
        root_arg(request.root),
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
        # As `trunchbull build` does: bundles are imported from <deps>/bundles so package imports
        # resolve through <deps>/node_modules (a symlink to the shared install's real path, which
        # the sandbox then allows reading).
        argv[argv.index("__tb_bundles")] = f"{DEPS_DIR}/bundles"
        argv += ["--deps-dir", f"{DEPS_DIR}/node_modules"]
    input_digest = await Get(Digest, MergeDigests([bundle_closure.digest, deps.files]))
    bundled = await Get(
        ProcessResult,
        CoreProcess,
        CoreProcess.create(
            argv,
            input_digest=input_digest,
            **deps.layout(),
            description=f"Bundle and inspect {in_root(request.root, request.module)}",
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
        root_arg(request.root),
        "--report",
        "__tb_in/report.json",
        "--out",
        f"{OUT}/expansion.json",
    ]
    runs: list[Digest] = []
    if report_json and transformer_of(report_json[0].content) is not None:
        runs = await _transform_runs(request, deps, closure.digest, report_in)
        for n in (1, 2):
            expand_argv += ["--transform-run", f"__tb_runs/{n}/run.json"]
    expand_input = await Get(Digest, MergeDigests([closure.digest, report_in, *runs]))
    expanded = await Get(
        ProcessResult,
        CoreProcess,
        CoreProcess.create(
            expand_argv,
            input_digest=expand_input,
            description=f"Expand the cases of {in_root(request.root, request.module)}",
            output_files=[f"{OUT}/expansion.json"],
        ),
    )
    expansion = await Get(Digest, RemovePrefix(expanded.output_digest, OUT))
    return ModuleStepResult(request.module, request.kind, report, expansion)


def rules():
    return collect_rules()
