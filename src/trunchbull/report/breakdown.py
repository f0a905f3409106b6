"""`--by FIELD` of `report`, `compare`, `leaderboard` and `export`: each
case's group, by its eval (`eval`) or by a field of its data
(`data.subject`, `data.meta.topic`), read from the run's release. A value
that is a string is its own label; any other JSON value is labelled by its
JSON text (`3`, `true`); a case without the field is in the group MISSING.
The figures of each group are stats/run_stats.py's (case_groups)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import orjson

from trunchbull.common.diagnostics import UsageError
from trunchbull.report.release_cases import ReleaseCases, release_cases
from trunchbull.rundir.reader import RunDirectory
from trunchbull.stats.run_stats import GroupOf

EVAL = "eval"
MISSING = "(none)"
_FIELD = re.compile(r"data(\.[^.\s]+)+")


@dataclass(frozen=True)
class By:
    field: str  # as given: "eval" or "data.subject"
    path: tuple[str, ...]  # the keys inside a case's data; () for eval

    @property
    def is_eval(self) -> bool:
        return not self.path


def parse_by(text: str) -> By:
    if text == EVAL:
        return By(EVAL, ())
    if not _FIELD.fullmatch(text):
        raise UsageError(
            f"--by {text}: give `eval` or a field of the cases' data as data.NAME (data.subject, "
            "data.meta.topic): a case's data is what its eval module, CSV, JSONL or transformer gave it"
        )
    return By(text, tuple(text.split(".")[1:]))


_ABSENT = object()


def _value(data: object, path: tuple[str, ...]) -> object:
    for key in path:
        if type(data) is not dict or key not in data:
            return _ABSENT
        data = data[key]
    return data


def label(value: object) -> str:
    """A group's label: a string as it is, another JSON value as its JSON text."""
    if value is _ABSENT or value is None:
        return MISSING
    return value if type(value) is str else orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _suggestion(by: By, cases: Sequence[dict]) -> str:
    """Which keys the cases' data has where the field is looked up, with the closest to the one given."""
    parent, name = by.path[:-1], by.path[-1]
    objects = [_value(case.get("data"), parent) for case in cases]
    keys = sorted({key for found in objects if type(found) is dict for key in found})
    if not keys:
        if not parent:
            return "no case has data (a case's data is what its eval module, CSV, JSONL or transformer gave it)"
        return f"no case has an object at data.{'.'.join(parent)}"
    close = difflib.get_close_matches(name, keys, n=1)
    hint = f"did you mean data.{'.'.join((*parent, close[0]))}? " if close else ""
    shown = ", ".join(keys[:20]) + (f", … ({len(keys)} keys)" if len(keys) > 20 else "")
    return f"{hint}the cases' data has: {shown}"


def group_of(by: By, releases: Sequence[ReleaseCases]) -> GroupOf:
    """The group of a case by (eval ID, case ID); None groups by eval (stats/run_stats.py)."""
    if by.is_eval:
        return None
    values: dict[str, str] = {}
    found = False
    every: list[dict] = []
    for release in releases:
        assert release.cases is not None  # releases_for refuses a run without its release
        for case_id, case in release.cases.items():
            value = _value(case.get("data"), by.path)
            found = found or value is not _ABSENT
            values.setdefault(case_id, label(value))
            every.append(case)
    if not found:
        raise UsageError(
            f"--by {by.field}: no case of the release has {by.field} in its data; {_suggestion(by, every)}"
        )
    return lambda _eval_id, case_id: values.get(case_id, MISSING)


def releases_for(by: By, runs: Sequence[RunDirectory], given: Sequence[Path] = ()) -> list[ReleaseCases]:
    """The releases of `runs` (one per digest), for `--by data.…`; from
    `given` (--release) when one has the run's digest, else from where
    run.json says. A run whose release cannot be read is a usage error."""
    if by.is_eval:
        return []
    from trunchbull.release.loaded import load_release

    loaded: dict[str, ReleaseCases] = {}
    for path in given:
        release = load_release(path)
        loaded.setdefault(release.digest, ReleaseCases({case["id"]: case for case in release.cases}, None))
    out: dict[str, ReleaseCases] = {}
    for run in runs:
        if run.digest in out:
            continue
        found = loaded.get(run.digest) or release_cases(run.meta)
        out[run.digest] = require_release(by, run, found)
    return list(out.values())


def require_release(by: By, run: RunDirectory, release: ReleaseCases) -> ReleaseCases:
    if release.cases is None:
        raise UsageError(f"--by {by.field} reads each case's data from the release {run.path} ran, but {release.note}")
    return release
