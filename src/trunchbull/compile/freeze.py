"""The freeze (stage 7): the compiled evals, tools, bundles and dependency
files become the release's files and its manifest (release/manifest.py),
with the hash of every input read."""

from __future__ import annotations

from pathlib import Path

from trunchbull import __version__
from trunchbull.common.diagnostics import Diagnostics
from trunchbull.common.paths import rel_posix
from trunchbull.common.userfiles import FileProblem, printable, read_file
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.compile.config import BenchmarkConfig
from trunchbull.node.dependencies import Dependencies
from trunchbull.compile.modules import ModuleReport
from trunchbull.compile.tools import CompiledTool
from trunchbull.release.canonical import BackgroundSha256, sha256_hex
from trunchbull.release.files import ReleaseFiles
from trunchbull.release.manifest import CASES, MODULES_DIR, bundle_name, eval_entry, new_manifest, tool_entry


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
        assert report.bundle_sha is not None  # a module in the release was bundled
        name = bundle_name(report.bundle_sha)
        if name not in payload:
            assert report.bundle_file is not None  # a module in the release was bundled
            payload[name] = report.bundle_file.read_bytes()
        return name

    eval_entries = [
        eval_entry(
            ev.id,
            ev.title,
            ev.description,
            ev.module,
            len(ev.case_ids),
            sorted(ev.evaluator_kinds),
            add_bundle(ev.module) if ev.custom else None,
        )
        for ev in evals
    ]
    tool_entries = [tool_entry(t.name, t.description, t.input_schema, t.module, add_bundle(t.module)) for t in tools]
    payload[CASES] = cases_jsonl
    for ev in evals:  # the files the cases' evaluator specs name (frozen judge templates)
        payload.update(ev.release_files)
    dependencies = None
    if deps:
        contents = {name: _read_input(config.root, path) for name, path in ((p.name, p) for p in deps.files())}
        if any(n.startswith(f"{MODULES_DIR}/") for n in payload):
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
    manifest = new_manifest(
        title=config.title,
        version=config.version,
        counts={
            "evals": len(evals),
            "cases": sum(len(ev.case_ids) for ev in evals),
            "tools": len(tools),
            "modules": sum(1 for n in payload if n.startswith(f"{MODULES_DIR}/")),
        },
        evals=eval_entries,
        tools=tool_entries,
        inputs=_inputs(config, evals, reports, deps),
        compiler_version=__version__,
        dependencies=dependencies,
        warnings=[d.render() for d in diags.sorted() if d.severity == "warning"],
    )
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


class InputProblem(Exception):
    def __init__(self, name: str, problem: FileProblem):
        super().__init__(f"{name} {problem}")
        self.name, self.problem = name, problem


def _read_input(root: Path, path: Path) -> bytes:
    """An input's bytes for the release's hashes (raises _InputProblem)."""
    try:
        return read_file(path)
    except FileProblem as problem:
        raise InputProblem(printable(rel_posix(path, root)), problem) from None
