"""The end of a run (SPEC §8.5): results.jsonl and summary.json from the
graded records, run.json finished, the summary printed (with where this
invocation's samples came from: kept from the run being resumed, the
response cache, or the model), the exit code."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import orjson

from trunchbull.common import exit_codes
from trunchbull.grading.command import fail_under_verdict
from trunchbull.grading.grader import Graded
from trunchbull.grading.summary import summarize
from trunchbull.grading.summary_text import render_summary
from trunchbull.run.judge_runner import JudgeRunner
from trunchbull.run.options import RunOptions
from trunchbull.run.samples import Sample
from trunchbull.rundir.layout import RESULTS
from trunchbull.rundir.writer import RunDirWriter


@dataclass(frozen=True)
class Sources:
    """Where this invocation's samples came from."""

    resumed: bool
    kept: int  # recorded by the run being resumed, and kept
    cached: int  # served from the response cache
    called: int  # sent to the model

    def to_json(self) -> dict:
        return {"resumed": self.resumed, "kept": self.kept, "cached": self.cached, "called": self.called}

    def lines(self) -> list[str]:
        """What the terminal summary says of them (nothing for a new run that called the model for every sample)."""
        new = self.cached + self.called
        out = []
        if self.resumed:
            out.append(
                f"resume: kept {self.kept:,} sample(s) recorded before, ran {new:,} "
                f"({self.cached:,} from the response cache, {self.called:,} called the model)"
            )
        if self.cached:
            every = "all" if self.cached == new else f"{self.cached:,} of"
            out.append(
                f"cache: {every} {new:,} sample(s) run now came from the response cache, not the model; their "
                "latencies are those of the original calls (--no-cache calls the model again)"
            )
        return out


def grade_and_report(
    writer: RunDirWriter,
    samples: list[Sample],
    graded: Graded,
    records: dict,
    options: RunOptions,
    meta: dict,
    args,
    sources: Sources | None = None,
    judge: JudgeRunner | None = None,
) -> int:
    of_samples = [records.get((sample.case_id, sample.repeat)) for sample in samples]
    judgments = judge.used if judge is not None else ()
    summary = summarize(graded.release.manifest, graded.results, of_samples, options.repeat, judgments)
    summary["model"] = options.spec.text
    if judge is not None:
        summary["judges"] = judge.summary()
    writer.finish(meta, graded.results, summary)
    run_dir = writer.path

    overall = summary["overall"]
    code = exit_codes.FAILED if overall["errors"] else exit_codes.OK
    met = None
    verdict = None
    if args.fail_under is not None:
        met, verdict = fail_under_verdict(summary, args.fail_under, noun="sample")
        if not met:
            code = exit_codes.FAILED
    if args.json:
        out = {
            **summary,
            "runDir": str(run_dir),
            "failUnder": None if args.fail_under is None else {"rate": args.fail_under, "met": met},
            **({"sources": sources.to_json()} if sources is not None else {}),
            "exitCode": code,
        }
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(render_summary(summary))
        for line in sources.lines() if sources is not None else []:
            print(line)
        print(f"run: {run_dir}")
    if overall["errors"]:
        print(
            f"trunchbull: {overall['errors']:,} sample(s) ended in error (infrastructure failures); see "
            f"{run_dir / RESULTS} and re-run them with --resume --rerun-errors",
            file=sys.stderr,
        )
    if verdict:
        print(verdict, file=sys.stderr)
    return code
