"""The judge of `compare BASE RUN --judge SPEC -o CMP_DIR` (SPEC §9): the
judge runner of model-graded kinds (run/judge_runner.py) answering pairwise
requests, with the judge flags of `run` (`--judge-base-url`,
`--judge-api-key-env`, `--judge-max-tokens`, `--allow-self-judge`), the
default limits of a run (timeouts, retries, concurrency, reply limit), the
response cache (unless --no-cache), and CMP_DIR's recorded verdicts replayed.

One judge: a panel's majority has no meaning for a pairwise verdict here.
A judge that is the model of either run (the same SPEC at the same endpoint)
favours its own outputs: a usage error unless `--allow-self-judge`, and then
comparison.json says so (`judge.selfJudged`)."""

from __future__ import annotations

from typing import Sequence

from trunchbull.common.diagnostics import UsageError
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.cache import default_cache_path
from trunchbull.run.judge_options import JudgeSetup, judge_models, judge_options
from trunchbull.run.judge_runner import JudgeRunner
from trunchbull.run.settings import RunSettings
from trunchbull.rundir.judgments import JudgmentWriter, read_judgments
from trunchbull.rundir.layout import JUDGMENTS
from trunchbull.rundir.reader import RunDirectory


class PairwiseJudge:
    """report/compare/pairwise_command.py's `PairwiseJudging`, from `compare`'s arguments
    (checked now: a usage error before any run directory is read)."""

    def __init__(self, args) -> None:
        self.options = judge_options(args, None)
        if len(self.options.given) != 1:
            raise UsageError(
                f"--judge {', '.join(self.options.given)}: pairwise judging takes one judge (a panel's majority "
                "is for graded samples); compare with each judge in a directory of its own"
            )
        self.no_cache = bool(getattr(args, "no_cache", False))
        self.quiet = bool(args.json)
        self.setup: JudgeSetup | None = None

    def describe(self, runs: Sequence[RunDirectory]) -> dict:
        judges = judge_models(self.options, {text: [] for text in self.options.given}, None, None)
        self_judged = tuple(
            text
            for text, judge in judges.items()
            for run in runs
            if judge.spec.text == run.model and (judge.spec.base_url or None) == (run.meta.get("baseUrl") or None)
        )
        if self_judged and not self.options.allow_self:
            raise UsageError(
                f"the judge {', '.join(self_judged)} is the model of a run it would compare: a model judging its "
                "own outputs is biased towards them. Name another judge with --judge SPEC, or judge anyway with "
                "--allow-self-judge (the comparison is then marked self-judged)"
            )
        self.setup = JudgeSetup(self.options, judges, tuple(dict.fromkeys(self_judged)))
        return self.setup.to_json()

    def judge(self, release: LoadedRelease, writer: JudgmentWriter, rerun_errors: bool) -> JudgeRunner:
        assert self.setup is not None  # described first
        return JudgeRunner(
            self.setup,
            release,
            RunSettings(),
            writer=writer,
            recorded=read_judgments(writer.path / JUDGMENTS),
            rerun_errors=rerun_errors,
            cache_path=None if self.no_cache else default_cache_path(),
            quiet=self.quiet,
        )
