"""The evaluator kinds (SPEC §4): one module per declarative kind under
kinds/, each defining `KIND`, the single source of truth for that kind —
its spec keys and compile-time checks, how it grades, whether a CSV eval may
use it, and its row in docs/evaluators.md (tests/evaluators/test_registry.py
holds the docs to it). Adding a kind is adding one module there.

A custom evaluator (a module-level `evaluate` function) is not a declarative
kind: the grader runs it in the evaluator pool (pool.py)."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from trunchbull.evaluators.spec_checks import SpecProblem
    from trunchbull.evaluators.tool_calls import ToolSchemas

# (outcome "pass" | "fail" | "error", score, message, details)
Result = tuple[str, "float | None", str, Any]
# output, normalized tool calls → Result
Grader = Callable[[str, list], Result]
# spec, normalized spec (to complete), problems (to append to), the case's tools (None: not known)
Check = Callable[[dict, dict, "list[SpecProblem]", "list[str] | None"], None]
# spec, the case's tools entries (names, or { tool, as }), the release's tool schemas → Grader
Prepare = Callable[[dict, list, "ToolSchemas"], Grader]


@dataclass(frozen=True)
class Kind:
    name: str
    order: int  # its place in messages ("kinds: …") and in the docs table
    keys: frozenset[str]  # the spec's allowed keys, `kind` included
    prepare: Prepare
    check: Check | None  # compile-time checks beyond the allowed keys
    example: dict  # a valid spec (docs, tests)
    passes_when: str  # the docs table's "passes when" cell
    csv_expected: bool | None = None  # a CSV eval may use it: True takes `expected` from each row, False none


@cache
def kinds() -> dict[str, Kind]:
    """Every declarative kind by name, in their documented order."""
    from trunchbull.evaluators import kinds as package

    found = [
        importlib.import_module(f"{package.__name__}.{module.name}").KIND
        for module in pkgutil.iter_modules(package.__path__)
    ]
    return {kind.name: kind for kind in sorted(found, key=lambda k: k.order)}


def csv_kinds() -> list[str]:
    return [name for name, kind in kinds().items() if kind.csv_expected is not None]


def prepare(spec: dict, case_tools: list | None = None, schemas: ToolSchemas | None = None) -> Grader:
    """A grader for one declarative spec. Raises ValueError for a spec that is
    not a valid built-in spec (the release is then unusable)."""
    from trunchbull.evaluators.tool_calls import ToolSchemas

    name = spec.get("kind")
    kind = kinds().get(name) if isinstance(name, str) else None
    if kind is None:
        raise ValueError(f"unknown evaluator kind {spec.get('kind')!r}")
    try:
        return kind.prepare(spec, list(case_tools or []), schemas or ToolSchemas([]))
    except KeyError as err:
        raise ValueError(f"evaluator {kind.name!r}: missing {err}") from None
