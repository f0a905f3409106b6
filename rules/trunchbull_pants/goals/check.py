"""`pants check path/to/root:release`: compile without writing, print the compiler's
diagnostics; fails when the benchmark has errors."""

from __future__ import annotations

from pants.core.goals.check import CheckRequest, CheckResult, CheckResults
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.engine.unions import UnionRule
from pants.util.logging import LogLevel

from trunchbull_pants.compile_release import CompiledRelease, CompileReleaseRequest
from trunchbull_pants.goals.package import TrunchbullReleaseFieldSet


class TrunchbullCheckRequest(CheckRequest):
    field_set_type = TrunchbullReleaseFieldSet
    tool_name = "trunchbull"


@rule(desc="Check Trunchbull benchmarks", level=LogLevel.DEBUG)
async def check_trunchbull(request: TrunchbullCheckRequest) -> CheckResults:
    compiled = await MultiGet(Get(CompiledRelease, CompileReleaseRequest(fs.address)) for fs in request.field_sets)
    return CheckResults(
        [
            CheckResult(
                exit_code=c.exit_code,
                stdout="",
                stderr=c.diagnostics,
                partition_description=str(c.address.maybe_convert_to_target_generator()),
            )
            for c in compiled
        ],
        checker_name="trunchbull",
    )


def rules():
    return [*collect_rules(), UnionRule(CheckRequest, TrunchbullCheckRequest)]
