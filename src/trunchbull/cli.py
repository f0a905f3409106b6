"""The `trunchbull` command line (SPEC §6). Parsing, output and exit codes
only: the work is done by compile/ (with `init` in compile/scaffold.py),
release/, grading/, run/ and report/."""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from pathlib import Path

import orjson

from trunchbull import __version__
from trunchbull.common import exit_codes, lifetime
from trunchbull.common.diagnostics import UsageError, render_json, report_internal_error
from trunchbull.compile.building import build_release, compile_root
from trunchbull.compile.cases.sources import sources
from trunchbull.report.exports.formats import titles
from trunchbull.report.arguments import add_leaderboard_parser, add_report_parsers
from trunchbull.run.arguments import add_judge_arguments, add_run_parser


DESCRIPTION = """\
Compile a repository of LLM evals (plain TypeScript/JavaScript, {data_files})
into an immutable, reproducible release; run models against it and grade them.

  trunchbull check  examples/support              validate, write nothing
  trunchbull build  examples/support -o out       compile into out/
  trunchbull verify out                           recompute every hash
  trunchbull run    out --model echo -o runs/a    run a model, record, grade
  trunchbull grade  out responses.jsonl           grade recorded responses
  trunchbull report runs/b --vs runs/a -o r.html  terminal summary and an HTML report
  trunchbull compare runs/a runs/b                paired difference (b - a) with 95% CIs
  trunchbull export runs/a --format junit         {export_formats}
  trunchbull leaderboard runs/*                   many runs ranked, with intervals and costs
"""


def description() -> str:
    """DESCRIPTION with the registries' data-file formats and export formats."""
    data_files = ", ".join(source.name for source in sources().values())
    return DESCRIPTION.format(data_files=data_files, export_formats=titles())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trunchbull", description=description(), formatter_class=argparse.RawDescriptionHelpFormatter
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
    check.add_argument(
        "--types",
        action="store_true",
        help="also type-check the TypeScript modules against the generated declarations (see `trunchbull types`)",
    )

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
        help="also write a run directory (new or empty, or one this command wrote for the same responses: "
        "graded again, its judge's verdicts replayed) that report, compare and export read",
    )
    add_judge_arguments(grade)
    grade.add_argument(
        "--rerun-errors",
        action="store_true",
        help="with --run-dir: ask the judge again for the verdicts it recorded in error",
    )

    add_run_parser(commands)
    add_report_parsers(commands, lambda parser: add_judge_arguments(parser, pairwise=True))
    add_leaderboard_parser(commands)

    init = commands.add_parser("init", help="scaffold a benchmark that builds")
    init.add_argument("dir", nargs="?", default=".", type=Path, help="directory to create (default: .)")

    commands.add_parser(
        "types",
        help="print the TypeScript declarations of what a benchmark exports (trunchbull.d.ts)",
        description="Print trunchbull.d.ts: the types of the config, eval modules, cases, tool modules, "
        "transformers and a custom evaluator's arguments, generated from the compiler's own checks. "
        "Use them with `import type { Eval } from \"trunchbull\"` and `satisfies Eval`.",
    )
    return parser


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
    code, outcome = compile_root(args.root, args.json, types=args.types)
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
    from trunchbull.run.grade_judging import grade_judging

    return run_grade_command(
        args.release,
        args.responses,
        args.out,
        json_summary=args.json,
        fail_under=args.fail_under,
        run_dir=args.run_dir,
        judging=grade_judging(args),
    )


def cmd_run(args) -> int:
    from trunchbull.run.command import run_command

    return run_command(args)


def cmd_report(args) -> int:
    from trunchbull.report.command import report_command

    return report_command(args)


def cmd_compare(args) -> int:
    from trunchbull.report.compare.command import compare_command

    if args.judge:
        from trunchbull.run.pairwise_judging import PairwiseJudge

        return compare_command(args, lambda: PairwiseJudge(args))
    return compare_command(args)


def cmd_export(args) -> int:
    from trunchbull.report.exports.command import export_command

    return export_command(args)


def cmd_leaderboard(args) -> int:
    from trunchbull.report.leaderboard.command import leaderboard_command

    return leaderboard_command(args)


def cmd_init(args) -> int:
    from trunchbull.compile.scaffold import scaffold

    from trunchbull.common.invocation import command

    created = scaffold(args.dir)
    for path in created:
        print(f"created {path}")
    where = shlex.quote(str(args.dir))
    print(f"next: {command()} build {where}")
    print(f"      {command()} check --types {where}   (also checks the modules' types)")
    return exit_codes.OK


def cmd_types(args) -> int:
    from trunchbull.compile.authoring_types import declarations

    sys.stdout.write(declarations())
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
    "types": cmd_types,
}
