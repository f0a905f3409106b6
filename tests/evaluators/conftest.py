"""Grading tests: fixture benchmarks under fixtures/ are built once per session
with the real compiler (the CLI), then graded with the real `trunchbull grade`."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


def cli(*args: str | Path) -> Run:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src")
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", *map(str, args)], capture_output=True, text=True, env=env
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_bytes(b"".join((row if isinstance(row, bytes) else orjson.dumps(row)) + b"\n" for row in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """built(name) → the release directory of fixtures/<name>, built once."""
    cache: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in cache:
            out = tmp_path_factory.mktemp("releases") / name
            run = cli("build", FIXTURES / name, "-o", out)
            assert run.code == 0, run.stdout + run.stderr
            cache[name] = out
        return cache[name]

    return get
