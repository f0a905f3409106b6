"""`pants package path/to/root:release`: the release directory (and tar) under `dist/`."""

from __future__ import annotations

from dataclasses import dataclass

from pants.core.goals.package import BuiltPackage, BuiltPackageArtifact, PackageFieldSet
from pants.engine.fs import AddPrefix, CreateDigest, Digest, DigestContents, FileContent, MergeDigests, Snapshot
from pants.engine.rules import Get, collect_rules, rule
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from trunchbull_pants.failures import compile_failure
from trunchbull_pants.compile_release import CompiledRelease, CompileReleaseRequest
from trunchbull_pants.target_types import (
    TrunchbullReleaseOutputPathField,
    TrunchbullReleaseSourcesField,
    TrunchbullReleaseTarField,
)


@dataclass(frozen=True)
class TrunchbullReleaseFieldSet(PackageFieldSet):
    required_fields = (TrunchbullReleaseSourcesField,)

    sources: TrunchbullReleaseSourcesField
    output_path: TrunchbullReleaseOutputPathField
    tar: TrunchbullReleaseTarField


@rule(desc="Package a Trunchbull release", level=LogLevel.DEBUG)
async def package_trunchbull_release(field_set: TrunchbullReleaseFieldSet) -> BuiltPackage:
    compiled = await Get(CompiledRelease, CompileReleaseRequest(field_set.address, tar=bool(field_set.tar.value)))
    if compiled.exit_code != 0:
        raise compile_failure(field_set.address.maybe_convert_to_target_generator(), compiled.diagnostics)
    output_path = field_set.output_path.value_or_default(file_ending=None)
    pieces = [await Get(Digest, AddPrefix(compiled.digest, output_path))]
    if field_set.tar.value:
        # `<output_path>.tar` beside the directory, as `trunchbull build --tar` writes it.
        contents = await Get(DigestContents, Digest, compiled.tar)
        pieces.append(await Get(Digest, CreateDigest([FileContent(f"{output_path}.tar", c.content) for c in contents])))
    merged = await Get(Snapshot, MergeDigests(pieces))
    extra = [compiled.diagnostics.rstrip()] if compiled.diagnostics.strip() else []
    return BuiltPackage(
        merged.digest,
        artifacts=(BuiltPackageArtifact(relpath=output_path, extra_log_lines=tuple(extra)),),
    )


def rules():
    return [*collect_rules(), UnionRule(PackageFieldSet, TrunchbullReleaseFieldSet)]
