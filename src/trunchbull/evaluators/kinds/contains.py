"""`{ kind: "contains", expected }`: the trimmed `expected` is in the output, ignoring case."""

from __future__ import annotations

from trunchbull.evaluators.messages import preview
from trunchbull.evaluators.inputs import OUTPUT, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind, Result
from trunchbull.evaluators.spec_checks import check_expected_string


def check(spec, out, problems, case_tools) -> None:
    check_expected_string(spec, problems, strict_whitespace=False)


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    needle = spec["expected"].strip().casefold()
    pass_message = f"the output contains {preview(spec['expected'].strip())} (ignoring case)"
    fail_message = f"the output does not contain {preview(spec['expected'].strip())} (ignoring case)"

    def grade(output: str) -> Result:
        if needle in output.casefold():
            return "pass", 1.0, pass_message, None
        return "fail", 0.0, fail_message, None

    return grade


KIND = Kind(
    name="contains",
    order=3,
    keys=frozenset({"kind", "expected"}),
    reads=(OUTPUT,),
    prepare=prepare,
    check=check,
    example={"kind": "contains", "expected": "30 days"},
    passes_when="`casefold(expected.strip())` is a substring of `casefold(output)`",
    from_rows="expected",
)
