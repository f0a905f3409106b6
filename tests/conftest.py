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


PANTS_TEST_IDS = "tests/pants/test_"
# The modules that run the real ./pants, longest first (minutes each on 2 cores): each one is a
# unit of work, started before any other test, so the two longest run side by side from the start.
PANTS_MODULES = (
    "tests/pants/test_pants_integration.py",
    "tests/pants/test_pex_cache.py",
    "tests/pants/test_adoption.py",
    "tests/pants/test_launcher.py",
    "tests/pants/test_pants_failures.py",
)


def _pants_rank(nodeid: str) -> int:
    module = nodeid.split("::", 1)[0]
    return PANTS_MODULES.index(module) if module in PANTS_MODULES else len(PANTS_MODULES)


def pytest_collection_modifyitems(config, items) -> None:
    """The tests that run the real ./pants first, their longest modules first: under
    pytest-xdist each module of them is a unit of work (`pytest_xdist_make_scheduler`)."""
    pants = [item for item in items if item.nodeid.startswith(PANTS_TEST_IDS)]
    if pants:
        pants.sort(key=lambda item: _pants_rank(item.nodeid))  # stable: a module's tests stay in order
        items[:] = pants + [item for item in items if not item.nodeid.startswith(PANTS_TEST_IDS)]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """./run-tests runs two pytest-xdist workers. Every test is a unit of work of its own, except
    those that run the real ./pants: each of their modules is one unit, run by one worker in
    order (its tests share module-scoped build roots and a pantsd). Their Pants runs are mostly
    waiting (process start-up, downloads), so the two workers begin with the two longest modules
    side by side and take every other test as they free up."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PantsModulesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid.split("::", 1)[0] if nodeid.startswith(PANTS_TEST_IDS) else nodeid

    return PantsModulesTogether(config, log)
