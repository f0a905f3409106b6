"""`{ kind: "exact", expected }`: the trimmed output equals `expected`."""

from __future__ import annotations

from trunchbull.evaluators.messages import preview
from trunchbull.evaluators.inputs import OUTPUT, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind, Result
from trunchbull.evaluators.spec_checks import check_expected_string


def check(spec, out, problems, case_tools) -> None:
    check_expected_string(spec, problems, strict_whitespace=True)


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    expected = spec["expected"]
    pass_message = f"the trimmed output equals {preview(expected)}"

    def grade(output: str) -> Result:
        trimmed = output.strip()
        if trimmed == expected:
            return "pass", 1.0, pass_message, None
        if trimmed.casefold() == expected.casefold():
            why = "differs only in letter case"
        elif " ".join(trimmed.split()) == " ".join(expected.split()):
            why = "differs only in inner whitespace"
        else:
            why = f"is {preview(trimmed)}"
        return "fail", 0.0, f"expected exactly {preview(expected)}; the trimmed output {why}", None

    return grade


KIND = Kind(
    name="exact",
    order=2,
    keys=frozenset({"kind", "expected"}),
    reads=(OUTPUT,),
    prepare=prepare,
    check=check,
    example={"kind": "exact", "expected": "30 days"},
    passes_when="`output.strip() == expected`",
    from_rows="expected",
)
