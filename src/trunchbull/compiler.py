"""The compile pipeline, one-way: config → discovery → bundle → inspect →
expand → validate → freeze. The CLI runs it in one process; steps.py exposes
the same stages as file-in/file-out processes for Pants."""

from __future__ import annotations

import re
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from trunchbull import __version__
from trunchbull.config import BenchmarkConfig, locate_root, read_config, report_file_problem
from trunchbull.deps import Dependencies, find_dependencies, install
from trunchbull.diagnostics import Diagnostic, Diagnostics
from trunchbull.discovery import discover
from trunchbull.cases.fields import Where
from trunchbull.cases.transformer import check_total_sources
from trunchbull.compiled_eval import CompiledEval
from trunchbull.evals import EvalCompiler
from trunchbull.modules import ModuleReport, bundle_modules, bundle_timeout_diagnostic, inspect_modules
from trunchbull.node import HelperTimeout, NodeHelper
from trunchbull.toolchain import cache_root, toolchain
from trunchbull.paths import rel_posix, resolve_inside
from trunchbull.release import CASES, FORMAT, BackgroundSha256, ReleaseFiles, sha256_hex
from trunchbull.ids import suggest
from trunchbull.locate import find_in_line, find_key, refine
from trunchbull.tools import CompiledTool, compile_tool_module
from trunchbull.plan_check import check_plan_inputs
from trunchbull.userfiles import NOT_REGULAR_CODE, FileProblem, printable, read_file, real_path

MAX_CASES = 25_000

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass
class Entrypoints:
    evals: list[str]
    tools: list[str]
    evals_listed: bool  # explicit config array (no helper/transformer skipping)


@dataclass
class CompileOutcome:
    root: Path
    diagnostics: Diagnostics
    release: ReleaseFiles | None = None
    evals: list[CompiledEval] = field(default_factory=list)


def find_entrypoints(config: BenchmarkConfig, diags: Diagnostics) -> Entrypoints:
    evals = config.evals if config.evals is not None else discover(config.root, "evals", diags)
    tools = config.tools if config.tools is not None else discover(config.root, "tools", diags)
    for path in ([] if config.evals is not None else evals) + ([] if config.tools is not None else tools):
        if not real_path(config.root / path).is_relative_to(real_path(config.root)):
            diags.error(
                "symlink-outside-root",
                "the module is a symlink that resolves outside the benchmark root",
                file=path,
                hint="keep benchmark modules inside the benchmark root",
            )
    if not evals and config.evals is None:
        diags.error(
            "no-evals",
            "no eval modules found under evals/",
            file=config.config_file,
            hint="add evals/<name>.ts with `export default { id, prompt, evaluate }`, or list evals in benchmark.config",
        )
    return Entrypoints(evals, tools, config.evals is not None)


@dataclass
class Expansion:
    """The expand stage's result for one module listed as an eval."""

    path: str
    has_default: bool
    imports: list[str]  # root-relative files bundled into it
    transformer: str | None  # root-relative module its cases.transformer names
    eval: CompiledEval | None
    diagnostics: list[Diagnostic]

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "hasDefault": self.has_default,
            "imports": self.imports,
            "transformer": self.transformer,
            "eval": self.eval.to_json() if self.eval else None,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }

    @classmethod
    def from_json(cls, data: dict) -> "Expansion":
        return cls(
            data["path"],
            data["hasDefault"],
            data["imports"],
            data["transformer"],
            CompiledEval.from_json(data["eval"]) if data["eval"] else None,
            [Diagnostic.from_json(d) for d in data["diagnostics"]],
        )


def load_config(path: Path, helper: NodeHelper) -> tuple[BenchmarkConfig, Entrypoints, Diagnostics]:
    """Stage 1: roots, static config, discovery."""
    root, config_path = locate_root(path)
    diags = Diagnostics()
    config = read_config(root, config_path, helper, diags)
    return config, find_entrypoints(config, diags), diags


