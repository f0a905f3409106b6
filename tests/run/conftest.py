"""Run tests: the real CLI (`trunchbull run`) on releases built from the
fixtures under fixtures/ with the real compiler, talking through the real AI
SDK providers to a local model server (tests/support/chat_server.py) on
127.0.0.1. Each test gets its own response cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import orjson
import pytest

from tests.conftest import REPO, CliResult, run_cli
from tests.support.batch_server import BatchServer
from tests.support.chat_server import ChatServer

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def cli_env(cache: Path, extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src")
    # the test's own response cache; the toolchain and dependency installs
    # (under the cache directory) are shared with the other suites
    env["TRUNCHBULL_RESPONSE_CACHE"] = str(cache / "responses.sqlite3")
    env.update(extra or {})
    return env


def start_cli(*args, cache: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "trunchbull", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(cache, env),
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def read_jsonl(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Until `condition()` holds; a test failure naming `what` if it does not within `timeout`
    (a bound on a hang, never a margin a test's result depends on)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            pytest.fail(f"gave up after {timeout:g} s waiting for {what}")
        time.sleep(0.02)


def wait_for_records(log: Path, count: int, timeout: float = 60, proc: subprocess.Popen | None = None) -> None:
    """Until the run's log holds `count` records; a test failure saying how many it held (and, given
    the run's process, what it printed if it ended) if it does not."""

    def held() -> int:
        return log.read_bytes().count(b"\n") if log.exists() else 0

    def ended() -> bool:
        return proc is not None and proc.poll() is not None

    try:
        wait_until(lambda: held() >= count or ended(), f"{count} records in {log}", timeout)
    except pytest.fail.Exception:
        pass
    if held() >= count:
        return
    state = f"it holds {held()}" if log.exists() else "it does not exist"
    if ended():
        stdout, stderr = proc.communicate()
        state += f"; the run exited with {proc.returncode}: {stdout}{stderr}"
    pytest.fail(f"waiting for {count} records in {log}: {state}")


@pytest.fixture
def cache_dir(tmp_path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def cli(cache_dir):
    """cli(*args, env=...) → CliResult: `python -m trunchbull …` with this test's cache."""

    def run(*args, env: dict | None = None, timeout: float = 180) -> CliResult:
        return run_cli(*args, env=cli_env(cache_dir, env), timeout=timeout)

    return run


@pytest.fixture
def server():
    with ChatServer() as chat:
        yield chat


@pytest.fixture
def batch_server():
    """The chat server with the providers' batch APIs (tests/support/batch_server.py)."""
    with BatchServer() as server:
        yield server


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """built(name) → the release directory of fixtures/<name> (or examples/<name>), built once."""
    cache: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in cache:
            source = FIXTURES / name if (FIXTURES / name).is_dir() else REPO / "examples" / name
            out = tmp_path_factory.mktemp("releases") / name
            env = cli_env(tmp_path_factory.getbasetemp() / "build-cache")
            proc = subprocess.run(
                [sys.executable, "-m", "trunchbull", "build", source, "-o", out],
                capture_output=True,
                text=True,
                env=env,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            cache[name] = out
        return cache[name]

    return get
