"""`trunchbull grade` (SPEC §4, §6): grade recorded model responses against a
release, write one result per case, and summarize per eval and overall.

Exit codes: 0 every case was graded (and `--fail-under` is met), 1
`--fail-under` is not met (or cases ended in `error`, so the rate cannot be
trusted), 2 unusable input (a release that does not verify, a responses file
with bad JSON, unknown or duplicate case IDs, wrong field types, or cases
without a response).
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Callable

import orjson

from trunchbull.common import exit_codes
from trunchbull.common.diagnostics import Diagnostic, UsageError, render_text
from trunchbull.common.gc_pause import gc_paused
from trunchbull.common.userfiles import FileProblem, read_file
from trunchbull.evaluators.judging import RecordingJudge
from trunchbull.grading.grader import Graded, ToGrade, grade
from trunchbull.grading.judge_check import judges_needed
from trunchbull.grading.recorded_run import previous_grade, recorded_model, start_recorded_run
from trunchbull.grading.responses import parse_responses
from trunchbull.grading.summary import summarize
from trunchbull.grading.summary_text import render_summary
from trunchbull.release.loaded import LoadedRelease, load_release
from trunchbull.rundir.run_json import now
from trunchbull.rundir.writer import RunDirWriter, open_run_dir, write_results_file

MAX_REPORTED = 50  # diagnostics printed per run; the rest are counted
# (the release, the run directory's writer or None) → the judge of the release's judged cases, or None
JudgeFactory = Callable[[LoadedRelease, "RunDirWriter | None"], "RecordingJudge | None"]


def fail_under_verdict(summary: dict, rate: float, noun: str = "case") -> tuple[bool, str]:
    """Whether the overall pass rate meets `rate`, and the sentence saying so.
    Samples in error make the rate untrustworthy: not met."""
    overall = summary["overall"]
    if overall["errors"]:
        return False, (
            f"--fail-under {rate:g}: {overall['errors']} {noun}(s) ended in error (infrastructure failures), "
            "so the pass rate cannot be trusted"
        )
    if overall["passRate"] is None:
        return False, f"--fail-under {rate:g}: no {noun} was graded"
    if overall["passRate"] < rate:
        return False, f"--fail-under {rate:g}: the overall pass rate {overall['passRate']:.4g} is below {rate:g}"
    return True, f"--fail-under {rate:g}: met (pass rate {overall['passRate']:.4g})"


def check_fail_under(rate: float | None) -> None:
    if rate is not None and not (0.0 <= rate <= 1.0):
        raise UsageError(f"--fail-under takes a pass rate between 0 and 1, got {rate:g}")


def print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    shown = diagnostics[:MAX_REPORTED]
    text = render_text(shown)
    if len(diagnostics) > len(shown):
        text += f"\n… and {len(diagnostics) - len(shown)} more problem(s)"
    print(text, file=sys.stderr)


def run_grade_command(
    release: Path,
    responses: Path,
    output: Path | None,
    *,
    json_summary: bool,
    fail_under: float | None,
    run_dir: Path | None = None,
    judging: JudgeFactory | None = None,
) -> int:
    """Prints the summary to stdout and diagnostics to stderr; returns the exit
    code (0 graded, 1 --fail-under not met, 2 unusable input). `judging`:
    makes the judge of the release's model-graded kinds (run/judge_runner.py,
    given by the CLI: grading comes before the model callers), or None when
    it has none (no judge is needed)."""
    try:
        with gc_paused(), open_run_dir(run_dir) if run_dir is not None else nullcontext() as writer:
            return _run_grade_command(
                release,
                responses,
                output,
                json_summary=json_summary,
                fail_under=fail_under,
                writer=writer,
                judging=judging,
            )
    except UsageError as err:  # the run directory is in use, or cannot be made
        print(f"trunchbull: error: {err}", file=sys.stderr)
        return exit_codes.USAGE


def _run_grade_command(
    release: Path,
    responses: Path,
    output: Path | None,
    *,
    json_summary: bool,
    fail_under: float | None,
    writer: RunDirWriter | None,
    judging: JudgeFactory | None,
) -> int:
    """`writer`: the run directory's, for --run-dir."""
    display = str(responses)
    run_dir = writer.path if writer is not None else None
    try:
        check_fail_under(fail_under)
        prepared = _prepared(Path(release), Path(responses), writer, judging)
    except UsageError as err:
        print(f"trunchbull: error: {err}", file=sys.stderr)
        return exit_codes.USAGE
    if prepared is None:
        return exit_codes.USAGE
    loaded, samples, judge, meta = prepared
    try:
        graded = grade(loaded, samples, f"no response for this case in {display}", judge)
    except KeyboardInterrupt:
        if run_dir is None:
            raise
        print(
            f"trunchbull: interrupted while judging; the verdicts so far are recorded in {run_dir}. "
            "Continue with the same command: the recorded verdicts are not asked again",
            file=sys.stderr,
        )
        return exit_codes.INTERRUPTED
    if output is not None:
        write_results_file(Path(output), graded.results)
    usages = [{"usage": s.response.usage} if s.response else None for s in samples]  # no latency, no cost
    summary = summarize(loaded.manifest, graded.results, usages, judgments=judge.used if judge is not None else ())
    if judge is not None:
        summary["judges"] = judge.summary()
    if writer is not None:
        assert meta is not None  # started by _prepared
        summary["model"] = recorded_model(Path(responses))
        writer.finish(meta, graded.results, summary)
    code, met = _verdict(graded, summary, fail_under, display)
    if json_summary:
        summary_out = {
            **summary,
            "missing": len(graded.missing),
            "results": str(output) if output is not None else None,
            "runDir": str(run_dir) if run_dir is not None else None,
            "failUnder": None if fail_under is None else {"rate": fail_under, "met": met},
            "exitCode": code,
        }
        sys.stdout.write(orjson.dumps(summary_out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(render_summary(summary))
        if output is not None:
            print(f"results: {output}")
        if run_dir is not None:
            print(f"run: {run_dir}")
    return code


def _prepared(
    release: Path, responses: Path, writer: RunDirWriter | None, judging: JudgeFactory | None
) -> tuple[LoadedRelease, list[ToGrade], RecordingJudge | None, dict | None] | None:
    """(the release, the samples to grade, the judge, the run directory's
    run.json as started, for --run-dir); None when the responses file has
    problems (printed). Raises UsageError (nothing written)."""
    display = str(responses)
    started_at = now()
    loaded = load_release(release)
    judge = judging(loaded, writer) if judging is not None else None
    if judge is None:
        judges_needed(loaded.cases, (), loaded.manifest.evals)  # a judged case is refused (exit 2)
    try:
        data = read_file(responses)
    except FileProblem as problem:
        raise UsageError(f"the responses file {display} {problem}") from None
    case_ids = {case["id"] for case in loaded.cases}
    parsed, problems = parse_responses(data, display, case_ids)
    if problems:
        print_diagnostics(problems)
        print(
            f"trunchbull: error: {display} cannot be graded: {len(problems)} problem(s); nothing was written",
            file=sys.stderr,
        )
        return None
    get = parsed.get
    # in a run directory every result has its repeat (0): one sample per case
    repeat = 0 if writer is not None else None
    new = tuple.__new__  # a NamedTuple's own constructor is ~2 µs
    samples = [new(ToGrade, (case, get(case["id"]), repeat, None)) for case in loaded.cases]
    meta = None
    if writer is not None:
        previous = previous_grade(writer.path, loaded, parsed)
        run_json = judge.run_json() if judge is not None else None
        meta = start_recorded_run(writer, loaded, responses, parsed, len(samples), started_at, previous, run_json)
    return loaded, samples, judge, meta


def _verdict(graded: Graded, summary: dict, fail_under: float | None, display: str) -> tuple[int, bool | None]:
    """(exit code, whether --fail-under was met), with what they come from said on stderr."""
    code = exit_codes.OK
    met = None
    if graded.missing:
        shown = ", ".join(repr(c) for c in graded.missing[:10]) + (" …" if len(graded.missing) > 10 else "")
        print(
            render_text(
                [
                    Diagnostic(
                        "response-missing",
                        f"no response for {len(graded.missing)} of {len(graded.results)} case(s): {shown}",
                        display,
                        hint="they are recorded as outcome \"error\"; every case needs a response",
                    )
                ]
            ),
            file=sys.stderr,
        )
        code = exit_codes.USAGE
    if fail_under is not None:
        met, verdict = fail_under_verdict(summary, fail_under)
        if not met and code == exit_codes.OK:
            code = exit_codes.FAILED
        print(verdict, file=sys.stderr)
    overall = summary["overall"]
    if overall["errors"] and not graded.missing:
        print(
            f"warning: {overall['errors']} case(s) ended in error (infrastructure failures, see their messages)",
            file=sys.stderr,
        )
    return code, met