def compile_benchmark(path: Path, progress: Progress = _quiet, helper: NodeHelper | None = None) -> CompileOutcome:
    """All stages in one process, batching Node work (one helper process
    bundles every module; one sandboxed process inspects them all).
    `helper`: an already started helper (the caller closes it)."""
    tc = toolchain()
    with nullcontext(helper) if helper else NodeHelper(tc) as helper:
        progress("reading config")
        config, entries, diags = load_config(path, helper)
        outcome = CompileOutcome(config.root, diags)
        if not entries.evals:  # otherwise go on despite config errors, to report all problems in one run
            return outcome
        if _has_sibling_csv(config.root, entries.evals):
            threading.Thread(target=_warm_imports, daemon=True).start()
        deps = find_dependencies(config.root, config.repo_root, diags)
        install_dir = None
        if deps:
            progress("installing dependencies")
            try:
                install_dir = install(deps, tc)
            except FileProblem as problem:  # package.json or its lockfile changed since it was found
                report_file_problem(
                    diags,
                    problem,
                    NOT_REGULAR_CODE,
                    what="package.json or its lockfile ",
                    file=rel_posix(deps.package_json, config.root),
                )
                return outcome
        progress(f"bundling {len(entries.evals) + len(entries.tools)} modules")
        bundle_dir = (install_dir or cache_root()) / "bundles"
        try:
            reports = bundle_modules(
                helper,
                config.root,
                [(p, "eval") for p in entries.evals] + [(p, "tool") for p in entries.tools],
                bundle_dir,
                repo_root=config.repo_root,
            )
        except HelperTimeout:
            diags.extend(bundle_timeout_diagnostic(p) for p in entries.evals + entries.tools)
            return outcome
        progress("inspecting and expanding modules")
        expanded: dict[str, Expansion] = {}

        def expand(report: ModuleReport) -> Expansion:  # the running helper also bundles transformers
            return expand_module(report, config.root, install_dir, helper=helper)

        def expand_now(report: ModuleReport) -> None:  # while Node inspects the next modules
            if report.kind == "eval":
                expanded[report.path] = expand(report)

        inspect_modules(
            reports,
            tc=tc,
            read_paths=[config.root, bundle_dir, *([install_dir] if install_dir else [])],
            on_inspected=expand_now,
        )
        expansions = [expanded.get(r.path) or expand(r) for r in reports if r.kind == "eval"]
    progress("freezing release")
    outcome.release, outcome.evals = assemble(config, entries, deps, reports, expansions, diags)
    return outcome


def _has_sibling_csv(root: Path, evals: list[str]) -> bool:
    """Whether some eval module has a CSV file beside it (CSV cases are sibling files)."""
    directories = {(root / e).parent for e in evals}
    return any(next(d.glob("*.csv"), None) is not None for d in directories)


def _warm_imports() -> None:
    """Import polars while Node bundles and inspects: CSV reading needs it
    later, and the import alone takes ~0.3 s. Only started when a CSV is near."""
    import polars  # noqa: F401


def expand_module(
    report: ModuleReport,
    root: Path,
    install_dir: Path | None = None,
    transform_runs: list[dict] | None = None,
    helper: NodeHelper | None = None,
) -> Expansion:
    """Stage 4, per eval module: validate its export and expand its cases.
    `transform_runs`: the two transformer runs' records, when separate
    processes made them (else expansion runs the transformer itself).
    `helper`: a running Node helper to bundle a transformer with."""
    diags = Diagnostics()
    inspection = report.inspection or {}
    has_default = "default" in inspection
    value = (inspection.get("default") or {}).get("value")
    cases = value.get("cases") if isinstance(value, dict) else None
    transformer = None
    if isinstance(cases, dict) and isinstance(cases.get("transformer"), str):
        path, _ = resolve_inside((root / report.path).parent, cases["transformer"], root)
        transformer = rel_posix(path, root) if path is not None else None
    compiled = None
    if report.ok and has_default:
        compiler = EvalCompiler(report, root, diags, install_dir)
        compiler.transform_runs = transform_runs
        compiler.helper = helper
        compiled = compiler.compile()
    return Expansion(report.path, has_default, report.inputs, transformer, compiled, diags.items)


