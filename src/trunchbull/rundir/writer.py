"""The one writer of a run directory (SPEC §8.3, §8.4), for `run`, `run
--resume` and `grade --run-dir` alike: every file of a run directory is
written through a `RunDirWriter`, each in the format of its owning module
(layout.py names them), and a writer exists only while its process holds
the directory's lock (lock.py). Nothing outside rundir/ opens a run
directory's file for writing (tests/structure holds the code to it).

The life of a run directory, whoever writes it:

1. `start(meta)`: run.json (run_json.py) as the run begins or resumes,
   `finishedAt` null;
2. `record_log()`: responses.jsonl (log.py), appended as samples are
   recorded; on `--resume`, `resume_log` first cuts a torn last line and
   takes out damaged lines (and, with --rerun-errors, the samples in error);
3. `finish(meta, results, summary)`: results.jsonl (results.py), then
   summary.json (summary_file.py), then run.json with `finishedAt`, the mark
   that the directory is complete (reader.py refuses it until then).

`judgment_log()`: judgments.jsonl (judgments.py), where the judge runner
of model-graded kinds appends each request and its reply as it is answered
(run/judge_runner.py), during the grading, before `finish`."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from trunchbull.rundir.judgments import cut_torn_line
from trunchbull.rundir.layout import JUDGMENTS, RESPONSES, RESULTS, SUMMARY
from trunchbull.rundir.batch_journal import JOURNAL, BatchJournal, read_journal
from trunchbull.rundir.lock import run_dir_lock
from trunchbull.rundir.log import RecordedRun, RecordLog, drop_damaged_lines, drop_error_records, read_records
from trunchbull.rundir.results import write_results
from trunchbull.rundir.run_json import mark_finished, write_run_json
from trunchbull.rundir.summary_file import write_summary


class RunDirWriter:
    """Writes one run directory; made by `open_run_dir`, under its lock."""

    def __init__(self, path: Path):
        self.path = path

    def start(self, meta: dict) -> None:
        """run.json of a run that begins or resumes (the directory made if need be)."""
        self.path.mkdir(parents=True, exist_ok=True)
        write_run_json(self.path, meta)

    def record_log(self) -> RecordLog:
        """responses.jsonl, open for appending (close it when done)."""
        return RecordLog(self.path / RESPONSES)

    def resume_log(self, rerun_errors: bool) -> tuple[RecordedRun, int]:
        """--resume: the records kept, and how many were dropped for being in
        error (with `rerun_errors`). A torn last line is cut off; damaged
        lines and, with `rerun_errors`, the records in error are taken out,
        atomically, so that their samples run again."""
        log = self.path / RESPONSES
        recorded = read_records(log, drop_torn=True)
        drop_damaged_lines(log, recorded)
        dropped = drop_error_records(log, recorded) if rerun_errors else 0
        return recorded, dropped

    def finish(self, meta: dict, results: list[dict], summary: dict) -> None:
        """The graded run: results.jsonl, summary.json, and run.json finished (in that order)."""
        write_results(self.path / RESULTS, results)
        write_summary(self.path / SUMMARY, summary)
        mark_finished(meta)
        write_run_json(self.path, meta)

    def batch_journal(self) -> BatchJournal:
        """batches.jsonl (batch mode), open for appending with the state it records so far."""
        path = self.path / JOURNAL
        return BatchJournal(path, read_journal(path))

    def judgment_log(self) -> RecordLog:
        """judgments.jsonl, open for appending (one line per judge request and
        reply; a torn last line is cut off first)."""
        cut_torn_line(self.path / JUDGMENTS)
        return RecordLog(self.path / JUDGMENTS)


@contextmanager
def open_run_dir(path: Path) -> Iterator[RunDirWriter]:
    """The writer of `path`, for as long as this process holds its lock."""
    with run_dir_lock(path):
        yield RunDirWriter(path)


def write_results_file(path: Path, results: list[dict]) -> None:
    """A results file outside any run directory (`grade -o FILE`), in results.jsonl's format."""
    write_results(path, results)
