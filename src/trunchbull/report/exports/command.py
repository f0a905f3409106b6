"""`trunchbull export RUN_DIR --format junit|csv [-o FILE]` (SPEC §9):
standard output without -o; the file is written whole or not at all."""

from __future__ import annotations

import sys
from pathlib import Path

from trunchbull.common.files import write_atomic
from trunchbull.common.gc_pause import gc_paused
from trunchbull.report.exports.csv_export import results_csv
from trunchbull.report.exports.junit import junit_xml
from trunchbull.rundir.reader import read_run_dir


def export_command(args) -> int:
    with gc_paused():
        return _export_command(args)


def _export_command(args) -> int:
    run = read_run_dir(args.run_dir)
    data = junit_xml(run) if args.format == "junit" else results_csv(run).encode()
    if args.out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        out: Path = args.out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, data)
        print(f"wrote {args.out} ({args.format}, {len(run.results):,} sample(s))", file=sys.stderr)
    return 0
