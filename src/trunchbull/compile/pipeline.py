"""The compile pipeline, one-way: config → discovery → bundle → inspect →
expand → validate → freeze. The CLI runs it in one process; steps.py exposes
the same stages as file-in/file-out processes for Pants."""

from __future__ import annotations

import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from trunchbull.common.diagnostics import Diagnostics
from trunchbull.common.paths import rel_posix
from trunchbull.common.userfiles import NOT_REGULAR_CODE, FileProblem
from trunchbull.compile.assembly import assemble
from trunchbull.compile.config import BenchmarkConfig, locate_root, read_config, report_file_problem
from trunchbull.compile.deps import find_dependencies
from trunchbull.node.dependencies import install
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.compile.discovery import Entrypoints, find_entrypoints
from trunchbull.compile.expansion import Expansion, expand_module
from trunchbull.compile.modules import ModuleReport, bundle_modules, bundle_timeout_diagnostic, inspect_modules
from trunchbull.node.sandbox import HelperTimeout, NodeHelper
from trunchbull.node.toolchain import cache_root, toolchain
from trunchbull.release.files import ReleaseFiles

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass
class CompileOutcome:
    root: Path
    diagnostics: Diagnostics
    release: ReleaseFiles | None = None
    evals: list[CompiledEval] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)  # root-relative: the config, entrypoints, transformers
    install_dir: Path | None = None  # where the benchmark's dependencies are installed


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
        outcome.modules = [*([config.config_file] if config.config_file else []), *entries.evals, *entries.tools]
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
        outcome.install_dir = install_dir
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
        outcome.modules.extend(sorted({e.transformer for e in expansions if e.transformer} - set(outcome.modules)))
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
