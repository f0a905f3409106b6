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
from contextlib import nullcontext
from pathlib import Path

from trunchbull.common import exit_codes, lifetime
from trunchbull.common.gc_pause import gc_paused
from trunchbull.grading.command import check_fail_under
from trunchbull.release.loaded import LoadedRelease, load_release
from trunchbull.run.budget import Budget
from trunchbull.run.cache import ResponseCache, default_cache_path
from trunchbull.run.dry_run import dry_run, token_estimator
from trunchbull.run.finish import grade_and_report
from trunchbull.run.grading import RunGrading
from trunchbull.run.judging import JUDGING_INTERRUPTED, judge_runner, judging_budget_message
from trunchbull.run.judge_options import judge_options, resolve_judges
from trunchbull.run.judge_runner import JudgingStopped
from trunchbull.run.options import RunOptions, resolve_options
from trunchbull.run.prices import run_price
from trunchbull.run.recording import record_samples
from trunchbull.run.resume import check_same_release, previous_run, reconcile
from trunchbull.run.samples import plan, select_cases
from trunchbull.run.target import resolve_target
from trunchbull.run.worker_setup import describe_model, spawn_pool, wait_ready
from trunchbull.rundir.run_json import add_warnings, new_run_json, now, resumed_run_json
from trunchbull.rundir.writer import RunDirWriter, open_run_dir


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run_command(args) -> int:
    previous_term = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops a run like Ctrl-C
    try:
        with gc_paused(), nullcontext() if args.dry_run else open_run_dir(args.out) as writer:
            return _run(args, writer)
    finally:
        signal.signal(signal.SIGTERM, previous_term)


def _run(args, writer: RunDirWriter | None) -> int:
    """`writer`: the run directory's (None for --dry-run, which writes nothing)."""
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
    identity = options.spec.identity()
    price = run_price(args.prices, previous, options.spec.text, options.spec.provider)
    per_token = price.per_token() if price is not None else None
    if args.dry_run:
        cases = select_cases(release, options.filters)
        judges = resolve_judges(
            judging, cases, options.spec, options.settings.seed, args.prices, previous, release.manifest.evals
        )
        samples = plan(
            release,
            cases,
            options.repeat,
            identity,
            options.settings,
            keyed=not args.no_cache,
        )
        return dry_run(
            release,
            samples,
            run_dir,
            previous is not None,
            None if args.no_cache else default_cache_path(),
            price,
            options.settings.maxTokens,
            options.spec.text,
            args.json,
            judges,
            args.rerun_errors,
        )
    budget = None
    if args.max_cost is not None or args.max_total_tokens is not None:
        budget = Budget(
            args.max_cost, args.max_total_tokens, token_estimator(release), options.settings.maxTokens, per_token
        )
    assert writer is not None
    meta: dict = {}
    with lifetime.scratch_dir("trunchbull-run-") as workdir:
        # The workers take ~0.4 s to start (Node, the AI SDK, the tool
        # modules). A hosted model's start before the cases are parsed and the
        # samples planned, which on a big release takes about as long; a local
        # model's wait for the plan, since how many there are depends on how
        # many samples are left to run.
        pool = None if options.spec.local else spawn_pool(release, options, workdir, None, per_token)
        try:
            cases = select_cases(release, options.filters)
            judges = resolve_judges(
                judging, cases, options.spec, options.settings.seed, args.prices, previous, release.manifest.evals
            )
            samples = plan(release, cases, options.repeat, identity, options.settings, keyed=not args.no_cache)
            left = reconcile(writer, samples, previous is not None, args.rerun_errors)
            runner = judge_runner(judges, release, options, writer, args, budget) if judges is not None else None
            grading = RunGrading(release, run_dir, left.done, as_recorded=options.spec.remote, judge=runner)
            cache = None if args.no_cache else ResponseCache(default_cache_path())
            try:
                todo = left.todo
                hits = cache.lookup([s.key for s in todo if s.key is not None]) if cache is not None and todo else {}
                to_run = [s for s in todo if s.key not in hits]
                if not to_run and pool is not None:  # every sample is recorded or cached
                    pool.kill_all()
                    pool = None
                elif to_run and pool is None:
                    pool = spawn_pool(release, options, workdir, len(to_run), per_token)
                if pool is not None:
                    wait_ready(pool, options.spec)
                if budget is not None:
                    budget.count_recorded(left.done)
                    if runner is not None:
                        budget.count_recorded(runner.recorded)
                given = {
                    "price": None if price is None else price.to_json(),
                    "budget": None if budget is None else budget.limits(),
                    "model_info": describe_model(pool, identity) if pool is not None else None,
                    "judge": None if judges is None else judges.to_json(),
                }
                if previous is None:
                    meta = _new_run_json(release, release_path, options, len(samples), **given)
                else:
                    meta = resumed_run_json(previous, release_path.absolute(), **given)
                writer.start(meta)
                interrupted = record_samples(
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
            finally:
                if cache is not None:
                    cache.close()
        except BaseException:
            if pool is not None:
                pool.kill_all()
                pool = None
            raise
        finally:
            if pool is not None:
                pool.close()
                if pool.warnings:
                    add_warnings(meta, pool.warnings)
    if interrupted:
        return exit_codes.INTERRUPTED
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
        print(JUDGING_INTERRUPTED.format(run_dir=run_dir), file=sys.stderr)
        return exit_codes.INTERRUPTED
    return grade_and_report(writer, samples, graded, records, options, meta, args, runner)


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
