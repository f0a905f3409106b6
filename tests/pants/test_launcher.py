"""The launcher a user copies into their repository (tools/pants-launcher/pants), used from a
fresh repository that holds no file of this checkout: it installs Pants 2.17.1 and the plugin
from the registries and the wheelhouse (nothing from GitHub, nothing of this checkout), writes
the constraints file the repository then owns, and runs Pants without warnings. Marked `slow`
(a cold install of Pants into an empty cache, a cold build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace import REPO, LaunchedRepo, build_wheelhouse, version

pytestmark = pytest.mark.slow

EVAL = 'export default { id: "hello", cases: [{ id: "hello.1", prompt: "hi", evaluate: { kind: "non_empty" } }] }\n'


def test_the_launcher_runs_pants_in_a_repository_with_nothing_of_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SCIE_WARNING", raising=False)  # the launcher sets it itself
    repo = LaunchedRepo(build_wheelhouse(), tmp_path / "monorepo", tmp_path / "launcher-cache")
    try:
        repo.write({"hello/BUILD": 'trunchbull_release(name="release")\n', "hello/evals/hello.ts": EVAL})
        first = repo.pants("--version", debug=False)
        assert first.stdout.strip() == "2.17.1"
        constraints = (repo.root / "pants-constraints.txt").read_text()
        assert "pantsbuild.pants==2.17.1\n" in constraints and f"trunchbull-pants=={version()}\n" in constraints
        assert "wrote" in first.stderr and "commit it" in first.stderr
        repo.commit("the launcher and its constraints")
        assert sorted(repo.git("ls-files").split()) == [
            ".gitignore",
            "hello/BUILD",
            "hello/evals/hello.ts",
            "pants",
            "pants-constraints.txt",
            "pants.toml",
        ]

        # From a subdirectory: the build root is found from pants.toml, as Pants' own launcher does.
        package = repo.pants("package", "//hello:release", debug=False, cwd=repo.root / "hello")
        assert "DEPRECATED" not in package.stderr and "[WARN]" not in package.stderr, package.stderr[-3000:]
        assert (repo.root / "dist/hello/release/release.json").is_file()
        # The plugin came from the constraints file into Pants' environment: Pants resolved nothing.
        assert "Resolving plugins" not in package.stderr
        # What the launcher installed names no path of this checkout (the wheelhouse aside).
        [env_dir] = [p for p in repo.cache.iterdir() if p.is_symlink()]  # <key> -> the environment
        assert (env_dir / "ready").is_file() and (env_dir / "pex.pex").is_file()
        # One install on first use: the resolve that wrote the constraints is the environment.
        assert (
            "installing" not in first.stderr
            and len([p for p in repo.cache.iterdir() if p.is_dir() and not p.is_symlink()]) == 1
        )
        assert str(REPO) not in (env_dir / "venv/bin/pants").read_text() + constraints

        # A second command reuses the environment (no install message).
        again = repo.pants("--version", debug=False)
        assert "installing" not in again.stderr
    finally:
        repo.cleanup()
