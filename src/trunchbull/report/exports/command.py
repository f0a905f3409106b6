"""`trunchbull export RUN_DIR --format FORMAT [-o FILE]` (SPEC §9), in one of
the formats of formats.py: standard output without -o; the file is written
whole or not at all."""

from __future__ import annotations

import sys
from pathlib import Path

from trunchbull.common.files import write_atomic
from trunchbull.common.gc_pause import gc_paused
from trunchbull.common.diagnostics import UsageError
from trunchbull.report.exports.formats import formats
from trunchbull.rundir.reader import read_run_dir


def export_command(args) -> int:
    with gc_paused():
        return _export_command(args)


def _export_command(args) -> int:
    fmt = formats()[args.format]
    if args.out is None and not fmt.to_stdout:
        raise UsageError(f"--format {fmt.name} writes a binary file: give it with -o FILE")
    run = read_run_dir(args.run_dir)
    data = fmt.write(run)
    if args.out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        out: Path = args.out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, data)
        print(f"wrote {args.out} ({args.format}, {len(run.results):,} sample(s))", file=sys.stderr)
    return 0
