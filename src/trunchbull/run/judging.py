"""A run's judge (SPEC §4.1), set up by `run`: the judge runner with what
the run directory recorded, the response cache and the run's budget, and
what the run says when judging stops early."""

from __future__ import annotations

from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.budget import Budget
from trunchbull.run.cache import default_cache_path
from trunchbull.run.judge_options import JudgeSetup
from trunchbull.run.judge_runner import JudgeRunner
from trunchbull.run.options import RunOptions
from trunchbull.rundir.judgments import read_judgments
from trunchbull.rundir.layout import JUDGMENTS
from trunchbull.rundir.writer import RunDirWriter
from trunchbull.common.invocation import resume_command


def judging_interrupted(run_dir) -> str:
    return (
        f"trunchbull: interrupted while judging; every sample and every verdict so far is recorded in {run_dir}. "
        f"Continue with: {resume_command(run_dir)}"
    )


def judge_runner(
    setup: JudgeSetup, release: LoadedRelease, options: RunOptions, writer: RunDirWriter, args, budget: Budget | None
) -> JudgeRunner:
    """The judge of a run: the verdicts its directory holds (on --resume) are replayed."""
    if budget is not None and budget.max_cost is not None:
        unpriced = [text for text, judge in setup.judges.items() if judge.price is None]
        if unpriced:
            raise UsageError(
                f"--max-cost: the price of the judge {', '.join(unpriced)} is unknown, so its cost cannot be "
                "counted; give it with --prices FILE (model SPEC → input / output USD per million tokens)"
            )
    recorded = read_judgments(writer.path / JUDGMENTS) if args.resume else {}
    return JudgeRunner(
        setup,
        release,
        options.settings,
        writer=writer,
        recorded=recorded,
        rerun_errors=bool(args.rerun_errors),
        cache_path=default_cache_path() if options.cache else None,
        budget=budget,
        quiet=bool(args.json),
    )


def judging_budget_message(budget: Budget, runner: JudgeRunner, run_dir: Path) -> str:
    limits = []
    if budget.max_cost is not None:
        limits.append(f"--max-cost {budget.max_cost:g} (spent ${budget.spent_cost:.4f})")
    if budget.max_tokens is not None:
        limits.append(f"--max-total-tokens {budget.max_tokens:,} (used {budget.spent_tokens:,})")
    return (
        f"trunchbull: budget reached while judging: {' and '.join(limits)}; every sample and "
        f"{len(runner.used):,} verdict(s) are recorded in {run_dir}, the other judge requests were not sent. "
        f"Continue with a larger budget: {resume_command(run_dir, ' --max-cost …')} (exit code 3)"
    )
