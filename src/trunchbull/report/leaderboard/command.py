"""`trunchbull leaderboard RUN_DIR… [--by FIELD] [-o board.html] [--json]
[--csv FILE]` (SPEC §9): prints the board (or its JSON), and writes the
HTML page and the CSV when asked. Unusable run directories are usage
errors (exit 2)."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from trunchbull.common.files import write_atomic
from trunchbull.common.gc_pause import gc_paused
from trunchbull.report.breakdown import group_of, parse_by, releases_for
from trunchbull.report.leaderboard.board import build_board
from trunchbull.report.leaderboard.html import render_board_html
from trunchbull.report.leaderboard.text import board_csv, render_board
from trunchbull.rundir.reader import read_run_dir


def leaderboard_command(args) -> int:
    with gc_paused():
        return _leaderboard(args)


def _write(path: Path, data: bytes) -> None:
    path = path.absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


def _leaderboard(args) -> int:
    runs = [read_run_dir(path) for path in args.run_dirs]
    by = parse_by(args.by) if args.by else None
    groups = group_of(by, releases_for(by, runs, args.release)) if by else None
    board = build_board(runs, by.field if by else None, groups)
    left_out = [(m["model"], m["leftOut"]) for m in board["models"]]
    notes = [f"{count:,} case(s) of {name} are not in every run and were left out" for name, count in left_out if count]
    if board["releaseChanged"]:
        notes.insert(0, "the runs are of different releases: they are ranked over the cases they share")
    for note in notes:
        print(f"trunchbull: warning: {note}", file=sys.stderr)
    if args.csv is not None:
        _write(args.csv, board_csv(board).encode())
    if args.out is not None:
        title = args.title or "Leaderboard — " + " ".join(
            str(p)
            for p in (runs[0].meta.get("release", {}).get("title"), runs[0].meta.get("release", {}).get("version"))
            if p
        )
        _write(args.out, render_board_html(board, title, notes))
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(board, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(render_board(board, []))
        if args.out is not None:
            print(f"leaderboard: {args.out}")
    return 0
