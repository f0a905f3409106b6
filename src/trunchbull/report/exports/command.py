"""`trunchbull export RUN_DIR --format FORMAT [--by FIELD] [-o FILE]` (SPEC
§9), in one of the formats of formats.py: standard output without -o; the
file is written whole or not at all. The release is read when the format
has columns from it, or for `--by data.…`."""

from __future__ import annotations

import sys
from pathlib import Path

from trunchbull.common.files import write_atomic
from trunchbull.common.gc_pause import gc_paused
from trunchbull.common.diagnostics import UsageError
from trunchbull.report.breakdown import group_of, parse_by, require_release
from trunchbull.report.exports.formats import Exported, formats
from trunchbull.report.release_cases import release_cases
from trunchbull.rundir.reader import read_run_dir


def export_command(args) -> int:
    with gc_paused():
        return _export_command(args)


def _export_command(args) -> int:
    fmt = formats()[args.format]
    if args.out is None and not fmt.to_stdout:
        raise UsageError(f"--format {fmt.name} writes a binary file: give it with -o FILE")
    run = read_run_dir(args.run_dir)
    by = parse_by(args.by) if args.by else None
    exported = Exported(run, by=by.field if by else None)
    if fmt.reads_release or (by is not None and not by.is_eval):
        release = release_cases(run.meta, args.release)
        if by is not None and not by.is_eval:
            require_release(by, run, release)
        elif release.note:
            print(f"trunchbull: note: {release.note}; their columns are empty", file=sys.stderr)
        groups = group_of(by, [release]) if by is not None else None
        exported = Exported(run, release.cases, exported.by, groups)
    data = fmt.write(exported)
    if args.out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        out: Path = args.out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, data)
        print(f"wrote {args.out} ({args.format}, {len(run.results):,} sample(s))", file=sys.stderr)
    return 0
