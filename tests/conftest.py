"""Shared fixtures: run the real CLI on real benchmark directories."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def diagnostics(self) -> list[dict]:
        return orjson.loads(self.stdout)

    @property
    def json(self):
        return orjson.loads(self.stdout)


def run_cli(
    *args: str | Path, cwd: Path | None = None, env: dict | None = None, timeout: float | None = None
) -> CliResult:
    merged = dict(os.environ)
    merged["PYTHONPATH"] = str(REPO / "src")
    merged.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=merged,
        timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


@pytest.fixture
def bench(tmp_path):
    """Factory: write a benchmark from {path: content} and return its root."""

    def make(files: dict[str, str | bytes], name: str = "bench") -> Path:
        return write_tree(tmp_path / name, files)

    return make


def read_cases(release: Path) -> list[dict]:
    return [orjson.loads(line) for line in (release / "cases.jsonl").read_bytes().splitlines()]


PANTS_TESTS = REPO / "tests" / "pants"
PANTS_TEST_IDS = "tests/pants/test_"


def pytest_collection_modifyitems(config, items) -> None:
    """The tests that run the real ./pants first: under pytest-xdist they are one unit of work
    (`pytest_xdist_make_scheduler`), the longest, so it starts at once."""
    pants = [item for item in items if item.nodeid.startswith(PANTS_TEST_IDS)]
    if pants:
        items[:] = pants + [item for item in items if not item.nodeid.startswith(PANTS_TEST_IDS)]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """./run-tests runs two pytest-xdist workers: every test is a unit of work of its own, except
    the tests that run the real ./pants, which are one unit run by one worker in order (they
    share a Pants install, a wheelhouse and module-scoped build roots, and one Pants build at a
    time is what a machine of two cores takes), while the other worker takes every other test.
    (pytest-xdist's `loadgroup` would do it, but its group marks set a node ID attribute that
    pytest 9 no longer reads.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PantsTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "pants" if nodeid.startswith(PANTS_TEST_IDS) else nodeid

    return PantsTestsTogether(config, log)
