"""`trunchbull export RUN_DIR --format junit|csv|parquet [-o FILE]` (SPEC §9):
standard output without -o (parquet needs -o); the file is written whole or
not at all. FORMATS maps each format to its writer, one module per format."""

from __future__ import annotations

import sys
from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.common.files import write_atomic
from trunchbull.common.gc_pause import gc_paused
from trunchbull.report.exports.csv_export import results_csv
from trunchbull.report.exports.junit import junit_xml
from trunchbull.rundir.reader import RunDirectory, read_run_dir


def _parquet(run: RunDirectory, out: Path) -> None:
    from trunchbull.report.exports.parquet import write_parquet

    write_parquet(run, out)


# format → bytes for stdout or a file, or a writer that needs a file
TEXT_FORMATS = {"junit": junit_xml, "csv": lambda run: results_csv(run).encode()}
FILE_FORMATS = {"parquet": _parquet}
FORMATS = (*TEXT_FORMATS, *FILE_FORMATS)


def export_command(args) -> int:
    with gc_paused():
        return _export_command(args)


def _export_command(args) -> int:
    if args.format in FILE_FORMATS and args.out is None:
        raise UsageError(f"--format {args.format} writes a binary file: give it with -o FILE")
    run = read_run_dir(args.run_dir)
    if args.format in FILE_FORMATS:
        out: Path = args.out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        FILE_FORMATS[args.format](run, out)
        print(f"wrote {args.out} ({args.format}, {len(run.results):,} sample(s))", file=sys.stderr)
        return 0
    data = TEXT_FORMATS[args.format](run)
    if args.out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        out = args.out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, data)
        print(f"wrote {args.out} ({args.format}, {len(run.results):,} sample(s))", file=sys.stderr)
    return 0
