"""A custom evaluator as the grader sees it (SPEC §4): the eval module's own
`evaluate` function, which the compiler records as `{kind: "custom", module:
<its bundle>}`. It reads every sample input but the prompt; its prepared
evaluator returns a `CustomCall` (the input object for the function), which
the grader defers and runs in the evaluator pool (pool.py) when grading
finishes. Not a
declarative kind: authors cannot write this spec (specs.py says so)."""

from __future__ import annotations

from typing import NamedTuple

from trunchbull.evaluators.inputs import CUSTOM_INPUTS, Preparation
from trunchbull.evaluators.registry import Evaluate, Kind


class CustomCall(NamedTuple):
    """One call of a custom evaluator: the module's bundle name in the release, and its input."""

    module: str
    input: dict


def prepare(spec: dict, preparation: Preparation) -> Evaluate:
    module = spec["module"]
    names = CUSTOM_INPUTS

    def evaluate(*values) -> CustomCall:
        return CustomCall(module, dict(zip(names, values)))

    return evaluate


CUSTOM = Kind(
    name="custom",
    order=0,
    keys=frozenset({"kind", "module"}),
    reads=CUSTOM_INPUTS,
    prepare=prepare,
    check=None,
    example={"kind": "custom", "module": "modules/<sha256>.mjs"},
    passes_when="the eval's `evaluate` function returns `passed: true`",
)