def assemble(
    config: BenchmarkConfig,
    entries: Entrypoints,
    deps: Dependencies | None,
    reports: list[ModuleReport],
    expansions: list[Expansion],
    diags: Diagnostics,
) -> tuple[ReleaseFiles | None, list[CompiledEval]]:
    """Stages 5-6: decide which modules are evals, check release-wide rules, freeze."""
    skipped = set() if entries.evals_listed else _non_eval_modules(expansions)
    for report in reports:
        if report.path in skipped:
            continue
        diags.extend(report.diagnostics)
        if report.inspection is not None and not report.ok:
            message, hint = explain_import_error(report.inspection.get("importError") or "")
            diags.error("module-import", message, file=report.path, hint=hint)
    evals: list[CompiledEval] = []
    by_path = {r.path: r for r in reports}
    for expansion in expansions:
        if expansion.path in skipped or not by_path[expansion.path].ok:
            continue
        diags.extend(expansion.diagnostics)
        if not expansion.has_default:
            hint = (
                "an eval module must `export default { id, … }`"
                if entries.evals_listed
                else "move helpers out of evals/ or list evals explicitly in benchmark.config"
            )
            diags.error("eval-no-default", "the eval module has no default export", file=expansion.path, hint=hint)
        elif expansion.eval:
            evals.append(expansion.eval)
    cases_jsonl = b"".join([ev.cases_jsonl() for ev in evals])  # one eval: its buffer as it is
    cases_sha256 = BackgroundSha256(cases_jsonl)  # tens of MiB: hashed while the release-wide checks run
    tools: list[CompiledTool] = []
    for report in reports:
        if report.kind == "tool" and report.ok:
            tools.extend(compile_tool_module(report, config.root, diags))
    check_release(evals, tools, config, diags)
    if diags.has_errors():
        return None, evals
    try:
        return freeze(config, evals, tools, reports, deps, diags, cases_jsonl, cases_sha256), evals
    except _InputProblem as problem:  # an input changed or vanished since it was read
        report_file_problem(
            diags,
            problem.problem,
            "input-changed",
            what=f"{problem.name} ",
            file=problem.name,
            hint="do not change the benchmark while it builds",
        )
        return None, evals


_MISSING_PACKAGE = re.compile(r"Cannot find (?:package|module) '([^']+)' imported from \S+")


_SANDBOX_DENIALS = {
    "fs-write": "writing a file",
    "fs-read": "reading a file outside the benchmark",
    "child-process": "starting a child process",
    "worker": "starting a worker thread",
    "addons": "loading a native addon",
    "wasi": "using WASI",
}


def explain_import_error(error: str) -> tuple[str, str]:
    """A Node import error as a message without sandbox paths, and a hint."""
    missing = _MISSING_PACKAGE.search(error)
    if missing:
        return (
            f"the module imports package {missing.group(1)!r}, which is not installed",
            f"declare {missing.group(1)!r} in the benchmark's package.json and commit its lockfile",
        )
    if "ERR_ACCESS_DENIED" in error or "Access to this API has been restricted" in error:
        denied = re.search(r"--allow-([a-z-]+)", error)
        what = _SANDBOX_DENIALS.get(denied.group(1), denied.group(1)) if denied else "an operation the sandbox forbids"
        return (
            f"importing the module tried {what}, which the sandbox forbids",
            "module code runs sandboxed: no file writes, child processes, workers or reads outside the benchmark",
        )
    return f"importing the module failed: {error}", "the module must import without errors in Node"


