"""`trunchbull run TARGET --model SPEC -o RUN_DIR` (SPEC §8): the run from
start to finish. Everything that can be wrong with the command line is found
before anything is called or written (exit 2); then the run directory is made,
cached samples are recorded, the rest go to the Node workers and are recorded
as they finish (recording.py), and every sample is graded from the bytes the
log got (as they come for a model called over the network, else at the end;
grading.py, finish.py).

Exit codes: 0 every sample graded and none in error, 1 a `--fail-under` not
met or any sample in error, 2 usage errors, 3 a budget reached (what was
recorded is kept, and `--resume` with a larger budget continues; 130 when
interrupted, likewise). `--dry-run` plans and estimates, and stops there
(dry_run.py); prices are prices.py's, budgets budget.py's.
"""

from __future__ import annotations

import signal
import sys
from contextlib import closing, nullcontext
from pathlib import Path
from typing import Any

from trunchbull.common import exit_codes, lifetime
from trunchbull.common.gc_pause import gc_paused
from trunchbull.grading.command import check_fail_under
from trunchbull.release.loaded import LoadedRelease, load_release
from trunchbull.run.budget import Budget
from trunchbull.run.cache import ResponseCache, default_cache_path
from trunchbull.run.dry_run import dry_run, token_estimator
from trunchbull.run.finish import Sources, grade_and_report
from trunchbull.run.grading import RunGrading
from trunchbull.run.judge_options import JudgeOptions, JudgeSetup, judge_options, resolve_judges
from trunchbull.run.judge_runner import JudgeRunner, JudgingStopped
from trunchbull.run.judging import judge_runner, judging_interrupted, judging_budget_message
from trunchbull.run.options import RunOptions, resolve_options
from trunchbull.run.prices import Price, run_price
from trunchbull.run.recording import interrupted_message, record_samples
from trunchbull.run.resume import check_same_release, previous_run, reconcile
from trunchbull.run.samples import Sample, plan, select_cases
from trunchbull.run.target import resolve_target
from trunchbull.run.worker_setup import describe_model, spawn_pool, wait_ready
from trunchbull.run.workers import ModelCallerPool
from trunchbull.rundir.layout import RESPONSES
from trunchbull.rundir.log import read_records
from trunchbull.rundir.run_json import add_warnings, new_run_json, now, resumed_run_json
from trunchbull.rundir.writer import RunDirWriter, open_run_dir


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run_command(args) -> int:
    previous_term = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops a run like Ctrl-C
    started: list[int] = []  # the number of samples, once run.json is written (--resume continues)
    try:
        with gc_paused(), nullcontext() if args.dry_run else open_run_dir(args.out) as writer:
            return _run(args, writer, started)
    except KeyboardInterrupt:
        if not started:  # interrupted before anything was written
            raise
        # Interrupted outside the recording loop (which says so itself): before it, between it and
        # grading, or while grading or reporting. What the log holds is kept; --resume goes on.
        recorded = len(read_records(args.out / RESPONSES).records)
        print(interrupted_message(recorded, started[0], args.out), file=sys.stderr)
        return exit_codes.INTERRUPTED  # as when interrupted while recording
    finally:
        signal.signal(signal.SIGTERM, previous_term)


