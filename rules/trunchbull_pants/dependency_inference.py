"""Dependency inference for Trunchbull targets.

* Imports: each module is scanned by esbuild (the bundler of the compile
  steps) in its own cached process, with every import marked external so the
  module is scanned alone; local specifiers are resolved the way esbuild
  resolves them (extensions, `./x.js` -> `./x.ts`, `index.*`) and their
  owners become dependencies. So a helper anywhere in the repository (e.g.
  `shared/prompts.ts`, owned by `trunchbull_sources`) is a dependency of
  exactly the modules that import it.
* File references: relative path string literals in a module (`cases:
  "./questions.csv"`, `transformer: "./make.ts"`, transformer `sources`) that
  name an existing file make that file a dependency, so data files and
  transformers reach the sandboxes of the steps that read them.
* A local import that resolves to no file, to a file no target owns, or out of the repository
  is logged once as a warning with its `path:line:col` (the compile reports it as an error).
"""

from __future__ import annotations

import json
import logging
import os.path
import pkgutil
import re
from dataclasses import dataclass

from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior
from pants.engine.addresses import Address
from pants.engine.fs import CreateDigest, Digest, DigestContents, FileContent, MergeDigests, PathGlobs, Snapshot
from pants.engine.internals.graph import Owners, OwnersRequest
from pants.engine.process import FallibleProcessResult, Process
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.target import (
    FieldSet,
    HydratedSources,
    HydrateSourcesRequest,
    InferDependenciesRequest,
    InferredDependencies,
)
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from trunchbull_pants.target_types import (
    MODULE_EXTENSIONS,
    TrunchbullDependenciesField,
    TrunchbullSingleSourceField,
)
from trunchbull_pants.toolchain import NODE, TOOLCHAIN_DIR, NodeToolchain, ToolchainRequest

SCANNER = "__trunchbull_scan_imports.mjs"
RESOLVE_EXTENSIONS = (".tsx", ".ts", ".jsx", ".js", ".mts", ".mjs", ".cts", ".cjs", ".json")
TS_REWRITES = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
logger = logging.getLogger(__name__)
LEAVES = "it leaves the repository"
_PATH_LITERAL = re.compile(r"""(["'`])(\.{1,2}/[^"'`\n\r$]*)\1""")


@dataclass(frozen=True)
class ScanImportsRequest:
    path: str
    digest: Digest  # holds the file at `path`


@dataclass(frozen=True)
class ScannedImports:
    specifiers: tuple[str, ...]


@rule(desc="Scan imports with esbuild", level=LogLevel.DEBUG)
async def scan_imports(request: ScanImportsRequest) -> ScannedImports:
    script = pkgutil.get_data(__name__.rsplit(".", 1)[0], "scan_imports.mjs")
    assert script is not None
    toolchain, script_digest = await MultiGet(
        Get(NodeToolchain, ToolchainRequest()),
        Get(Digest, CreateDigest([FileContent(SCANNER, script)])),
    )
    input_digest = await Get(Digest, MergeDigests([request.digest, script_digest]))
    result = await Get(
        FallibleProcessResult,
        Process(
            argv=(NODE, SCANNER, request.path),
            input_digest=input_digest,
            immutable_input_digests={TOOLCHAIN_DIR: toolchain.digest},
            env={"TRUNCHBULL_TOOLCHAIN": TOOLCHAIN_DIR},
            description=f"Scan imports of {request.path}",
            level=LogLevel.DEBUG,
        ),
    )
    try:
        data = json.loads(result.stdout.decode())
    except ValueError:
        return ScannedImports(())
    return ScannedImports(tuple(sorted({i["path"] for i in data.get("imports", [])})))


def import_candidates(importer: str, specifier: str) -> list[str]:
    """Buildroot-relative files a local import may resolve to, in esbuild's order."""
    if not specifier.startswith(("./", "../")):
        return []
    specifier = specifier.split("?", 1)[0].split("#", 1)[0]
    base = os.path.normpath(os.path.join(os.path.dirname(importer), specifier))
    if base.startswith("../") or base == "..":
        return []
    candidates = [base] + [base + ext for ext in RESOLVE_EXTENSIONS]
    stem, ext = os.path.splitext(base)
    candidates += [stem + new for new in TS_REWRITES.get(ext, ())]
    candidates += [f"{base}/index{ext}" for ext in RESOLVE_EXTENSIONS]
    return candidates


def referenced_paths(importer: str, text: str) -> list[str]:
    """Relative path string literals in a module, as buildroot-relative paths."""
    found = []
    for match in _PATH_LITERAL.finditer(text):
        path = os.path.normpath(os.path.join(os.path.dirname(importer), match.group(2)))
        if not path.startswith("../") and path != "..":
            found.append(path)
    return found


