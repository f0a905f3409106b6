"""`trunchbull inspect`, `verify` and `diff` (SPEC §5, §6): what a built
release holds, whether it is intact, and what changed between two."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from trunchbull.common import exit_codes
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.userfiles import display, exists
from trunchbull.release.diff import changed_values, diff
from trunchbull.release.files import ReleaseError, ReleaseFiles, read_release
from trunchbull.release.verify import verify


def read_for_command(path: Path) -> ReleaseFiles:
    """A release named on the command line (a UsageError when it cannot be read)."""
    if not exists(path):
        raise UsageError(f"{display(str(path))} does not exist")
    try:
        return read_release(path)
    except (ReleaseError, OSError) as err:
        raise UsageError(str(err)) from None


def read_intact(path: Path) -> ReleaseFiles:
    """A release named on the command line that verifies (else a UsageError naming its first problem)."""
    release = read_for_command(path)
    problems = verify(release)
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise UsageError(f"{path} is not an intact release: {problems[0]}{more}; `trunchbull verify {path}` lists them")
    return release


def verify_command(args) -> int:
    problems = verify(read_for_command(args.release))
    for problem in problems:
        print(f"{args.release}: {problem}", file=sys.stderr)
    if problems:
        print(
            f"trunchbull: release does not verify ({len(problems)} problem{'s' * (len(problems) != 1)})",
            file=sys.stderr,
        )
        return exit_codes.FAILED
    print(f"ok: {args.release} verifies")
    return exit_codes.OK


def inspect_command(args) -> int:
    manifest = read_intact(args.release).manifest
    if args.json:
        summary = {k: manifest.data.get(k) for k in ("title", "version", "digest", "counts")}
        summary["evals"] = [{k: e[k] for k in ("id", "title", "caseCount", "evaluatorKinds")} for e in manifest.evals]
        summary["tools"] = [t["name"] for t in manifest.tools]
        sys.stdout.buffer.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
        return exit_codes.OK
    version = f" {manifest.version}" if manifest.version else ""
    print(f"{manifest.title}{version}  ({manifest.digest})")
    print(manifest.describe_counts())
    print()
    width = max([len(e["id"]) for e in manifest.evals] + [4])
    print(f"{'eval'.ljust(width)}  cases  evaluators")
    for entry in manifest.evals:
        print(f"{entry['id'].ljust(width)}  {entry['caseCount']:5d}  {', '.join(entry['evaluatorKinds'])}")
    if manifest.tools:
        print()
        print("tools:")
        tool_width = max(len(t["name"]) for t in manifest.tools)
        for tool in manifest.tools:
            print(f"  {tool['name'].ljust(tool_width)}  {' '.join(str(tool['description']).split())}")
    return exit_codes.OK


def diff_command(args) -> int:
    result = diff(read_intact(args.a), read_intact(args.b))
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
        return exit_codes.OK
    for section in ("cases", "tools"):
        part = result[section]
        for name in part["added"]:
            print(f"+ {section[:-1]} {name}")
        for name in part["removed"]:
            print(f"- {section[:-1]} {name}")
        for change in part["changed"]:
            print(f"~ {section[:-1]} {change['id']}: {', '.join(change['fields'])}")
            print(changed_values(change))
    if not any(result[s][k] for s in ("cases", "tools") for k in ("added", "removed", "changed")):
        print("no differences in cases or tools")
    return exit_codes.OK
