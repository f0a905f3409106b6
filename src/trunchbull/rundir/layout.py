"""The files of a run directory (SPEC §8.3), and the checks made before one
is written: a new run never overwrites anything."""

from __future__ import annotations

from pathlib import Path

from trunchbull.common.diagnostics import UsageError

# Each file has one owning module, and is written only through writer.py.
RUN_JSON = "run.json"  # what was run (run_json.py)
RESPONSES = "responses.jsonl"  # one record per sample, appended as each finishes (log.py, schema.py)
RESULTS = "results.jsonl"  # one graded result per sample (results.py)
SUMMARY = "summary.json"  # per eval and overall (summary_file.py)
FILES = (RUN_JSON, RESPONSES, RESULTS, SUMMARY)
# The judge's requests and replies for model-graded kinds, appended as each is answered
# (writer.py `judgment_log`, judgments.py); written only by runs that grade with a judge.
JUDGMENTS = "judgments.jsonl"
LOCK = ".lock"  # held by the one process writing here (lock.py); not part of the run


def is_non_empty_dir(path: Path) -> bool:
    return path.is_dir() and any(entry.name != LOCK for entry in path.iterdir())


def check_new_run_dir(run_dir: Path, flag: str) -> None:
    """Nothing is overwritten: `run_dir` must be new or an empty directory."""
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"{flag}{run_dir} exists and is not a directory")
    if is_non_empty_dir(run_dir):
        raise UsageError(f"{flag}{run_dir} exists and is not empty: nothing is overwritten; choose a new directory")