def _non_eval_modules(expansions: list[Expansion]) -> set[str]:
    """Discovered modules that are not evals: helpers (no default export,
    imported by another eval module) and transformers named by an eval."""
    imported = {path for e in expansions for path in e.imports if path != e.path}
    skipped = {e.path for e in expansions if not e.has_default and e.path in imported}
    skipped.update(e.transformer for e in expansions if e.transformer)
    return skipped


def check_release(
    evals: list[CompiledEval], tools: list[CompiledTool], config: BenchmarkConfig, diags: Diagnostics
) -> None:
    """Release-wide rules: unique eval IDs, case IDs and tool names; tool references; the case limit."""
    first_eval: dict[str, CompiledEval] = {}
    for ev in evals:
        if ev.id in first_eval:
            other = first_eval[ev.id]
            diags.error(
                "duplicate-eval-id",
                f"eval id {ev.id!r} is also used by {other.module}",
                file=ev.module,
                line=ev.where.line if ev.where else None,
                col=ev.where.col if ev.where else None,
                hint="eval IDs must be unique in the release",
            )
        else:
            first_eval[ev.id] = ev
    first_case: dict[str, Where] = {}
    for ev in evals:
        for case_id, where in zip(ev.case_ids, ev.case_wheres):
            if case_id in first_case:
                earlier = first_case[case_id]
                other_at = ":".join(str(x) for x in (earlier.file, earlier.line) if x)
                diags.error(
                    "duplicate-case-id",
                    f"{where.label()}case id {case_id!r} is also defined at {other_at}"
                    + (f" ({earlier.path})" if earlier.path else ""),
                    file=where.file,
                    line=where.line,
                    col=where.col,
                    hint="case IDs are release-global and never prefixed: prefix them yourself, e.g. <eval>.<case>",
                )
            else:
                first_case[case_id] = where
    first_tool: dict[str, CompiledTool] = {}
    for tool in tools:
        if tool.name in first_tool:
            line, col = find_key(config.root / tool.module, tool.name)
            diags.error(
                "duplicate-tool",
                f"tool {tool.name!r} is also defined in {first_tool[tool.name].module}",
                file=tool.module,
                line=line,
                col=col,
                hint="tool names must be unique across the release",
            )
        else:
            first_tool[tool.name] = tool
    known = sorted(first_tool)
    for ev in evals:
        for name, where, requester in ev.tool_requests:
            if name not in first_tool:
                _unknown_tool(ev, name, where, requester, known, config.root, diags)
        check_plan_inputs(ev, {name: tool.input_schema for name, tool in first_tool.items()}, config.root, diags)
    check_total_sources(evals, diags)
    total = sum(len(ev.case_ids) for ev in evals)
    if total > MAX_CASES:
        diags.error(
            "too-many-cases",
            f"the release has {total:,} cases; the limit is {MAX_CASES:,}",
            file=config.config_file,
            hint="split the benchmark into several releases",
        )


def _unknown_tool(
    ev: CompiledEval, name: str, where: Where, case_id: str | None, known: list[str], root: Path, diags: Diagnostics
) -> None:
    """An unknown tool name, reported at its literal in the `tools` list that requests it."""
    if case_id is None:
        who = f"eval {ev.id!r}"
    else:
        owner = where.path.rsplit("tools[", 1)[0].rstrip(".")
        who = f"{owner + ': ' if owner else ''}case {case_id!r}"
    line, col = where.line, where.col
    if where.file == ev.module:
        line, col = refine(root / where.file, line, col, where.path)
    elif line is not None:  # a data-file line: the literal on it
        col = find_in_line(root / where.file, line, name) or col
    near = suggest(name, known)
    diags.error(
        "unknown-tool",
        f"{who} requests tool {name!r}, which no tool module defines",
        file=where.file,
        line=line,
        col=col,
        hint=(f"did you mean {near!r}? " if near else "") + f"known tools: {', '.join(known) or 'none'}",
    )


