"""`{ kind: "non_empty" }`: the trimmed output is not empty."""

from __future__ import annotations

from trunchbull.evaluators.inputs import OUTPUT, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind, Result


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    def grade(output: str) -> Result:
        if output.strip():
            return "pass", 1.0, "the output is not empty", None
        return "fail", 0.0, "the output is empty or only whitespace" if output else "the output is empty", None

    return grade


KIND = Kind(
    name="non_empty",
    order=1,
    keys=frozenset({"kind"}),
    reads=(OUTPUT,),
    prepare=prepare,
    check=None,
    example={"kind": "non_empty"},
    passes_when="the trimmed output is not empty",
    from_rows="nothing",
)