def _run(args, writer: RunDirWriter | None, started: list[int]) -> int:
    """`writer`: the run directory's (None for --dry-run, which writes nothing);
    `started` gets the number of samples once run.json is written."""
    check_fail_under(args.fail_under)
    run_dir: Path = args.out
    previous = previous_run(run_dir, args.resume, args.rerun_errors)
    options = resolve_options(args, previous)
    judging = judge_options(args, previous)
    code, release_path = resolve_target(args.target, as_json=args.json)
    if release_path is None:
        return code
    release = load_release(release_path)
    check_same_release(previous, release, args.target)
    price = run_price(args.prices, previous, options.spec.text, options.spec.provider)
    if args.dry_run:
        return _dry_run(args, release, options, previous, price, judging)
    per_token = price.per_token(options.batch is not None) if price is not None else None
    budget = _budget(args, release, options, per_token)
    assert writer is not None
    identity = options.spec.identity()
    meta: dict = {}  # run.json, once written
    with lifetime.scratch_dir("trunchbull-run-") as workdir, _Workers(release, options, workdir, per_token) as workers:
        cases = select_cases(release, options.filters)
        judges = _judges(judging, cases, options, args, previous, release)
        samples = plan(release, cases, options.repeat, identity, options.settings, keyed=options.cache)
        left = reconcile(writer, samples, previous is not None, args.rerun_errors)
        runner = judge_runner(judges, release, options, writer, args, budget) if judges is not None else None
        grading = RunGrading(release, run_dir, left.done, as_recorded=options.spec.remote, judge=runner)
        with nullcontext() if not options.cache else closing(ResponseCache(default_cache_path())) as cache:
            todo = left.todo
            hits = cache.lookup([s.key for s in todo if s.key is not None]) if cache is not None and todo else {}
            to_run = [s for s in todo if s.key not in hits]
            sources = Sources(previous is not None, len(left.done), len(todo) - len(to_run), len(to_run))
            pool = workers.ready_for(to_run)
            if budget is not None:
                budget.count_recorded(left.done)
                if runner is not None:
                    budget.count_recorded(runner.recorded)
            given: dict[str, Any] = {
                "price": None if price is None else price.to_json(),
                "budget": None if budget is None else budget.limits(),
                "model_info": describe_model(pool, identity) if pool is not None else None,
                "batch": None if options.batch is None else options.batch.to_json(),
                "judge": None if judges is None else judges.to_json(),
                "cache": options.cache,
            }
            meta.update(_run_json(previous, release, release_path, options, len(samples), given))
            writer.start(meta)
            started.append(len(samples))
            workers.meta = meta
            record = record_samples if options.batch is None else in_batches(release, workdir, per_token)
            interrupted = record(
                writer,
                samples,
                todo,
                hits,
                to_run,
                pool,
                cache,
                options,
                left.done,
                left.rerun,
                grading,
                quiet=args.json,
                budget=budget,
            )
    if interrupted:
        return exit_codes.INTERRUPTED
    return _grade(args, writer, samples, grading, budget, runner, options, meta, sources)


def _grade(
    args,
    writer: RunDirWriter,
    samples: list[Sample],
    grading: RunGrading,
    budget: Budget | None,
    runner: JudgeRunner | None,
    options: RunOptions,
    meta: dict,
    sources: Sources,
) -> int:
    """Every sample recorded: grade them (asking the judges), write the results and report."""
    run_dir: Path = args.out
    if budget is not None and budget.stopped:
        recorded = len(grading.records) + len(grading.written)
        print(budget.message(run_dir, recorded, len(samples)), file=sys.stderr)
        return exit_codes.BUDGET
    try:
        graded, records = grading.finish(samples)
    except JudgingStopped:
        assert budget is not None and runner is not None  # judging stops early only at a budget
        print(judging_budget_message(budget, runner, run_dir), file=sys.stderr)
        return exit_codes.BUDGET
    except KeyboardInterrupt:
        if runner is None:  # no judge: run_command says what the log holds
            raise
        print(judging_interrupted(run_dir), file=sys.stderr)
        return exit_codes.INTERRUPTED
    return grade_and_report(writer, samples, graded, records, options, meta, args, sources, runner)


def _budget(args, release: LoadedRelease, options: RunOptions, per_token: dict | None) -> Budget | None:
    """--max-cost / --max-total-tokens, if given."""
    if args.max_cost is None and args.max_total_tokens is None:
        return None
    return Budget(
        args.max_cost,
        args.max_total_tokens,
        token_estimator(release),
        options.settings.maxTokens,
        per_token,
        batch=options.batch is not None,
    )


def _run_json(
    previous: dict | None, release: LoadedRelease, release_path: Path, options: RunOptions, samples: int, given: dict
) -> dict:
    """run.json as this invocation starts: a new run's, or the resumed run's with what is given now."""
    if previous is None:
        return _new_run_json(release, release_path, options, samples, **given)
    return resumed_run_json(previous, release_path.absolute(), **given)