def freeze(
    config: BenchmarkConfig,
    evals: list[CompiledEval],
    tools: list[CompiledTool],
    reports: list[ModuleReport],
    deps: Dependencies | None,
    diags: Diagnostics,
    cases_jsonl: bytes,
    cases_sha256: BackgroundSha256,
) -> ReleaseFiles:
    by_path = {r.path: r for r in reports}
    payload: dict[str, bytes] = {}

    def add_bundle(module: str) -> str:
        report = by_path[module]
        name = f"modules/{report.bundle_sha}.mjs"
        if name not in payload:
            assert report.bundle_file is not None  # a module in the release was bundled
            payload[name] = report.bundle_file.read_bytes()
        return name

    eval_entries = []
    for ev in evals:
        bundle = add_bundle(ev.module) if ev.custom else None
        eval_entries.append(
            {
                "id": ev.id,
                "title": ev.title,
                "description": ev.description,
                "module": ev.module,
                "caseCount": len(ev.case_ids),
                "evaluatorKinds": sorted(ev.evaluator_kinds),
                "bundle": bundle,
            }
        )
    tool_entries = [
        {
            "name": t.name,
            "description": t.description,
            "inputSchema": t.input_schema,
            "module": t.module,
            "bundle": add_bundle(t.module),
        }
        for t in tools
    ]
    payload[CASES] = cases_jsonl
    dependencies = None
    if deps:
        contents = {name: _read_input(config.root, path) for name, path in ((p.name, p) for p in deps.files())}
        if any(n.startswith("modules/") for n in payload):
            payload.update(contents)
        dependencies = {
            "packageJson": "package.json",
            "lockfile": deps.lockfile.name if deps.lockfile else None,
            "locked": deps.locked,
            "sha256": {n: sha256_hex(data) for n, data in contents.items()},
        }
        if not deps.locked:
            diags.warning(
                "dependencies-unlocked",
                "the benchmark's dependencies are not locked (no lockfile beside package.json)",
                file=rel_posix(deps.package_json, config.root),
                hint="run `npm install` to create package-lock.json",
            )
    manifest = {
        "format": FORMAT,
        "protocolVersion": 1,
        "title": config.title,
        "version": config.version,
        "counts": {
            "evals": len(evals),
            "cases": sum(len(ev.case_ids) for ev in evals),
            "tools": len(tools),
            "modules": sum(1 for n in payload if n.startswith("modules/")),
        },
        "evals": eval_entries,
        "tools": tool_entries,
        "inputs": _inputs(config, evals, reports, deps),
        "compiler": {"name": "trunchbull", "version": __version__},
        "dependencies": dependencies,
        "warnings": [d.render() for d in diags.sorted() if d.severity == "warning"],
    }
    return ReleaseFiles.assemble(manifest, payload, hashing={CASES: cases_sha256})


def _inputs(
    config: BenchmarkConfig, evals: list[CompiledEval], reports: list[ModuleReport], deps: Dependencies | None
) -> dict[str, str]:
    names: set[str] = set()
    if config.config_file:
        names.add(config.config_file)
    for report in reports:
        names.update(report.inputs or [report.path])
    for ev in evals:
        names.update(ev.data_files)
    if deps:
        names.update(rel_posix(p, config.root) for p in deps.files())
    # Transformer sources were hashed when read (up to 200 MiB): not again.
    known = {rel: source["sha256"] for ev in evals for rel, source in ev.transformer_sources.items()}
    return {
        name: known.get(name) or sha256_hex(_read_input(config.root, config.root / name))
        for name in sorted(names, key=str.encode)
    }


class _InputProblem(Exception):
    def __init__(self, name: str, problem: FileProblem):
        super().__init__(f"{name} {problem}")
        self.name, self.problem = name, problem


def _read_input(root: Path, path: Path) -> bytes:
    """An input's bytes for the release's hashes (raises _InputProblem)."""
    try:
        return read_file(path)
    except FileProblem as problem:
        raise _InputProblem(printable(rel_posix(path, root)), problem) from None
