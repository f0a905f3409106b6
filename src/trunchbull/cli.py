"""The `trunchbull` command line (SPEC §6). Parsing, output and exit codes
only: the work is done by compiler.py, release.py, grading/, run/, report/ and init.py."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

import orjson

from trunchbull import __version__
from trunchbull.common import exit_codes, lifetime
from trunchbull.common.diagnostics import UsageError, render_json, report_internal_error
from trunchbull.compile.building import build_release, compile_root


DESCRIPTION = """\
Compile a repository of LLM evals (plain TypeScript/JavaScript, CSV, JSONL)
into an immutable, reproducible release; run models against it and grade them.

  trunchbull check  examples/support              validate, write nothing
  trunchbull build  examples/support -o out       compile into out/
  trunchbull verify out                           recompute every hash
  trunchbull run    out --model echo -o runs/a    run a model, record, grade
  trunchbull grade  out responses.jsonl           grade recorded responses
  trunchbull report runs/b --vs runs/a -o r.html  terminal summary and an HTML report
  trunchbull compare runs/a runs/b                paired difference (b - a) with 95% CIs
  trunchbull export runs/a --format junit         JUnit XML, CSV or Parquet
  trunchbull leaderboard runs/*                   many runs ranked, with intervals and costs
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trunchbull", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"trunchbull {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    build = commands.add_parser(
        "build",
        help="compile a benchmark into a release directory",
        description="Compile ROOT into a release. Nothing is written when the benchmark has errors.",
    )
    build.add_argument(
        "root", nargs="?", default=".", type=Path, help="benchmark root or its benchmark.config file (default: .)"
    )
    build.add_argument("-o", "--out", type=Path, help="release directory (default: ROOT/dist/release)")
    build.add_argument("--tar", action="store_true", help="also write a deterministic OUT.tar")
    build.add_argument("--json", action="store_true", help="print diagnostics and the summary as JSON")

    check = commands.add_parser("check", help="validate a benchmark without writing anything")
    check.add_argument(
        "root", nargs="?", default=".", type=Path, help="benchmark root or its benchmark.config file (default: .)"
    )
    check.add_argument("--json", action="store_true", help="print diagnostics as JSON")

    inspect = commands.add_parser("inspect", help="summarize a release: evals, cases, tools, evaluator kinds")
    inspect.add_argument("release", type=Path, help="release directory or .tar")
    inspect.add_argument("--json", action="store_true", help="print the summary as JSON")

    verify = commands.add_parser("verify", help="recompute every file hash and the release digest")
    verify.add_argument("release", type=Path, help="release directory or .tar")

    diff = commands.add_parser("diff", help="cases and tools added, removed or changed between two releases")
    diff.add_argument("a", type=Path, help="the older release")
    diff.add_argument("b", type=Path, help="the newer release")
    diff.add_argument("--json", action="store_true", help="print the difference as JSON")

    grade = commands.add_parser("grade", help="grade recorded model responses against a release")
    grade.add_argument("release", type=Path, help="release directory or .tar")
    grade.add_argument("responses", type=Path, help="JSONL: caseId, output, optional toolCalls, finishReason, usage")
    grade.add_argument("-o", "--out", type=Path, help="write one result per case to this JSONL file")
    grade.add_argument("--json", action="store_true", help="print the summary as JSON")
    grade.add_argument(
        "--fail-under", type=float, metavar="RATE", help="exit 1 when the overall pass rate is below RATE (0-1)"
    )
    grade.add_argument(
        "--run-dir",
        type=Path,
        metavar="DIR",
        help="also write a run directory (new or empty) that report, compare and export read",
    )

    _add_run_parser(commands)
    _add_report_parsers(commands)
    _add_leaderboard_parser(commands)

    init = commands.add_parser("init", help="scaffold a benchmark that builds")
    init.add_argument("dir", nargs="?", default=".", type=Path, help="directory to create (default: .)")
    return parser


def _add_run_parser(commands) -> None:
    from trunchbull.run.providers import model_help

    run = commands.add_parser(
        "run",
        help="run every case through a model with its tools, record, then grade",
        description="Send every case (x repeats) of a release to a model through the AI SDK, execute the case's "
        "tools when the model calls them, record each sample in RUN_DIR as it finishes, then grade "
        "them as `trunchbull grade` does. Resumable (--resume) and cached.",
    )
    run.add_argument("target", type=Path, help="a release (directory or .tar), or a benchmark root (built first)")
    run.add_argument(
        "--model",
        metavar="SPEC",
        help=model_help(),
    )
    run.add_argument(
        "-o", "--out", type=Path, required=True, metavar="RUN_DIR", help="the run directory (new, or --resume)"
    )
    endpoint = run.add_argument_group("endpoint and credentials")
    endpoint.add_argument(
        "--base-url", metavar="URL", help="the provider's API base URL (required for openai-compatible)"
    )
    endpoint.add_argument("--api-key-env", metavar="NAME", help="the environment variable holding the API key")
    calls = run.add_argument_group("model call settings (passed only when given)")
    calls.add_argument("--temperature", type=float, metavar="T")
    calls.add_argument("--max-tokens", type=int, metavar="N")
    calls.add_argument("--top-p", type=float, metavar="P")
    calls.add_argument("--seed", type=int, metavar="N")
    limits = run.add_argument_group("limits")
    limits.add_argument(
        "--max-steps", type=int, metavar="N", help="model calls per sample in the tool loop (default 8)"
    )
    limits.add_argument(
        "--timeout", type=float, metavar="S", help="seconds per sample, tool loop included (default 300)"
    )
    limits.add_argument("--tool-timeout", type=float, metavar="S", help="seconds per tool call (default 30)")
    limits.add_argument(
        "--retries", type=int, metavar="N", help="retries of 429/408/409/5xx/connection errors (default 6)"
    )
    limits.add_argument("-j", "--concurrency", type=int, metavar="N", help="samples in flight (default 16)")
    select = run.add_argument_group("which samples")
    select.add_argument("--eval", action="append", metavar="ID", help="only this eval (repeatable)")
    select.add_argument("--case", action="append", metavar="GLOB", help="only case IDs matching GLOB (repeatable)")
    select.add_argument("--limit", type=int, metavar="N", help="the first N cases after filtering")
    select.add_argument("--repeat", type=int, metavar="K", help="samples per case (default 1)")
    records = run.add_argument_group("records")
    records.add_argument("--resume", action="store_true", help="continue an interrupted RUN_DIR")
    records.add_argument(
        "--rerun-errors", action="store_true", help="with --resume: also re-run samples that ended in error"
    )
    records.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    costs = run.add_argument_group("costs and budgets")
    costs.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="TOML or JSON: model SPEC -> input, output, cachedInput USD per million tokens (overrides the defaults)",
    )
    costs.add_argument(
        "--max-cost", type=float, metavar="USD", help="start no sample that could take the run past USD (exit 3)"
    )
    costs.add_argument(
        "--max-total-tokens",
        type=int,
        metavar="N",
        help="start no sample that could take the run past N tokens (exit 3)",
    )
    costs.add_argument(
        "--dry-run",
        action="store_true",
        help="print the samples planned, those cached, the estimated input tokens and cost; call and write nothing",
    )
    run.add_argument(
        "--fail-under", type=float, metavar="RATE", help="exit 1 when the overall pass rate is below RATE (0-1)"
    )
    run.add_argument("--json", action="store_true", help="print the summary as JSON")


def _add_report_parsers(commands) -> None:
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

    compare = commands.add_parser(
        "compare",
        help="paired comparison of two runs: RUN - BASE per eval and overall, with 95%% CIs",
        description="Pair the cases of two runs by ID and report, per eval and overall, the difference of mean "
        "scores B - A (RUN - BASE: the baseline comes first, as --vs names it in `report`) with its 95%% "
        "confidence interval and the minimum difference detectable at 80%% power, and the cases that "
        "regressed (pass -> fail), were fixed or are unchanged.",
    )
    compare.add_argument("run_a", type=Path, metavar="BASE", help="the baseline run directory (A)")
    compare.add_argument("run_b", type=Path, metavar="RUN", help="the run directory judged against it (B)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
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


def _add_leaderboard_parser(commands) -> None:
    board = commands.add_parser(
        "leaderboard",
        help="many runs of one release as one ranked model x eval table",
        description="Rank RUN_DIRs (runs of one release, or the cases they share) by mean score, with 95%% "
        "intervals per eval and overall; mark each model as indistinguishable from the best or significantly "
        "below it (paired over cases, Holm-corrected); tokens and cost per model.",
    )
    board.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR", help="two or more run directories")
    board.add_argument("-o", "--out", type=Path, metavar="FILE", help="also write a self-contained HTML page")
    board.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    board.add_argument("--csv", type=Path, metavar="FILE", help="also write one CSV row per model and eval")
    board.add_argument("--title", help="the HTML page's title")


def main(argv: list[str] | None = None) -> int:
    """Run one command; return only once every process it started has
    exited and its scratch directories are gone (lifetime.py)."""
    if threading.current_thread() is threading.main_thread():
        lifetime.handle_signals()
    try:
        parser = build_parser()
        args, extras = parser.parse_known_args(argv)
        if extras:
            parser.error(unrecognized(parser, args, extras))
        if not args.command:
            parser.print_help()
            return exit_codes.USAGE
        return COMMANDS[args.command](args)
    except UsageError as err:
        if lifetime.interrupted():
            return _interrupted()
        print(f"trunchbull: error: {err}", file=sys.stderr)
        return exit_codes.USAGE
    except (lifetime.Interrupted, KeyboardInterrupt):
        return _interrupted()
    except Exception as err:  # noqa: BLE001 - a bug must still end in one clear line
        if lifetime.interrupted():  # cleanup after a signal may fail on what the signal stopped
            return _interrupted()
        return report_internal_error(err)
    finally:
        try:
            lifetime.shutdown()
        except (lifetime.Interrupted, KeyboardInterrupt):  # a second signal: finish anyway
            lifetime.shutdown()


def unrecognized(parser: argparse.ArgumentParser, args, extras: list[str]) -> str:
    """argparse's "unrecognized arguments", with the nearest option of the command for each misspelt flag."""
    from trunchbull.common.ids import suggest

    command = parser
    for action in parser._subparsers._group_actions if parser._subparsers else []:  # argparse keeps them private
        choices = action.choices if isinstance(action.choices, dict) else {}
        command = choices.get(args.command, parser)
    options = [o for o in command._option_string_actions if o.startswith("--")]
    parts = []
    for extra in extras:
        flag = extra.split("=", 1)[0]
        near = suggest(flag, options) if flag.startswith("-") else None
        parts.append(f"{extra} (did you mean {near}?)" if near else extra)
    return "unrecognized arguments: " + " ".join(parts)


def _interrupted() -> int:
    signum = lifetime.interrupted() or signal.SIGINT
    print(f"trunchbull: interrupted ({signal.Signals(signum).name}); nothing was written", file=sys.stderr)
    return exit_codes.INTERRUPTED_BASE + signum


def cmd_check(args) -> int:
    code, outcome = compile_root(args.root, args.json)
    if code == exit_codes.OK:
        if args.json:
            sys.stdout.buffer.write(render_json(outcome.diagnostics.sorted()) + b"\n")
        else:
            assert outcome.release is not None  # compiled without errors
            print(f"ok: {outcome.release.manifest.describe_counts()}")
    return code


def cmd_build(args) -> int:
    code, outcome, out = build_release(args.root, args.out, as_json=args.json, tar=args.tar)
    if code != exit_codes.OK:
        return code
    assert outcome.release is not None  # built
    manifest = outcome.release.manifest
    if args.json:
        summary = {
            "release": str(out),
            "digest": manifest.digest,
            "counts": manifest.counts,
            "diagnostics": [d.to_json() for d in outcome.diagnostics.sorted()],
        }
        sys.stdout.buffer.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(f"built {out}: {manifest.describe_counts()}")
        print(f"digest {manifest.digest}")
    return exit_codes.OK


def cmd_verify(args) -> int:
    from trunchbull.release.commands import verify_command

    return verify_command(args)


def cmd_inspect(args) -> int:
    from trunchbull.release.commands import inspect_command

    return inspect_command(args)


def cmd_diff(args) -> int:
    from trunchbull.release.commands import diff_command

    return diff_command(args)


def cmd_grade(args) -> int:
    from trunchbull.grading.command import run_grade_command

    return run_grade_command(
        args.release, args.responses, args.out, json_summary=args.json, fail_under=args.fail_under, run_dir=args.run_dir
    )


def cmd_run(args) -> int:
    from trunchbull.run.command import run_command

    return run_command(args)


def cmd_report(args) -> int:
    from trunchbull.report.command import report_command

    return report_command(args)


def cmd_compare(args) -> int:
    from trunchbull.report.compare.command import compare_command

    return compare_command(args)


def cmd_export(args) -> int:
    from trunchbull.report.exports.command import export_command

    return export_command(args)


def cmd_leaderboard(args) -> int:
    from trunchbull.report.leaderboard.command import leaderboard_command

    return leaderboard_command(args)


def cmd_init(args) -> int:
    from trunchbull.compile.scaffold import scaffold

    created = scaffold(args.dir)
    for path in created:
        print(f"created {path}")
    print(f"next: trunchbull build {args.dir}")
    return exit_codes.OK


COMMANDS = {
    "build": cmd_build,
    "check": cmd_check,
    "inspect": cmd_inspect,
    "verify": cmd_verify,
    "diff": cmd_diff,
    "grade": cmd_grade,
    "run": cmd_run,
    "report": cmd_report,
    "compare": cmd_compare,
    "export": cmd_export,
    "leaderboard": cmd_leaderboard,
    "init": cmd_init,
}