@dataclass(frozen=True)
class TrunchbullInferenceFieldSet(FieldSet):
    required_fields = (TrunchbullSingleSourceField, TrunchbullDependenciesField)

    source: TrunchbullSingleSourceField
    dependencies: TrunchbullDependenciesField


class InferTrunchbullDependencies(InferDependenciesRequest):
    infer_from = TrunchbullInferenceFieldSet


@rule(desc="Infer Trunchbull dependencies", level=LogLevel.DEBUG)
async def infer_trunchbull_dependencies(request: InferTrunchbullDependencies) -> InferredDependencies:
    field_set = request.field_set
    sources = await Get(HydratedSources, HydrateSourcesRequest(field_set.source))
    if len(sources.snapshot.files) != 1:
        return InferredDependencies([])
    path = sources.snapshot.files[0]
    if not path.endswith(MODULE_EXTENSIONS):
        return InferredDependencies([])
    scanned, contents = await MultiGet(
        Get(ScannedImports, ScanImportsRequest(path, sources.snapshot.digest)),
        Get(DigestContents, Digest, sources.snapshot.digest),
    )
    text = contents[0].content.decode("utf-8", "replace") if contents else ""
    per_import = [import_candidates(path, spec) for spec in scanned.specifiers]
    references = [p for p in referenced_paths(path, text) if p != path]
    wanted = sorted({c for cands in per_import for c in cands} | set(references))
    if not wanted:
        _warn_unresolved(path, text, [(spec, LEAVES) for spec in scanned.specifiers if is_local(spec)])
        return InferredDependencies([])
    existing = await Get(
        Snapshot,
        PathGlobs(
            [w for w in wanted if not any(ch in w for ch in "*?[]!")],
            glob_match_error_behavior=GlobMatchErrorBehavior.ignore,
        ),
    )
    files = set(existing.files)
    chosen = set()
    unresolved: list[tuple[str, str]] = []  # (specifier, why)
    imported: dict[str, str] = {}  # file -> the specifier importing it
    for spec, cands in zip(scanned.specifiers, per_import):
        first = next((c for c in cands if c in files), None)
        if first:
            chosen.add(first)
            imported.setdefault(first, spec)
        elif is_local(spec):
            unresolved.append((spec, f"no file {cands[0]}{{,.ts,.js,…}}" if cands else LEAVES))
    chosen.update(r for r in references if r in files)
    chosen.discard(path)
    if not chosen:
        _warn_unresolved(path, text, unresolved)
        return InferredDependencies([])
    ordered = sorted(chosen)
    per_file = await MultiGet(Get(Owners, OwnersRequest((f,))) for f in ordered)
    for file, owners in zip(ordered, per_file):
        if not owners and file in imported:
            unresolved.append((imported[file], f"no target owns {file} (add `trunchbull_sources()` to its BUILD)"))
    _warn_unresolved(path, text, unresolved)
    address: Address = field_set.address
    return InferredDependencies(sorted({a for owners in per_file for a in owners if a != address}))


def is_local(specifier: str) -> bool:
    return specifier.startswith(("./", "../"))


def specifier_location(text: str, specifier: str) -> tuple[int, int] | None:
    """(line, column), 1-based, of the first string literal holding `specifier` (its quote)."""
    match = re.search(r"""(["'`])""" + re.escape(specifier) + r"\1", text)
    if not match:
        return None
    start = match.start()
    line_start = text.rfind("\n", 0, start) + 1
    return text.count("\n", 0, start) + 1, start - line_start + 1


def unresolved_import_warning(path: str, text: str, unresolved: list[tuple[str, str]]) -> str:
    """One warning for all of a module's local imports that no file or target answers, modelled
    on Pants' own for Python imports it cannot infer."""
    lines = []
    for spec, why in unresolved:
        where = specifier_location(text, spec)
        at = f"{path}:{where[0]}:{where[1]}" if where else path
        lines.append(f"  * {at}: import {json.dumps(spec)}: {why}")
    return (
        f"Pants cannot infer a dependency of {path} on the local imports below; the compile "
        "reports them too:\n\n" + "\n".join(lines) + "\n\nA local import must name an existing file "
        "in the repository, owned by a target: the benchmark's own files are, a helper outside "
        "every benchmark root needs `trunchbull_sources()` in its directory's BUILD file."
    )


def _warn_unresolved(path: str, text: str, unresolved: list[tuple[str, str]]) -> None:
    if unresolved:
        logger.warning(unresolved_import_warning(path, text, unresolved))


def rules():
    return [
        *collect_rules(),
        UnionRule(InferDependenciesRequest, InferTrunchbullDependencies),
    ]
