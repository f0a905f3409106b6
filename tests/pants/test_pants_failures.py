"""A broken benchmark in a fresh repository that adopts the plugin (as test_adoption.py's): Pants
reports what `trunchbull build` reports from the repository root, line for line and every error
of the run, fails as Pants' own checkers fail (a one-line summary, no traceback, a non-zero
exit), warns once about the import that dependency inference cannot resolve, and does not
recompute a failure it has seen. Marked `slow` (the wheels, a cold core PEX, pantsd)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from workspace import REPO, AdoptedRepo, PantsRun, build_wheelhouse

pytestmark = pytest.mark.slow

CONFIG = 'export default {\n  protocolVersion: 1,\n  titel: "Broken",\n  version: "1",\n}\n'
BROKEN_EVAL = (
    'import { SYSTEM } from "./missing"\n'
    'export default { id: "a", systemPrompt: SYSTEM, cases: [{ id: "a.1", prompt: "hi", evaluate: { kind: "non_empty" } }] }\n'
)
GOOD_EVAL = 'export default { id: "b", cases: [{ id: "b.1", prompt: "hi", evaluate: { kind: "non_empty" } }] }\n'
STEPS = ("Read the config", "Bundle and inspect", "Expand the cases", "Assemble", "Run the transformer", "Scan imports")
SUMMARY = "trunchbull: benchmarks/broken:release: 2 errors; nothing was written"


def _cli_diagnostics(repo: Path) -> list[str]:
    """`trunchbull build benchmarks/broken` run from the repository root: its diagnostic lines
    (without its own summary line)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(
        [str(REPO / "trunchbull"), "build", "benchmarks/broken"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 1, proc.stderr
    *lines, summary = proc.stderr.splitlines()
    assert summary == "trunchbull: 2 errors; nothing was written"
    return lines


def _no_traceback(run: PantsRun) -> None:
    for text in ("Traceback", "Engine traceback", "Exception encountered", "TrunchbullCompileError"):
        assert text not in run.stderr, run.stderr[-4000:]


def _block_after(stderr: str, marker: str, n: int) -> list[str]:
    lines = stderr.splitlines()
    [at] = [i for i, line in enumerate(lines) if line.endswith(marker)]
    return lines[at + 1 : at + 1 + n]


def test_a_broken_benchmark_fails_with_the_clis_diagnostics(tmp_path: Path) -> None:
    repo = AdoptedRepo(build_wheelhouse(), tmp_path / "monorepo")
    try:
        repo.write(
            {
                "benchmarks/broken/BUILD": 'trunchbull_release(name="release")\n',
                "benchmarks/broken/benchmark.config.ts": CONFIG,
                "benchmarks/broken/evals/a.ts": BROKEN_EVAL,
                "benchmarks/broken/evals/b.ts": GOOD_EVAL,
            }
        )
        repo.commit("a broken benchmark")
        cli = _cli_diagnostics(repo.root)
        assert cli[0].startswith('benchmarks/broken/evals/a.ts:1:24: error[bundle]: Could not resolve "./missing"')
        assert cli[2].startswith("benchmarks/broken/benchmark.config.ts:3:3: error[config-unknown-key]")

        package = repo.pants("package", "benchmarks/broken:release", check=False, debug=False)
        assert package.code != 0
        _no_traceback(package)
        # The summary, then exactly the CLI's lines: repository-relative, both errors (the config
        # error did not stop the later stages).
        assert _block_after(package.stderr, SUMMARY, len(cli)) == cli, package.stderr[-4000:]
        assert not (repo.root / "dist").exists()
        # Dependency inference warned about the import it cannot resolve, once, with its place.
        warning = 'benchmarks/broken/evals/a.ts:1:24: import "./missing": no file benchmarks/broken/evals/missing'
        assert package.stderr.count(warning) == 1, package.stderr[-4000:]

        check = repo.pants("check", "benchmarks/broken:release", check=False, debug=False)
        assert check.code != 0
        _no_traceback(check)
        lines = check.stderr.splitlines()
        assert cli == [line for line in lines if line in cli]
        assert "✕ trunchbull failed." in check.stderr
        assert warning not in check.stderr  # inferred once per pantsd, not once per goal

        # A failure is a cached result: after a pantsd restart (another log level), neither
        # `check` nor `package` runs a compile step again.
        again = repo.pants("check", "benchmarks/broken:release", check=False, debug=True)
        assert again.code != 0
        package_again = repo.pants("package", "benchmarks/broken:release", check=False, debug=True)
        assert package_again.code != 0
        for run in (again, package_again):
            assert [p for p in run.executed if p.startswith(STEPS)] == [], run.executed
    finally:
        repo.cleanup()
