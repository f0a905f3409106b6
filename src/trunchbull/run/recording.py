"""Recording a run's samples (SPEC §8.3, §8.4): cached samples first, then
each finished one as its worker reports it, checked (rundir/repair.py: one
valid line whatever the worker sent), appended to the log (secrets
scrubbed), stored in the response cache and handed to grading. A live run
and a batch run (run/batch/) record through the same `Recorder`."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from trunchbull.common.progress import SampleProgress
from trunchbull.run.budget import Budget
from trunchbull.run.cache import ResponseCache, as_cached
from trunchbull.run.grading import RunGrading
from trunchbull.run.options import RunOptions
from trunchbull.run.samples import Sample
from trunchbull.run.workers import ModelCallerPool
from trunchbull.rundir.repair import checked_record, with_earlier_attempts
from trunchbull.rundir.writer import RunDirWriter
from trunchbull.common.invocation import resume_command

CACHE_FLUSH_S = 1.0


class Recorder:
    """Where every finished sample goes: the log, grading, the budget, the cache, the progress line."""

    def __init__(
        self,
        writer: RunDirWriter,
        samples: list[Sample],
        todo: list[Sample],
        done: dict,
        cache: ResponseCache | None,
        options: RunOptions,
        grading: RunGrading,
        quiet: bool,
        budget: Budget | None = None,
        *,
        priced: bool,
    ):
        """`samples`: the run's; `todo`: those not recorded yet; `done`: the records kept (by sample)."""
        errors_before = sum(1 for row in done.values() if row.get("error"))
        total = len(samples)
        self.progress = SampleProgress(total, total - len(todo), errors_before, enabled=False if quiet else None)
        secret = options.spec.secret
        self._secret = secret.encode() if secret else None
        self.log = writer.record_log()
        self.priced = priced  # a record's cost is known (a record refused as invalid costs 0, not null)
        self.cache = cache
        self.grading = grading
        self.budget = budget
        self._flushed = time.monotonic()

    def cached(self, todo: list[Sample], hits: dict[str, bytes]) -> None:
        """The samples the response cache holds, recorded as cached."""
        for sample in todo:
            stored = hits.get(sample.key) if sample.key is not None else None
            if stored is not None:
                record = as_cached(stored, sample.case_id, sample.repeat)
                self.log.append(record + b"\n")
                self.grading.add(sample, record)
                self.progress.sample_done(False)
        self.log.flush()

    def record(self, sample: Sample, kind: str | None, record: bytes, earlier_calls: int = 0) -> dict:
        """A worker's record of `sample` (`kind`: its error kind, None for none); the row logged."""
        if self._secret and self._secret in record:
            record = record.replace(self._secret, b"[redacted]")
        record, row = checked_record(record, sample.case_id, sample.repeat, self.priced)
        if earlier_calls:  # calls made on a worker that was replaced count too
            record = with_earlier_attempts(row, earlier_calls)
        if row["error"] is not None:
            kind = row["error"]["kind"]
        self.log.append(record + b"\n")
        self.grading.add(sample, record, row)
        if self.budget is not None:
            self.budget.settle(sample, record)
        cache = self.cache
        if kind is None and cache is not None and sample.key is not None and not row.get("repaired"):
            # (a sample cut to this run's limits is not what another run would get)
            cache.put(sample.key, record)
            now = time.monotonic()
            if now - self._flushed >= CACHE_FLUSH_S:
                self._flushed = now
                cache.flush()
        self.progress.sample_done(kind is not None)
        return row

    def after_records(self) -> None:
        self.log.flush()
        self.grading.grade_some()

    def close(self) -> None:
        self.progress.finish()
        self.log.close()


def interrupted_message(done: int, total: int, run_dir: Path, extra: str = "") -> str:
    return (
        f"trunchbull: interrupted; {done:,} of {total:,} samples are recorded in {run_dir}. "
        f"Continue with: {resume_command(run_dir, extra)}"
    )


def record_samples(
    writer: RunDirWriter,
    samples: list[Sample],
    todo: list[Sample],
    hits: dict[str, bytes],
    to_run: list[Sample],
    pool: ModelCallerPool | None,
    cache: ResponseCache | None,
    options: RunOptions,
    done: dict,
    rerun: int,
    grading: RunGrading,
    quiet: bool,
    budget: Budget | None = None,
) -> bool:
    """Record cached samples, then run the rest (each record appended to the
    log is also handed to `grading`, and to the budget); True when interrupted."""
    recorder = Recorder(
        writer, samples, todo, done, cache, options, grading, quiet, budget, priced=pool is not None and pool.priced
    )

    def on_record(sample: Sample, kind: str | None, record: bytes) -> None:
        earlier = pool.earlier_calls.pop(sample.k, 0) if pool is not None else 0
        recorder.record(sample, kind, record, earlier)

    try:
        recorder.cached(todo, hits)
        if pool is not None:
            pool.run(to_run, on_record, after_records=recorder.after_records, admit=budget.admit if budget else None)
    except KeyboardInterrupt:
        if pool is not None:
            pool.kill_all()
        recorder.close()
        print(interrupted_message(recorder.progress.done, len(samples), writer.path), file=sys.stderr)
        return True
    recorder.close()
    if rerun:
        print(f"re-ran {rerun:,} sample(s) that had ended in error", file=sys.stderr)
    return False
