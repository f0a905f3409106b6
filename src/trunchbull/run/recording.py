"""Recording a run's samples (SPEC §8.3, §8.4): cached samples first, then
each finished one as its worker reports it, checked (rundir/repair.py: one
valid line whatever the worker sent), appended to the log (secrets
scrubbed), stored in the response cache and handed to grading."""

from __future__ import annotations

import sys
import time

from trunchbull.common.progress import SampleProgress
from trunchbull.run.budget import Budget
from trunchbull.run.cache import ResponseCache, as_cached
from trunchbull.run.grading import RunGrading
from trunchbull.run.options import RunOptions
from trunchbull.run.samples import Sample
from trunchbull.run.workers import ModelCallerPool
from trunchbull.rundir.repair import checked_record, with_earlier_attempts
from trunchbull.rundir.writer import RunDirWriter

CACHE_FLUSH_S = 1.0


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
    errors_before = sum(1 for row in done.values() if row.get("error"))
    progress = SampleProgress(len(samples), len(samples) - len(todo), errors_before, enabled=False if quiet else None)
    secret = options.spec.secret
    secret_bytes = secret.encode() if secret else None
    run_dir = writer.path
    log = writer.record_log()
    flushed = [time.monotonic()]

    def on_record(sample: Sample, kind: str | None, record: bytes) -> None:
        if secret_bytes and secret_bytes in record:
            record = record.replace(secret_bytes, b"[redacted]")
        record, row = checked_record(record, sample.case_id, sample.repeat, pool is not None and pool.priced)
        earlier = pool.earlier_calls.pop(sample.k, 0) if pool is not None else 0
        if earlier:  # calls made on a worker that was replaced count too
            record = with_earlier_attempts(row, earlier)
        if row["error"] is not None:
            kind = row["error"]["kind"]
        log.append(record + b"\n")
        grading.add(sample, record, row)
        if budget is not None:
            budget.settle(sample, record)
        if kind is None and cache is not None and sample.key is not None and not row.get("repaired"):
            # (a sample cut to this run's limits is not what another run would get)
            cache.put(sample.key, record)
            now = time.monotonic()
            if now - flushed[0] >= CACHE_FLUSH_S:
                flushed[0] = now
                cache.flush()
        progress.sample_done(kind is not None)

    def after_records() -> None:
        log.flush()
        grading.grade_some()

    try:
        for sample in todo:
            stored = hits.get(sample.key) if sample.key is not None else None
            if stored is not None:
                record = as_cached(stored, sample.case_id, sample.repeat)
                log.append(record + b"\n")
                grading.add(sample, record)
                progress.sample_done(False)
        log.flush()
        if pool is not None:
            pool.run(to_run, on_record, after_records=after_records, admit=budget.admit if budget else None)
    except KeyboardInterrupt:
        if pool is not None:
            pool.kill_all()
        progress.finish()
        log.close()
        print(
            f"trunchbull: interrupted; {progress.done:,} of {len(samples):,} samples are recorded in {run_dir}. "
            f"Continue with: trunchbull run … -o {run_dir} --resume",
            file=sys.stderr,
        )
        return True
    progress.finish()
    log.close()
    if rerun:
        print(f"re-ran {rerun:,} sample(s) that had ended in error", file=sys.stderr)
    return False