def _judges(
    judging: JudgeOptions, cases: list[dict], options: RunOptions, args, previous: dict | None, release: LoadedRelease
) -> JudgeSetup | None:
    """The judges of the selected cases' model-graded kinds (None: no case needs one)."""
    seed = options.settings.seed
    return resolve_judges(judging, cases, options.spec, seed, args.prices, previous, release.manifest.evals)


def _dry_run(
    args, release: LoadedRelease, options: RunOptions, previous: dict | None, price: Price | None, judging: JudgeOptions
) -> int:
    """`--dry-run`: the plan and its estimate, nothing called or written."""
    cases = select_cases(release, options.filters)
    judges = _judges(judging, cases, options, args, previous, release)
    samples = plan(release, cases, options.repeat, options.spec.identity(), options.settings, keyed=options.cache)
    return dry_run(
        release,
        samples,
        args.out,
        previous is not None,
        default_cache_path() if options.cache else None,
        price,
        options.settings.maxTokens,
        options.spec.text,
        args.json,
        judges,
        args.rerun_errors,
        options.batch is not None,
    )


class _Workers:
    """The run's model callers, as a block: a hosted model's start at once
    (they take ~0.4 s to start: Node, the AI SDK, the tool modules, about as
    long as parsing the cases and planning the samples of a big release); a
    local model's wait for the plan, since how many there are depends on how
    many samples are left to run. In batch mode they take only the replies of
    samples with tools (run/batch/), so they start once the plan says whether
    any has. Killed when the block fails, else closed, their warnings added to
    `meta` (the run.json written, once it is)."""

    def __init__(self, release: LoadedRelease, options: RunOptions, workdir: Path, per_token: dict | None):
        self._spawn_args = (release, options, workdir)
        self._per_token = per_token
        self._spec = options.spec
        self._batch = options.batch is not None
        self.pool: ModelCallerPool | None = None
        self.meta: dict | None = None

    def __enter__(self) -> "_Workers":
        if not self._spec.local and not self._batch:
            self.pool = spawn_pool(*self._spawn_args, None, self._per_token)
        return self

    def ready_for(self, to_run: list[Sample]) -> ModelCallerPool | None:
        """The pool, ready, for the samples `to_run` (None when every sample is recorded or
        cached, or in batch mode when none of them has tools)."""
        needed = bool(to_run) and (not self._batch or any(s.case.get("tools") for s in to_run))
        if not needed and self.pool is not None:
            self.pool.kill_all()
            self.pool = None
        elif needed and self.pool is None:
            self.pool = spawn_pool(*self._spawn_args, len(to_run), self._per_token)
        if self.pool is not None:
            wait_ready(self.pool, self._spec)
        return self.pool

    def __exit__(self, failed: type | None, *_exc) -> None:
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if failed is not None:
            pool.kill_all()
            return
        pool.close()
        if pool.warnings and self.meta is not None:
            add_warnings(self.meta, pool.warnings)


def in_batches(release: LoadedRelease, workdir: Path, prices: dict | None):
    """record_samples' counterpart for `--batch` (run/batch/mode.py)."""
    from trunchbull.run.batch.mode import record_in_batches

    def record(writer, samples, todo, hits, to_run, pool, cache, options, done, rerun, grading, quiet, budget=None):
        interrupted = record_in_batches(
            writer,
            release,
            samples,
            todo,
            hits,
            to_run,
            pool,
            cache,
            options,
            done,
            grading,
            quiet,
            workdir,
            budget,
            prices,
        )
        if rerun and not interrupted:
            print(f"re-ran {rerun:,} sample(s) that had ended in error", file=sys.stderr)
        return interrupted

    return record


def _new_run_json(release: LoadedRelease, release_path: Path, options: RunOptions, samples: int, **given) -> dict:
    spec = options.spec
    return new_run_json(
        release,
        release_path.absolute(),  # a report run from another directory finds it
        model=spec.text,
        base_url=spec.base_url,
        api_key_env=spec.api_key_env,
        settings=options.settings.to_json(),
        filters=options.filters.to_json(),
        repeat=options.repeat,
        samples=samples,
        started_at=now(),
        **given,
    )
