"""A custom evaluator as the grader sees it (SPEC §4): the eval module's own
`evaluate` function, which the compiler records as `{kind: "custom", module:
<its bundle>}`. It reads every sample input but the prompt; its prepared
evaluator returns a `CustomCall` (the input object for the function), which
the grader defers and runs in the evaluator pool (pool.py) when grading
finishes. Its `Kind`, `CUSTOM`, is the registry's (registry.py): not a
declarative kind, authors cannot write this spec (specs.py says so)."""

from __future__ import annotations

from typing import Callable, NamedTuple

from trunchbull.evaluators.inputs import CUSTOM_INPUTS, Preparation


class CustomCall(NamedTuple):
    """One call of a custom evaluator: the module's bundle name in the release, and its input."""

    module: str
    input: dict


def prepare(spec: dict, preparation: Preparation) -> Callable[..., CustomCall]:
    module = spec["module"]
    names = CUSTOM_INPUTS

    def evaluate(*values) -> CustomCall:
        return CustomCall(module, dict(zip(names, values)))

    return evaluate
