"""The arguments of `report`, `compare`, `export` and `leaderboard` (SPEC §9), for the CLI's parser."""

from __future__ import annotations

from pathlib import Path

BY_HELP = (
    "a row per value of FIELD, each with its 95%% CI, and the macro average beside the micro one: eval, "
    "or a field of the cases' data (data.subject), read from the release"
)
RELEASE_HELP = "a release of the runs, when it is no longer where run.json says (matched by digest; repeatable)"


def _add_by(parser, release: bool = True) -> None:
    parser.add_argument("--by", metavar="FIELD", help=BY_HELP)
    if release:
        parser.add_argument("--release", type=Path, metavar="PATH", action="append", default=[], help=RELEASE_HELP)


def add_report_parsers(commands, judge_arguments=None) -> None:
    """`judge_arguments(parser)`: adds `compare`'s pairwise judging flags (run/arguments.py's)."""
    from trunchbull.report.exports.formats import formats, help_texts

    export_help, export_description = help_texts()
    report = commands.add_parser(
        "report",
        help="a run's terminal summary and a self-contained HTML report",
        description="Print RUN_DIR's summary and write one self-contained HTML file (no network: opens from "
        "file://): pass rates with 95% CIs, score and latency distributions, tokens, a filterable case "
        "table and every sample's transcript. With --vs, RUN_DIR is compared against OTHER_RUN_DIR "
        "(the baseline): differences are RUN_DIR - OTHER_RUN_DIR, regressions first.",
    )
    report.add_argument(
        "run_dir", type=Path, metavar="RUN_DIR", help="a run directory (trunchbull run, grade --run-dir)"
    )
    report.add_argument("--vs", type=Path, metavar="OTHER_RUN_DIR", help="the baseline run to compare RUN_DIR against")
    report.add_argument("-o", "--out", type=Path, metavar="FILE", help="the HTML file (default: RUN_DIR/report.html)")
    report.add_argument(
        "--release",
        type=Path,
        metavar="PATH",
        help="RUN_DIR's release, when it is no longer where run.json says (for prompts)",
    )
    report.add_argument("--vs-release", type=Path, metavar="PATH", help="the same for OTHER_RUN_DIR")
    report.add_argument(
        "--allow-release-change", action="store_true", help="with --vs: runs of different releases, paired by case ID"
    )
    report.add_argument("--title", help="the report's title (default: the release title and model)")
    _add_by(report, release=False)
    shown = report.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the summary (and breakdown, comparison) as JSON")
    shown.add_argument(
        "--markdown",
        action="store_true",
        help="print the summary (and with --vs the comparison, verdict first) as Markdown, for a pull-request "
        "comment or a CI job summary",
    )

    compare = commands.add_parser(
        "compare",
        help="paired comparison of two runs: RUN - BASE per eval and overall, with 95%% CIs",
        description="Pair the cases of two runs by ID and report, per eval and overall, the difference of mean "
        "scores B - A (RUN - BASE: the baseline comes first, as --vs names it in `report`) with its 95% "
        "confidence interval and the minimum difference detectable at 80% power, and the cases that "
        "regressed (pass -> fail), were fixed or are unchanged.",
    )
    compare.add_argument("run_a", type=Path, metavar="BASE", help="the baseline run directory (A)")
    compare.add_argument("run_b", type=Path, metavar="RUN", help="the run directory judged against it (B)")
    shown = compare.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the comparison as JSON")
    shown.add_argument(
        "--markdown",
        action="store_true",
        help="print the comparison as Markdown (verdict first, regressions listed), for a pull-request comment "
        "or a CI job summary",
    )
    _add_by(compare)
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when B is significantly worse overall (the 95%% CI is below 0)",
    )
    compare.add_argument(
        "--allow-release-change",
        action="store_true",
        help="compare runs of different releases by case ID (lists added and removed cases)",
    )
    if judge_arguments is not None:
        judge_arguments(compare)

    export = commands.add_parser(
        "export",
        help=export_help,
        description=export_description,
    )
    export.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory")
    names = list(formats())
    export.add_argument(
        "--format",
        required=True,
        choices=names,
        help=" or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names),
    )
    export.add_argument("-o", "--out", type=Path, metavar="FILE", help="the file to write (default: standard output)")
    export.add_argument(
        "--by",
        metavar="FIELD",
        help="add a column (a property in JUnit) named FIELD with each sample's value: eval, or data.NAME",
    )
    export.add_argument(
        "--release",
        type=Path,
        metavar="PATH",
        help="RUN_DIR's release, when it is no longer where run.json says (for prompts, expected answers, data)",
    )


def add_leaderboard_parser(commands) -> None:
    board = commands.add_parser(
        "leaderboard",
        help="many runs of one release as one ranked model x eval table",
        description="Rank RUN_DIRs (runs of one release, or the cases they share) by mean score, with 95% "
        "intervals per eval (or per value of --by FIELD) and overall; mark each model as indistinguishable "
        "from the best or significantly below it (paired over cases, Holm-corrected, with intervals at the "
        "corrected level); tokens and cost per model, in total and per sample.",
    )
    board.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR", help="two or more run directories")
    board.add_argument("-o", "--out", type=Path, metavar="FILE", help="also write a self-contained HTML page")
    board.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    board.add_argument("--csv", type=Path, metavar="FILE", help="also write one CSV row per model and eval")
    board.add_argument("--title", help="the HTML page's title")
    _add_by(board)
