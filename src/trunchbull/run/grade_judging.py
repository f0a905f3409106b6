"""The judge of `trunchbull grade` (SPEC §4.1): `grade RELEASE RESPONSES
--judge SPEC [--run-dir DIR]` judges recorded responses through the same
judge runner as `run` (run/judge_runner.py), with the default limits of a
run (its timeouts, retries, concurrency and reply limit). With --run-dir,
each verdict is recorded in DIR, and a grade of the same responses into the
same DIR replays them (grading/recorded_run.py)."""

from __future__ import annotations

from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.cache import default_cache_path
from trunchbull.run.judge_options import judge_options, resolve_judges
from trunchbull.run.judge_runner import JudgeRunner
from trunchbull.run.settings import RunSettings
from trunchbull.rundir.judgments import read_judgments
from trunchbull.rundir.layout import JUDGMENTS
from trunchbull.rundir.writer import RunDirWriter


def grade_judging(args):
    """The judge factory of grading/command.py for `grade`'s arguments
    (the options are checked now: a usage error before anything is read)."""
    options = judge_options(args, None)

    def make(release: LoadedRelease, writer: RunDirWriter | None) -> JudgeRunner | None:
        setup = resolve_judges(options, release.cases, None, None, None, None, release.manifest.evals)
        if setup is None:
            return None
        recorded = read_judgments(writer.path / JUDGMENTS) if writer is not None else {}
        return JudgeRunner(
            setup,
            release,
            RunSettings(),
            writer=writer,
            recorded=recorded,
            rerun_errors=bool(getattr(args, "rerun_errors", False)),
            cache_path=default_cache_path(),
            quiet=bool(args.json),
        )

    return make
