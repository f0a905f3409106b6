"""The case data files an eval may name (`cases: "./x.csv"`, SPEC §3.6):
one module per format in this package, each defining `SOURCE` (its suffix,
its reader, and whether its rows give the evaluator's `expected`). This
registry finds them; adding a format is adding one module here."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Callable

from trunchbull.common.registry import find_entries
from trunchbull.compile.cases.fields import CaseDraft, Report

# The modules of this package that are no data-file format (every other one defines SOURCE).
PLUMBING = ("context", "fields", "inline", "sources")
# (file bytes, the file's root-relative path, the eval module's path, report) → the checked drafts
Reader = Callable[[bytes, str, str, Report], "list[CaseDraft] | None"]


@dataclass(frozen=True)
class DataFileSource:
    suffix: str  # ".csv"
    name: str  # "CSV", for messages
    read: Reader
    # The rows give `expected` (CSV): the eval-level evaluator is one of the
    # kinds that take it from each row and sets no `expected` of its own, and
    # a custom evaluate function cannot be used.
    expected_from_rows: bool = False


@cache
def sources() -> dict[str, DataFileSource]:
    """Every data-file format by suffix, sorted by suffix."""
    found = find_entries("trunchbull.compile.cases", "SOURCE", DataFileSource, plumbing=PLUMBING)
    return {source.suffix: source for source in sorted(found, key=lambda s: s.suffix)}


def source_for(path: str) -> DataFileSource | None:
    return next((s for suffix, s in sources().items() if path.endswith(suffix)), None)


def case_object_formats() -> str:
    """The formats whose cases are whole case objects (`JSONL`): where to go for
    what a format whose rows give `expected` cannot hold."""
    names = [source.name for source in sources().values() if not source.expected_from_rows]
    return " or ".join(names)


def suffixes(joiner: str) -> str:
    """`.csv or .jsonl`, `.csv/.jsonl`."""
    names = list(sources())
    return (
        names[0]
        if len(names) == 1
        else (joiner.join(names) if joiner == "/" else ", ".join(names[:-1]) + f" {joiner} {names[-1]}")
    )
