"""A comparison directory (`compare BASE RUN --judge SPEC -o CMP_DIR`, SPEC
§9): what a pairwise judging of two runs asked and was told, owned here as a
run directory is by writer.py, and written only through a
`ComparisonDirWriter`, which exists while its process holds the directory's
lock (lock.py, the same flock as a run's):

    comparison.json        what is compared and how: the two runs (directory, model,
                           release digest), the judge (run.json's `judge` shape), the
                           rubric, the template's file, started/finished, and once
                           finished the figures (stats/pairwise.py)
    pairwise-template.json the judge's template, frozen when the comparison begins
                           (evaluators/pairwise.py): a continued comparison asks with it
    judgments.jsonl        every judge request and reply, appended as each is answered,
                           in judgments.py's format (two lines per pair: one per order)
    pairs.jsonl            one line per pair, written when judging ends: caseId, repeat,
                           evalId, `first` (the verdict with A shown first: "a", "b",
                           "tie", or null for an error), `second` (B shown first),
                           `winner` and `consistent`

The life of one: `start(meta, template)` (comparison.json unfinished, the
template if the directory has none), `judgment_log()` while judging,
`finish(meta, pairs, figures)` (pairs.jsonl, then comparison.json finished).
A directory holding a comparison of the same two runs with the same judge
and rubric is continued in place, its verdicts replayed (`previous_comparison`);
anything else non-empty is refused: nothing is overwritten."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import orjson

from trunchbull import __version__
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.files import write_atomic
from trunchbull.rundir.judgments import cut_torn_line
from trunchbull.rundir.layout import JUDGMENTS, check_new_run_dir, is_non_empty_dir
from trunchbull.rundir.lock import run_dir_lock
from trunchbull.rundir.log import RecordLog
from trunchbull.rundir.run_json import now

FORMAT = "trunchbull.comparison"
COMPARISON_JSON = "comparison.json"
TEMPLATE = "pairwise-template.json"
PAIRS = "pairs.jsonl"
# What must be equal for a directory to be continued: the same question asked of the same judge.
SAME = ("a", "b", "judge", "rubric")


def new_comparison_json(a: dict, b: dict, judge: dict, rubric: str | None) -> dict:
    """`a`, `b`: {runDir, model, digest} of each run."""
    return {
        "format": FORMAT,
        "a": a,
        "b": b,
        "judge": judge,
        "rubric": rubric,
        "template": TEMPLATE,
        "startedAt": now(),
        "finishedAt": None,
        "resumes": 0,
        "trunchbull": __version__,
        "figures": None,
    }


def _read_json(path: Path) -> object:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as err:
        raise UsageError(f"{path} cannot be read: {err}") from None


def previous_comparison(path: Path, meta: dict) -> tuple[dict, dict] | None:
    """(comparison.json, template) of the comparison `path` holds, when it is
    the same comparison as `meta` (to continue in place); None when `path` is
    new or empty. Anything else there is a usage error."""
    if not is_non_empty_dir(path):
        check_new_run_dir(path, "-o ")
        return None
    previous = _read_json(path / COMPARISON_JSON)
    template = _read_json(path / TEMPLATE)
    differs: list[str] = []
    if type(previous) is dict and previous.get("format") == FORMAT and type(template) is dict:
        differs = [key for key in SAME if _identity(previous, key) != _identity(meta, key)]
        if not differs:
            return previous, template
    what = f" ({', '.join(differs)} differ)" if differs else ""
    raise UsageError(
        f"-o {path} exists and is not empty, and is not this comparison{what}: nothing is overwritten; "
        "choose a new directory (another judge or rubric is a new comparison, which keeps this one's verdicts)"
    )


def _identity(meta: dict, key: str) -> object:
    value = meta.get(key)
    if key in ("a", "b") and type(value) is dict:
        return (value.get("model"), value.get("digest"))  # a run directory may move
    if key == "judge" and type(value) is dict:
        return (value.get("models"), value.get("baseUrl"), value.get("settings"))
    return value


class ComparisonDirWriter:
    """Writes one comparison directory; made by `open_comparison_dir`, under its lock."""

    def __init__(self, path: Path):
        self.path = path

    def start(self, meta: dict, template: dict) -> None:
        """comparison.json (unfinished), and the template if none is frozen yet."""
        self.path.mkdir(parents=True, exist_ok=True)
        if not (self.path / TEMPLATE).exists():
            write_atomic(self.path / TEMPLATE, orjson.dumps(template, option=orjson.OPT_INDENT_2) + b"\n")
        self._write_meta(meta)

    def judgment_log(self) -> RecordLog:
        """judgments.jsonl, open for appending (a torn last line is cut off first)."""
        cut_torn_line(self.path / JUDGMENTS)
        return RecordLog(self.path / JUDGMENTS)

    def finish(self, meta: dict, pairs: list[dict], figures: dict) -> None:
        """pairs.jsonl, then comparison.json finished with its figures."""
        write_atomic(self.path / PAIRS, b"".join(orjson.dumps(pair) + b"\n" for pair in pairs))
        meta["figures"] = figures
        meta["finishedAt"] = now()
        self._write_meta(meta)

    def _write_meta(self, meta: dict) -> None:
        write_atomic(self.path / COMPARISON_JSON, orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")


@contextmanager
def open_comparison_dir(path: Path) -> Iterator[ComparisonDirWriter]:
    """The writer of `path`, for as long as this process holds its lock."""
    with run_dir_lock(path):
        yield ComparisonDirWriter(path)
