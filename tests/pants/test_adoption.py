"""Adoption in another repository (SPEC §7): a fresh git repository with nothing of this checkout
in it but a copy of examples/support under benchmark/ and a shared helper, the two wheels built
by Pants into a wheelhouse, and SPEC §7's pants.toml plus `find_links`. One pantsd serves every
step. Marked `slow` (a few minutes: the wheels, a PEX of the core resolved from the wheelhouse
and PyPI, a cold build)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from workspace import ADOPTION_GITIGNORE, AdoptedRepo, PantsRun, adoption_toml, build_wheelhouse, version

pytestmark = pytest.mark.slow

HELPER = 'export const WINDOW = "30 days"\n'


def _tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _installed_cli(wheelhouse: Path, tmp: Path) -> Path:
    """`pip install trunchbull-*.whl` into a fresh venv: the CLI, with nothing of this checkout."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wheel = wheelhouse / f"trunchbull-{version()}-py3-none-any.whl"
    proc = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return venv / "bin" / "trunchbull"


def _cli_build(cli: Path, root: Path, out: Path, cache: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRUNCHBULL_TOOLCHAIN", "VIRTUAL_ENV")}
    proc = subprocess.run(
        [str(cli), "build", str(root), "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=out.parent,
        env={**env, "TRUNCHBULL_CACHE_DIR": str(cache)},
    )
    assert proc.returncode == 0, proc.stderr


def _quiet(run: PantsRun) -> PantsRun:
    """No warnings (deprecations included) on a command of an adopting repository."""
    assert "[WARN]" not in run.stderr and "DEPRECATED" not in run.stderr, run.stderr[-3000:]
    return run


def test_a_fresh_repository_adopts_the_plugin_with_three_lines(tmp_path: Path) -> None:
    wheelhouse = build_wheelhouse()
    assert sorted(p.name for p in wheelhouse.iterdir()) == [
        f"trunchbull-{version()}-py3-none-any.whl",
        f"trunchbull_pants-{version()}-py3-none-any.whl",
    ]
    repo = AdoptedRepo(wheelhouse, tmp_path / "monorepo")
    try:
        bench = repo.copy_example("support", "benchmark")
        eval_file = repo.root / bench / "evals" / "refunds.ts"
        eval_file.write_text(
            'import { WINDOW } from "../../shared/policy"\n'
            + eval_file.read_text().replace('expected: "30 days"', "expected: WINDOW")
        )
        repo.write({"shared/policy.ts": HELPER, "shared/BUILD": "trunchbull_sources()\n"})
        repo.commit("a benchmark")
        # The user's whole set-up: SPEC §7's pants.toml (+ the wheelhouse) and one BUILD line.
        assert (repo.root / "pants.toml").read_text() == adoption_toml(wheelhouse)
        assert (repo.root / bench / "BUILD").read_text() == 'trunchbull_release(name="release")\n'
        assert sorted(repo.git("ls-files").split()) == sorted(
            [
                ".gitignore",
                "pants.toml",
                "shared/BUILD",
                "shared/policy.ts",
                *(f"{bench}/{p}" for p in _tree(repo.root / bench)),
            ]
        )
        assert ADOPTION_GITIGNORE == (repo.root / ".gitignore").read_text()

        _quiet(repo.pants("package", "//benchmark:release", debug=False))
        cli = _installed_cli(wheelhouse, tmp_path)
        _cli_build(cli, repo.root / bench, tmp_path / "cli", tmp_path / "cache")
        built = _tree(repo.root / "dist" / "benchmark" / "release")
        assert built == _tree(tmp_path / "cli")
        assert b"30 days" in built["cases.jsonl"]

        check = _quiet(repo.pants("check", "//benchmark:release", debug=False))
        assert "trunchbull succeeded" in check.stderr

        dependents = _quiet(repo.pants("dependents", "shared/policy.ts", debug=False)).stdout.split()
        # The eval importing it (and, as for any generated target, its `trunchbull_sources` generator).
        assert dependents == ["benchmark/evals/refunds.ts:../release", "shared:shared"]

        # An edit of the helper: --changed-since finds the release through the eval importing it.
        token = uuid.uuid4().hex[:8]
        (repo.root / "shared/policy.ts").write_text(HELPER.replace("30 days", f"30 days ({token})"))
        changed = _quiet(repo.pants("--changed-since=HEAD", "--changed-dependents=transitive", "package", debug=False))
        assert "Wrote dist/benchmark/release" in changed.stderr
        rebuilt = _tree(repo.root / "dist" / "benchmark" / "release")
        assert token.encode() in rebuilt["cases.jsonl"]
        _cli_build(cli, repo.root / bench, tmp_path / "cli2", tmp_path / "cache")
        assert rebuilt == _tree(tmp_path / "cli2")
    finally:
        repo.cleanup()
