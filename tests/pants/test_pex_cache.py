"""The plugin shares pex's cache with every other PEX a monorepo builds, from an empty cache and in
any order: a fresh repository that adopts the plugin (the two wheels, SPEC §7's pants.toml) and
has a packed `pex_binary` of its own holding wheels the core's PEX also holds (attrs,
typing_extensions), each scenario with empty named caches and an empty local store, as on a new
CI machine.

pex 2.1.137 keeps an uncompressed wheel zip inside the cache directory of the compressed one, so a
core PEX built with `--no-compress` first made every later compressed PEX of the same wheels fail
(`No such file or directory: …/installed_wheel_zips/<fp>/attrs-….whl`); a cache that such a build
poisoned is repaired by the plugin's next build. Marked `slow`: each scenario builds the core's
PEX from nothing (about a minute)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workspace import REPO, AdoptedRepo, PantsRun, adoption_toml, build_wheelhouse

pytestmark = pytest.mark.slow

SHARED_WHEELS = ["attrs==26.1.0", "typing_extensions==4.16.0"]  # both pinned by the core's lockfile too

APP = {
    "app/BUILD": (
        f"python_requirement(name='reqs', requirements={SHARED_WHEELS!r})\n"
        "python_sources(name='src', dependencies=[':reqs'])\n"
        "pex_binary(name='bin', entry_point='main.py', layout='packed')\n"
    ),
    "app/main.py": "import attrs\nimport typing_extensions\n\nprint(attrs.__version__, typing_extensions.__name__)\n",
}


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    return build_wheelhouse()


def _monorepo(wheelhouse: Path, root: Path) -> AdoptedRepo:
    repo = AdoptedRepo(wheelhouse, root)
    toml = adoption_toml(wheelhouse).replace(
        'backend_packages.add = ["trunchbull_pants"]',
        'backend_packages.add = ["pants.backend.python", "trunchbull_pants"]',
    )
    python = '\n[python]\ninterpreter_constraints = ["CPython==3.11.*"]\n\n[python-infer]\nuse_rust_parser = true\n'
    (repo.root / "pants.toml").write_text(toml + python)
    repo.copy_example("minimal", "benchmark")
    repo.write(APP)
    repo.commit("a benchmark and an app")
    return repo


def _empty_caches(tmp: Path) -> list[str]:
    return [f"--named-caches-dir={tmp / 'named'}", f"--local-store-dir={tmp / 'store'}", "--no-pantsd"]


def _package(repo: AdoptedRepo, caches: list[str], *targets: str, check: bool = True) -> PantsRun:
    return repo.pants(*caches, "package", *targets, debug=False, check=check)


def _built(repo: AdoptedRepo) -> None:
    assert (repo.root / "dist" / "benchmark" / "release" / "release.json").is_file()
    binary = repo.root / "dist" / "app" / "bin.pex"
    proc = subprocess.run([sys.executable, str(binary)], capture_output=True, text=True, env=_clean_env())
    assert proc.returncode == 0 and proc.stdout.split() == ["26.1.0", "typing_extensions"], proc.stderr


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PEX_ROOT")}


@pytest.mark.parametrize("first", ["//benchmark:release", "//app:bin"])
def test_the_release_and_a_users_pex_binary_build_from_an_empty_cache_in_either_order(
    wheelhouse: Path, tmp_path: Path, first: str
) -> None:
    repo = _monorepo(wheelhouse, tmp_path / "monorepo")
    try:
        caches = _empty_caches(tmp_path)
        _package(repo, caches, first)
        # Then everything: the other one builds from the cache the first one filled.
        _package(repo, caches, "::")
        _built(repo)
    finally:
        repo.cleanup()


def _poison(pex_root: Path, work: Path) -> list[str]:
    """What a core PEX built with `--no-compress` left in pex's cache: the shared wheels' zips cached
    uncompressed, by the pex CLI that Pants runs."""
    pex_cli = REPO / ".pants-env" / "pex-2.1.137.pex"
    assert pex_cli.is_file(), "./pants bootstraps the pex CLI on first use"
    python = shutil.which("python3.11") or sys.executable
    env = {**_clean_env(), "PEX_ROOT": str(pex_root), "PIP_CONFIG_FILE": "/dev/null"}
    ca = "/etc/ssl/certs/ca-certificates.crt"
    argv = [python, str(pex_cli), *SHARED_WHEELS, "--layout", "packed", "--no-compress", "-o", str(work / "old.pex")]
    subprocess.run([*argv, *(["--cert", ca] if os.path.isfile(ca) else [])], check=True, env=env, capture_output=True)
    poisoned = sorted(p.parent.relative_to(pex_root).as_posix() for p in pex_root.glob("*_zips/*/un-compressed"))
    # attrs, typing_extensions and pex's bootstrap, each with no compressed zip beside
    assert len([p for p in poisoned if p.startswith("installed_wheel_zips/")]) == 2, poisoned
    assert len([p for p in poisoned if p.startswith("bootstrap_zips/")]) == 1, poisoned
    for entry in poisoned:
        assert [p.name for p in (pex_root / entry).iterdir() if not p.name.startswith(".")] == ["un-compressed"]
    return poisoned


def test_a_cache_poisoned_by_an_uncompressed_core_pex_is_repaired_by_the_next_build(
    wheelhouse: Path, tmp_path: Path
) -> None:
    repo = _monorepo(wheelhouse, tmp_path / "monorepo")
    try:
        caches = _empty_caches(tmp_path)
        pex_root = tmp_path / "named" / "pex_root"
        poisoned = _poison(pex_root, tmp_path)
        broken = _package(repo, caches, "//app:bin", check=False)
        # The failure as users met it: pex takes the compressed entry as made, and it is not there.
        assert broken.code != 0 and "No such file or directory" in broken.stderr, broken.stderr[-3000:]
        assert any(entry in broken.stderr for entry in poisoned), broken.stderr[-3000:]

        repaired = _package(repo, caches, "//benchmark:release")
        warning = f"Removed {len(poisoned)} entries of pex's cache"
        assert warning in repaired.stderr and all(e in repaired.stderr for e in poisoned), repaired.stderr[-3000:]
        assert not list(pex_root.glob("*_zips/*/un-compressed"))
        _package(repo, caches, "//app:bin")
        _built(repo)
    finally:
        repo.cleanup()
