"""The sources a compile step reads: a module's target and what it depends on (imports, data
files, transformers and their sources), optionally without going through transformers."""

from __future__ import annotations

from dataclasses import dataclass

from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.engine.addresses import Address
from pants.engine.fs import Digest
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
from pants.util.logging import LogLevel

from trunchbull_pants.target_types import TrunchbullTransformerTarget


@dataclass(frozen=True)
class ClosureRequest:
    address: Address
    # False: do not go through transformer targets. A transformer is named by a path string, not
    # imported, so only its runs and the expansion read it: editing it does not re-run
    # bundle-inspect of the eval naming it.
    through_transformers: bool = True


@dataclass(frozen=True)
class ClosureSources:
    digest: Digest


async def _without_transformers(address: Address) -> list[Target]:
    wrapped = await Get(WrappedTarget, WrappedTargetRequest(address, description_of_origin="the Trunchbull rules"))
    seen: dict[Address, Target] = {}
    frontier = [wrapped.target]
    while frontier:
        for tgt in frontier:
            seen[tgt.address] = tgt
        found = await MultiGet(Get(Targets, DependenciesRequest(tgt.get(Dependencies))) for tgt in frontier)
        following: dict[Address, Target] = {}
        for deps in found:
            for tgt in deps:
                if tgt.address not in seen and not isinstance(tgt, TrunchbullTransformerTarget):
                    following[tgt.address] = tgt
        frontier = list(following.values())
    return list(seen.values())


@rule(desc="Collect the sources a Trunchbull step reads", level=LogLevel.DEBUG)
async def closure_sources(request: ClosureRequest) -> ClosureSources:
    if request.through_transformers:
        transitive = await Get(TransitiveTargets, TransitiveTargetsRequest([request.address]))
        targets = list(transitive.closure)
    else:
        targets = await _without_transformers(request.address)
    sources = await Get(
        SourceFiles,
        SourceFilesRequest([tgt.get(SourcesField) for tgt in targets if tgt.has_field(SourcesField)]),
    )
    return ClosureSources(sources.snapshot.digest)


def rules():
    return collect_rules()
