"""The export formats of `trunchbull export` (SPEC §9): one module per
format in this package, each defining `FORMAT` (its name, its writer, its
place in the help). This registry finds them; the CLI's `--format` choices
and the command come from it. Adding a format is adding one module here."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Callable

from trunchbull.common.registry import find_entries

if TYPE_CHECKING:
    from trunchbull.rundir.reader import RunDirectory
    from trunchbull.stats.run_stats import GroupOf


@dataclass(frozen=True)
class Exported:
    """What a format writes: the run, the release's cases by ID (None when
    the release is not available, or not read), and with `--by` the field
    and each case's group (`group_of`: None groups by eval)."""

    run: RunDirectory
    cases: dict[str, dict] | None = None
    by: str | None = None
    group_of: GroupOf = None

    def case(self, row: dict) -> dict:
        """The release's case of a result ({} when it is not known)."""
        return (self.cases or {}).get(row["caseId"]) or {}

    def group(self, row: dict) -> str | None:
        """The result's group under --by (None without --by)."""
        if self.by is None:
            return None
        return row["evalId"] if self.group_of is None else self.group_of(row["evalId"], row["caseId"])


# The modules of this package that are no format (every other one defines FORMAT).
PLUMBING = ("command", "formats")


@dataclass(frozen=True)
class ExportFormat:
    name: str  # `--format NAME`
    order: int  # its place in the choices
    title: str  # "JUnit XML", for the help
    description: str  # "JUnit XML (one testsuite per eval, …)", for the command's description
    write: Callable[[Exported], bytes]  # the whole file
    to_stdout: bool = True  # may be written to standard output (else -o is required)
    reads_release: bool = False  # has columns from the release's cases (prompts, expected answers, data)


@cache
def formats() -> dict[str, ExportFormat]:
    found = find_entries("trunchbull.report.exports", "FORMAT", ExportFormat, plumbing=PLUMBING)
    return {fmt.name: fmt for fmt in sorted(found, key=lambda f: f.order)}


def titles() -> str:
    """Every format's title, in order: `JUnit XML, CSV or Parquet`."""
    found = [f.title for f in formats().values()]
    return " or ".join([", ".join(found[:-1]), found[-1]] if len(found) > 1 else found)


def help_texts() -> tuple[str, str]:
    """The export command's (help, description), from every format."""
    descriptions = " or as ".join(f.description for f in formats().values())
    return f"a run's results as {titles()}", f"Write RUN_DIR's results as {descriptions}."
