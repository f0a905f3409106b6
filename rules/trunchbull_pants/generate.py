"""Target generation for `trunchbull_release`: one target per benchmark file.

Generation runs on every command that reads the BUILD file, so it runs no
process: it globs the files, reads the static config's `evals`/`tools` lists
in Python (static_config.py) and otherwise applies the discovery rules of the
compiler (SPEC §3.1). The compile steps re-read the config with the
compiler's own parser and are the authority on what is an eval.
"""

from __future__ import annotations

import os.path
import re
from dataclasses import dataclass

from pants.engine.fs import DigestContents, DigestSubset, PathGlobs, Snapshot
from pants.engine.internals.native_engine import Address
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.target import GeneratedTargets, GenerateTargetsRequest, SingleSourceField, Target
from pants.engine.unions import UnionMembership, UnionRule
from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior

from trunchbull_pants.static_config import config_entrypoints
from trunchbull_pants.target_types import (
    CONFIG_NAMES,
    MODULE_EXTENSIONS,
    TrunchbullEvalTarget,
    TrunchbullReleaseDependenciesField,
    TrunchbullReleaseOutputPathField,
    TrunchbullReleasePackageTarget,
    TrunchbullReleaseTarField,
    TrunchbullReleaseSourcesField,
    TrunchbullReleaseTarget,
    TrunchbullSourceTarget,
    TrunchbullToolTarget,
    TrunchbullTransformerTarget,
)

ALWAYS_EXCLUDED = (
    "**/BUILD",
    "**/BUILD.*",
    "**/.*",
    "**/.*/**",
    "**/node_modules/**",
    "dist/**",
)

_TRANSFORM_MEMBER = re.compile(r"(?<![.\w$])transform\s*[:(,}]")
_NAME_MEMBER = re.compile(r"(?<![.\w$])name\s*[:,}]")
_EXPORT_DEFAULT = re.compile(r"\bexport\s+default\b")


def is_module(path: str) -> bool:
    return path.endswith(MODULE_EXTENSIONS)


def discoverable(rel: str, directory: str) -> bool:
    """SPEC §3.1 discovery under `<root>/<directory>/`."""
    if not rel.startswith(directory + "/") or not is_module(rel):
        return False
    parts = rel.split("/")
    name = parts[-1]
    if any(p.startswith(".") or p == "node_modules" for p in parts):
        return False
    if ".test." in name or ".spec." in name or name.endswith((".d.ts", ".d.mts")):
        return False
    return True


def looks_like_transformer(text: str) -> bool:
    """A module whose default export is `{ name, transform }` (not an eval)."""
    return bool(_EXPORT_DEFAULT.search(text) and _TRANSFORM_MEMBER.search(text) and _NAME_MEMBER.search(text))


@dataclass(frozen=True)
class ReleaseFiles:
    """What generation decided about a benchmark root's files."""

    root: str
    files: tuple[str, ...]  # root-relative, sorted
    config_file: str | None
    evals: tuple[str, ...]
    tools: tuple[str, ...]
    transformers: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseFilesRequest:
    address: Address
    globs: tuple[str, ...]


@rule
async def classify_release_files(request: ReleaseFilesRequest) -> ReleaseFiles:
    root = request.address.spec_path

    def full(glob: str) -> str:
        negate = glob.startswith("!")
        path = os.path.join(root, glob.lstrip("!")) if root else glob.lstrip("!")
        return ("!" if negate else "") + path

    snapshot = await Get(
        Snapshot,
        PathGlobs(
            [full(g) for g in request.globs] + [full("!" + g) for g in ALWAYS_EXCLUDED],
            glob_match_error_behavior=GlobMatchErrorBehavior.ignore,
        ),
    )
    prefix = f"{root}/" if root else ""
    files = tuple(sorted((f[len(prefix) :] for f in snapshot.files), key=str.encode))
    configs = [f for f in files if f in CONFIG_NAMES]
    config_file = configs[0] if len(configs) == 1 else None

    module_paths = [f for f in files if is_module(f)]
    contents = await Get(DigestContents, DigestSubset(snapshot.digest, PathGlobs([prefix + f for f in module_paths])))
    texts = {fc.path[len(prefix) :]: fc.content.decode("utf-8", "replace") for fc in contents}

    listed_evals = listed_tools = None
    if config_file:
        listed_evals, listed_tools = config_entrypoints(texts.get(config_file, ""))
    file_set = set(files)
    if listed_evals is not None:
        evals = [p for p in listed_evals if p in file_set]
    else:
        evals = [f for f in files if discoverable(f, "evals")]
    if listed_tools is not None:
        tools = [p for p in listed_tools if p in file_set]
    else:
        tools = [f for f in files if discoverable(f, "tools")]
    entry = set(evals) | set(tools)
    transformers = [
        f
        for f in module_paths
        if f not in CONFIG_NAMES
        and (f not in entry or (listed_evals is None and f in evals))
        and f not in tools
        and looks_like_transformer(texts.get(f, ""))
    ]
    return ReleaseFiles(
        root=root,
        files=files,
        config_file=config_file,
        evals=tuple(e for e in evals if e not in transformers),
        tools=tuple(tools),
        transformers=tuple(transformers),
    )


class GenerateTrunchbullReleaseRequest(GenerateTargetsRequest):
    generate_from = TrunchbullReleaseTarget


@rule
async def generate_trunchbull_release_targets(
    request: GenerateTrunchbullReleaseRequest, union_membership: UnionMembership
) -> GeneratedTargets:
    generator = request.generator
    classified = await Get(
        ReleaseFiles,
        ReleaseFilesRequest(generator.address, tuple(generator[TrunchbullReleaseSourcesField].value or ())),
    )
    evals, tools, transformers = (
        set(classified.evals),
        set(classified.tools),
        set(classified.transformers),
    )
    # `output_path` and `tar` are moved to the package target only.
    package_only = {
        TrunchbullReleaseOutputPathField.alias,
        TrunchbullReleaseTarField.alias,
        TrunchbullReleaseSourcesField.alias,
    }
    file_template = {k: v for k, v in request.template.items() if k not in package_only}
    generated: list[Target] = []
    for rel in classified.files:
        cls: type[Target]
        if rel in evals:
            cls = TrunchbullEvalTarget
        elif rel in tools:
            cls = TrunchbullToolTarget
        elif rel in transformers:
            cls = TrunchbullTransformerTarget
        else:
            cls = TrunchbullSourceTarget
        generated.append(
            cls(
                {**file_template, SingleSourceField.alias: rel},
                request.template_address.create_file(rel),
                union_membership,
            )
        )
    generated.append(
        TrunchbullReleasePackageTarget(
            {
                **request.template,
                TrunchbullReleaseDependenciesField.alias: [tgt.address.spec for tgt in generated],
            },
            request.template_address.create_generated(request.template_address.target_name),
            union_membership,
        )
    )
    return GeneratedTargets(generator, generated)


def rules():
    return [
        *collect_rules(),
        UnionRule(GenerateTargetsRequest, GenerateTrunchbullReleaseRequest),
    ]
