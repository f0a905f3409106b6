"""`ruff format --check` as a linter of `./pants lint`, with Pants' own ruff tool.

Pants 2.17's ruff backend runs `ruff` (lint) and `ruff --fix` (fix); `ruff format` came later
(Pants 2.20 has it as `pants.backend.experimental.python.lint.ruff.format`). This repository-local
backend adds the formatter check the same way, with the same `[ruff]` PEX, resolve and config,
until Pants is upgraded. It only checks: formatting is applied with `ruff format` itself.
"""

from __future__ import annotations

from typing import Any

from pants.backend.python.lint.ruff.subsystem import Ruff, RuffFieldSet
from pants.backend.python.util_rules.pex import PexRequest, VenvPex, VenvPexProcess
from pants.core.goals.lint import LintResult, LintTargetsRequest
from pants.core.util_rules.config_files import ConfigFiles, ConfigFilesRequest
from pants.core.util_rules.partitions import PartitionerType
from pants.core.util_rules.source_files import SourceFiles, SourceFilesRequest
from pants.engine.fs import Digest, MergeDigests
from pants.engine.process import FallibleProcessResult
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.logging import LogLevel
from pants.util.meta import classproperty
from pants.util.strutil import pluralize


class RuffFormatCheckRequest(LintTargetsRequest):
    field_set_type = RuffFieldSet
    tool_subsystem = Ruff

    @classproperty
    def tool_name(cls) -> str:
        return "ruff format --check"

    partitioner_type = PartitionerType.DEFAULT_SINGLE_PARTITION


@rule(desc="Check formatting with ruff format", level=LogLevel.DEBUG)
async def ruff_format_check(request: RuffFormatCheckRequest.Batch[RuffFieldSet, Any], ruff: Ruff) -> LintResult:
    sources = await Get(SourceFiles, SourceFilesRequest(field_set.source for field_set in request.elements))
    ruff_pex, config_files = await MultiGet(
        Get(VenvPex, PexRequest, ruff.to_pex_request()),
        Get(ConfigFiles, ConfigFilesRequest, ruff.config_request(sources.snapshot.dirs)),
    )
    input_digest = await Get(Digest, MergeDigests((sources.snapshot.digest, config_files.snapshot.digest)))
    result = await Get(
        FallibleProcessResult,
        VenvPexProcess(
            ruff_pex,
            argv=("format", "--check", *([f"--config={ruff.config}"] if ruff.config else []), *sources.snapshot.files),
            input_digest=input_digest,
            description=f"Run ruff format --check on {pluralize(len(sources.snapshot.files), 'file')}.",
            level=LogLevel.DEBUG,
        ),
    )
    return LintResult.create(request, result, strip_chroot_path=True)


def rules():
    return [*collect_rules(), *RuffFormatCheckRequest.rules()]
