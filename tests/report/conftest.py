"""Report tests: releases built from fixtures with the real compiler, run
directories made by the real CLI (`grade --run-dir` from recorded answers,
or `run` against the local model server with scripted tool calls), then
`report`, `compare` and `export` run on them as a user would."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from tests.conftest import REPO, CliResult, run_cli
from tests.run.conftest import cli_env

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RUN_FIXTURES = REPO / "tests" / "run" / "fixtures"


def trunchbull(*args, cache: Path, env: dict | None = None, timeout: float = 180) -> CliResult:
    """`python -m trunchbull …` with the response cache under `cache`."""
    return run_cli(*args, env=cli_env(cache, env), timeout=timeout)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("report-cache")


@pytest.fixture(scope="session")
def release_of(tmp_path_factory, session_cache):
    """release_of(name) → the release of tests/report/fixtures/<name> or tests/run/fixtures/<name>, built once."""
    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            source = FIXTURES / name if (FIXTURES / name).is_dir() else RUN_FIXTURES / name
            out = tmp_path_factory.mktemp("releases") / name
            result = trunchbull("build", source, "-o", out, cache=session_cache)
            assert result.code == 0, result.stdout + result.stderr
            built[name] = out
        return built[name]

    return get


@pytest.fixture
def tb(tmp_path):
    """tb(*args) → CliResult: the CLI with this test's response cache."""

    def run(*args, env: dict | None = None) -> CliResult:
        return trunchbull(*args, cache=tmp_path / "cache", env=env)

    return run


def graded_run(
    tb, release: Path, answers: dict[str, str], run_dir: Path, responses_name: str = "answers.jsonl"
) -> Path:
    """A run directory from recorded answers (case ID → output), through `grade --run-dir`."""
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    responses = write_jsonl(run_dir.parent / responses_name, [{"caseId": k, "output": v} for k, v in answers.items()])
    result = tb("grade", release, responses, "--run-dir", run_dir)
    assert result.code in (0, 2), result.stderr  # 2: some case has no response (graded `error`)
    return run_dir


CHROMIUM = Path("/usr/bin/chromium")
# headless as root, and none of Chromium's own network traffic
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / ".cache" / "test-artifacts" / "report"


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium (Debian's, driven by Playwright) for the session;
    installed by tools/ensure-chromium.sh when absent."""
    if not CHROMIUM.exists():
        subprocess.run(["bash", str(REPO / "tools" / "ensure-chromium.sh")], check=False)
    if not CHROMIUM.exists():
        pytest.fail(
            f"the browser tests need Debian's chromium at {CHROMIUM}: run tools/ensure-chromium.sh "
            "(apt-get install -y chromium) as root"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def mmlu(tmp_path_factory, session_cache):
    """benchmarks/mmlu built, and runs of 114 of its cases over its 57 subjects (tests/report/mmlu_runs.py)."""
    from tests.report.mmlu_runs import make_mmlu_runs

    return make_mmlu_runs(tmp_path_factory.mktemp("mmlu"), session_cache)
