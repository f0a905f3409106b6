"""`trunchbull compare BASE RUN --judge SPEC [--rubric TEXT] -o CMP_DIR`
(SPEC §9): the pairwise judging of report/compare/pairwise.py, recorded in a
comparison directory (rundir/comparison_dir.py) and printed: B's win rate
over A with its 95% interval, per eval and overall, and the judge's
position consistency.

The judge is the one model-graded kinds use (given by the CLI, which makes
it with run/pairwise_judging.py: grading and reports come before the model
callers): the trusted model caller, the response cache, retries and reply
limits, every request and reply appended to CMP_DIR/judgments.jsonl as it
comes. The same command again continues CMP_DIR: the verdicts it recorded
are replayed, not asked again (`--rerun-errors` asks again for those in
error); a kill while judging loses only the requests in flight.

Exit codes: 0 every pair judged; 1 a pair's judge reply could not be used
(an error: re-ask with --rerun-errors); 2 a usage error; 130 interrupted."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol, Sequence

import orjson

from trunchbull.common import exit_codes
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.text_table import table_lines
from trunchbull.evaluators.judging import JudgeReply, RecordingJudge
from trunchbull.evaluators.pairwise import pairwise_template
from trunchbull.release.loaded import LoadedRelease, load_release
from trunchbull.report.breakdown_text import pct
from trunchbull.report.compare.pairwise import find_pairs, pair_asks, pair_lines
from trunchbull.rundir.comparison_dir import (
    ComparisonDirWriter,
    new_comparison_json,
    open_comparison_dir,
    previous_comparison,
)
from trunchbull.rundir.reader import RunDirectory, read_run_dir
from trunchbull.stats.pairwise import pairwise_figures


class PairwiseJudging(Protocol):
    """How `compare` gets its judge (run/pairwise_judging.py)."""

    def describe(self, runs: Sequence[RunDirectory]) -> dict:
        """The judge as comparison.json keeps it (run.json's `judge` shape);
        a UsageError for a judge that is one of the runs' model, unless allowed."""
        ...

    def judge(self, release: LoadedRelease, writer: ComparisonDirWriter, rerun_errors: bool) -> RecordingJudge:
        """The judge, replaying what `writer`'s directory recorded."""
        ...


def _release_of(run: RunDirectory, given: Sequence[Path]) -> LoadedRelease:
    """RUN's release (its prompts are what the judge is shown): from --release when one has its
    digest, else where run.json says."""
    for path in given:
        release = load_release(path)
        if release.digest == run.digest:
            return release
    recorded = (run.meta.get("release") or {}).get("path")
    if not recorded or not Path(recorded).exists():
        raise UsageError(
            f"the judge is shown each case's prompt, from the release {run.path} ran, which is not at "
            f"{recorded or '(unrecorded)'}; give it with --release PATH"
        )
    release = load_release(Path(recorded))
    if release.digest != run.digest:
        raise UsageError(f"{recorded} is now release {release.digest}, not {run.path}'s; give it with --release PATH")
    return release


def _run_entry(run: RunDirectory) -> dict:
    return {"runDir": str(run.path.absolute()), "model": run.model, "digest": run.digest}


def pairwise_command(args, judging: PairwiseJudging) -> int:
    if args.out is None:
        raise UsageError("--judge judges the two runs' outputs pairwise and records the verdicts: give -o CMP_DIR")
    a, b = read_run_dir(args.run_a), read_run_dir(args.run_b)
    release = _release_of(b, args.release)
    pairs = find_pairs(a, b, release.cases, args.allow_release_change)
    rubric = args.rubric if args.rubric is None or args.rubric.strip() else None
    if args.rubric is not None and rubric is None:
        raise UsageError("--rubric takes a non-empty text: the criteria the judge compares the outputs on")
    meta = new_comparison_json(_run_entry(a), _run_entry(b), judging.describe([a, b]), rubric)
    with open_comparison_dir(args.out) as writer:
        previous = previous_comparison(writer.path, meta)
        template = pairwise_template(rubric) if previous is None else previous[1]
        if previous is not None:
            meta = {**meta, "startedAt": previous[0]["startedAt"], "resumes": int(previous[0].get("resumes") or 0) + 1}
        writer.start(meta, template)
        judge = judging.judge(release, writer, bool(args.rerun_errors))
        asks = list(pair_asks(pairs, template, rubric))
        try:
            replies = judge.answer(asks)
        except KeyboardInterrupt:
            print(
                f"trunchbull: interrupted while judging; the verdicts so far are recorded in {writer.path}. "
                "Continue with the same command: the recorded verdicts are not asked again",
                file=sys.stderr,
            )
            return exit_codes.INTERRUPTED
        lines = pair_lines(pairs, asks, replies)
        figures = {**pairwise_figures(lines), "requests": _requests(replies)}
        writer.finish(meta, lines, figures)
    return _report(args, meta, figures)


def _requests(replies: Sequence[JudgeReply]) -> dict:
    """How the judge requests were answered: replayed from CMP_DIR, from the cache, or asked."""
    details = [reply.details if isinstance(reply.details, dict) else {} for reply in replies]
    replayed = sum(1 for d in details if d.get("replayed"))
    cached = sum(1 for d in details if d.get("cached") and not d.get("replayed"))
    return {"total": len(replies), "replayed": replayed, "cached": cached, "asked": len(replies) - replayed - cached}


def _ci(ci: list | None) -> str:
    return "-" if ci is None else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def render_pairwise(meta: dict, figures: dict, out: Path) -> str:
    header = ("eval", "pairs", "B wins", "A wins", "ties", "B win rate", "95% CI", "consistent", "errors")
    rows = [header]
    for name, f in [*figures["evals"].items(), ("overall", figures["overall"])]:
        rows.append(
            (
                name,
                f"{f['pairs']:,}",
                f"{f['bWins']:,}",
                f"{f['aWins']:,}",
                f"{f['ties']:,}",
                pct(f["winRate"]),
                _ci(f["winRateCI"]),
                pct(f["positionConsistency"]),
                f"{f['errors']:,}",
            )
        )
    requests = figures["requests"]
    judge = ", ".join(meta["judge"]["models"])
    if meta["judge"].get("selfJudged"):
        judge += " (self-judged: the judge is the model of a run it compares, --allow-self-judge)"
    lines = [
        f"pairwise: B {meta['b']['model']} ({meta['b']['runDir']}) vs A {meta['a']['model']} ({meta['a']['runDir']})",
        f"judge {judge}, each pair asked in both orders; a preference counts when both agree",
        *table_lines(rows),
        "B win rate: B preferred 1, A preferred 0, tie or orders disagreeing 1/2, averaged over cases; "
        "consistent: both orders gave the same verdict",
        f"judge requests: {requests['total']:,} ({requests['asked']:,} asked, {requests['cached']:,} from the "
        f"response cache, {requests['replayed']:,} replayed from {out})",
        f"comparison: {out}",
    ]
    return "\n".join(lines)


def _report(args, meta: dict, figures: dict) -> int:
    errors = figures["overall"]["errors"]
    code = exit_codes.FAILED if errors else exit_codes.OK
    if args.json:
        out = {"pairwise": {**meta, "figures": figures}, "exitCode": code}
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(render_pairwise(meta, figures, args.out))
    if errors:
        print(
            f"trunchbull: {errors:,} pair(s) have a judge reply that could not be used (see {args.out}/pairs.jsonl); "
            "ask again with the same command and --rerun-errors",
            file=sys.stderr,
        )
    return code
