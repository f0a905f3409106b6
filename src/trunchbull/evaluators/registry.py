"""The evaluator kinds (SPEC §4): one module per declarative kind under
kinds/, each defining `KIND`, the single source of truth for that kind —
its spec keys and compile-time checks, what it reads, how it grades, whether
an eval whose rows give `expected` (CSV) may use it, and its row in docs/evaluators.md
(tests/evaluators/test_registry.py holds the docs to it). Adding a kind is
adding one module there.

A custom evaluator (a module-level `evaluate` function) is not a declarative
kind: `{kind: "custom", module}` is what the compiler writes for it, and the
grader runs it in the evaluator pool (custom.py, pool.py). `evaluators()`
holds both, for the grader.

`kinds_from(package)` adds, for a block, the kinds of another package laid
out like kinds/ (each module defining `KIND`): how a test adds a kind of its
own without a module in this package (tests/evaluators/kinds/)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Literal, Union

from trunchbull.common.registry import find_entries
from trunchbull.evaluators import custom
from trunchbull.evaluators.custom import CustomCall
from trunchbull.evaluators.inputs import CUSTOM_INPUTS, INPUTS, NOTHING, PREPARATION_INPUTS, SAMPLE_INPUTS, Preparation
from trunchbull.evaluators.judging import JudgeRequest
from trunchbull.evaluators.result import Result

if TYPE_CHECKING:
    from trunchbull.evaluators.spec_checks import SpecProblem

# What a prepared evaluator returns: its result, or work the grader defers to
# the end (a custom evaluator's call for the pool, a judge's request).
Outcome = Union[Result, CustomCall, JudgeRequest]
# A prepared evaluator: the sample inputs its kind reads, in the declared order → Outcome
Evaluate = Callable[..., Outcome]
# spec, normalized spec (to complete), problems (to append to), the case's tools (None: not known)
Check = Callable[[dict, dict, "list[SpecProblem]", "list[str] | None"], None]
# spec, the preparation inputs the kind reads → Evaluate
Prepare = Callable[[dict, Preparation], Evaluate]
# spec → (path inside the spec, offered tool name, input) for each tool input it names
ToolInputs = Callable[[dict], Iterable[tuple[str, str, dict]]]
# compiled spec → the release files it names (name → bytes), written into the release with it
ReleaseFiles = Callable[[dict], "dict[str, bytes]"]


@dataclass(frozen=True)
class Kind:
    name: str
    order: int  # its place in messages ("kinds: …") and in the docs table
    keys: frozenset[str]  # the spec's allowed keys, `kind` included
    reads: tuple[str, ...]  # the inputs it reads (inputs.py); the sample inputs in the order `Evaluate` takes them
    prepare: Prepare
    check: Check | None  # compile-time checks beyond the allowed keys
    example: dict  # a valid spec (docs, tests)
    passes_when: str  # the docs table's "passes when" cell
    # In an eval whose data file's rows give `expected` (CSV): "expected", it takes each row's
    # `expected`; "nothing", it reads none; None, it cannot grade such an eval.
    from_rows: Literal["expected", "nothing"] | None = None
    # the tool inputs a spec names, checked at compile time against each tool's input schema
    tool_inputs: ToolInputs | None = None
    # the release files a compiled spec names (a frozen judge template), for the freeze to write
    release_files: ReleaseFiles | None = None

    def __post_init__(self) -> None:
        unknown = [name for name in self.reads if name not in INPUTS]
        if unknown or len(set(self.reads)) != len(self.reads):
            raise ValueError(
                f"evaluator kind {self.name!r} reads {list(self.reads)}: each of {', '.join(INPUTS)} at most once"
            )

    @property
    def sample_inputs(self) -> tuple[str, ...]:
        return tuple(name for name in self.reads if name in SAMPLE_INPUTS)

    @property
    def preparation_inputs(self) -> tuple[str, ...]:
        return tuple(name for name in self.reads if name in PREPARATION_INPUTS)


BUILT_IN = "trunchbull.evaluators.kinds"
_packages: list[str] = [BUILT_IN]


def kinds() -> dict[str, Kind]:
    """Every declarative kind by name, in their documented order."""
    return _kinds_of(tuple(_packages))


@cache
def _kinds_of(packages: tuple[str, ...]) -> dict[str, Kind]:
    found = [kind for package in packages for kind in find_entries(package, "KIND", Kind)]
    by_name: dict[str, Kind] = {}
    for kind in sorted(found, key=lambda k: k.order):
        if kind.name in by_name or kind.name == "custom":
            raise ValueError(f"two evaluator kinds are named {kind.name!r}")
        by_name[kind.name] = kind
    return by_name


@contextmanager
def kinds_from(package: str) -> Iterator[None]:
    """The kinds of `package` (an importable package of kind modules) added to the registry for the block."""
    _packages.append(package)
    try:
        kinds()  # a clash with a kind already known is found here
        yield
    finally:
        _packages.remove(package)


# A custom evaluator: not a declarative kind (authors cannot write this spec;
# specs.py says so), graded through the evaluator pool (custom.py).
CUSTOM = Kind(
    name="custom",
    order=0,
    keys=frozenset({"kind", "module"}),
    reads=CUSTOM_INPUTS,
    prepare=custom.prepare,
    check=None,
    example={"kind": "custom", "module": "modules/<sha256>.mjs"},
    passes_when="the eval's `evaluate` function returns `passed: true`",
)


def evaluators() -> dict[str, Kind]:
    """What the grader resolves a spec's `kind` with: the declarative kinds and `custom`."""
    return {**kinds(), CUSTOM.name: CUSTOM}


def row_kinds() -> list[str]:
    """The kinds that may grade an eval whose data file's rows give `expected` (CSV)."""
    return [name for name, kind in kinds().items() if kind.from_rows is not None]


def prepare(spec: dict, preparation: Preparation = NOTHING) -> Evaluate:
    """A prepared evaluator for one declarative spec (a test's way in; the
    grader prepares through its own cache). Raises ValueError for a spec that
    is not a valid built-in spec (the release is then unusable)."""
    name = spec.get("kind")
    kind = kinds().get(name) if isinstance(name, str) else None
    if kind is None:
        raise ValueError(f"unknown evaluator kind {spec.get('kind')!r}")
    return prepare_kind(kind, spec, preparation)


def prepare_kind(kind: Kind, spec: dict, preparation: Preparation) -> Evaluate:
    try:
        return kind.prepare(spec, preparation)
    except KeyError as err:
        raise ValueError(f"evaluator {kind.name!r}: missing {err}") from None
