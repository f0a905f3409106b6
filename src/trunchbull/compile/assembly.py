"""The release-wide stage of a compile (stages 5-6): which modules are
evals, the rules that span modules (unique eval IDs, case IDs and tool
names; every requested tool exists; the case and transformer-source limits),
then the freeze (freeze.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from trunchbull.common.diagnostics import Diagnostics
from trunchbull.common.ids import suggest
from trunchbull.compile.cases.fields import Where
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.compile.config import BenchmarkConfig, report_file_problem
from trunchbull.compile.consequences import defined_by_failed, failed, named_by_failed
from trunchbull.node.dependencies import Dependencies
from trunchbull.compile.discovery import Entrypoints
from trunchbull.compile.expansion import Expansion
from trunchbull.compile.freeze import InputProblem, freeze
from trunchbull.compile.locate import find_in_line, find_key, refine
from trunchbull.compile.modules import ModuleReport
from trunchbull.compile.plan_check import check_plan_inputs
from trunchbull.compile.tools import CompiledTool, compile_tool_module
from trunchbull.compile.transformer.sources import MAX_TOTAL_SOURCE_BYTES
from trunchbull.release.canonical import BackgroundSha256
from trunchbull.release.files import ReleaseFiles
from trunchbull.release.manifest import MAX_CASES


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
    # modules a failed eval module names: presumably no evals, their eval errors only its consequence
    presumed = (
        set()
        if entries.evals_listed
        else named_by_failed(config.root, failed(reports, "eval"), {e.path for e in expansions}) - skipped
    )
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
        if expansion.path in skipped or expansion.path in presumed or not by_path[expansion.path].ok:
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
    check_release(evals, tools, config, diags, failed_tools=failed(reports, "tool"))
    if diags.has_errors():
        return None, evals
    try:
        return freeze(config, evals, tools, reports, deps, diags, cases_jsonl, cases_sha256), evals
    except InputProblem as problem:  # an input changed or vanished since it was read
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
    evals: list[CompiledEval],
    tools: list[CompiledTool],
    config: BenchmarkConfig,
    diags: Diagnostics,
    failed_tools: Sequence[str] = (),
) -> None:
    """Release-wide rules: unique eval IDs, case IDs and tool names; tool references; the case limit.
    `failed_tools`: tool modules that did not bundle or import (what they define is unknown)."""
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
            if name not in first_tool and not defined_by_failed(config.root, failed_tools, name):
                _unknown_tool(ev, name, where, requester, known, config.root, diags, failed_tools)
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
    ev: CompiledEval,
    name: str,
    where: Where,
    case_id: str | None,
    known: list[str],
    root: Path,
    diags: Diagnostics,
    failed_tools: Sequence[str],
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
        hint=(f"did you mean {near!r}? " if near else "")
        + f"known tools: {', '.join(known) or 'none'}"
        + (f" ({', '.join(failed_tools)} could not be read: see its error)" if failed_tools else ""),
    )


def check_total_sources(evals: list[CompiledEval], diags) -> None:
    """The repository-wide budget: all transformer sources of the release,
    each file counted once, at most 200 MiB. Reported at the eval whose
    source crosses the limit."""
    counted: dict[str, int] = {}
    for ev in evals:
        for rel, source in ev.transformer_sources.items():
            if rel in counted:
                continue
            counted[rel] = source["bytes"]
            total = sum(counted.values())
            if total > MAX_TOTAL_SOURCE_BYTES:
                where = ev.where or Where(ev.module)
                diags.error(
                    "transformer-sources-total",
                    f"with {rel}, transformer sources total {total:,} bytes; the repository-wide limit is 200 MiB "
                    f"({MAX_TOTAL_SOURCE_BYTES:,} bytes, each file counted once)",
                    file=ev.module,
                    line=where.line,
                    col=where.col,
                    hint="split the benchmark, or share source files between transformers",
                )
                return
