"""Throw-away Pants build roots for integration tests and bench/pants.py.

* `Workspace`: a monorepo running the plugin and the core from this checkout's sources.
* `AdoptedRepo`: a fresh git repository that adopts the plugin as a user does, from the two
  wheels (`build_wheelhouse`) and three lines of `pants.toml`.

Both run this checkout's `./pants` (so the Pants install, the pex CLI and the local store/cache
are shared), each with its own pantsd, stopped at the end.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]
PANTS = REPO / "pants"


@dataclass
class PantsRun:
    argv: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float

    def counter(self, name: str) -> int:
        """A counter of `--stats-log` (0 when absent)."""
        match = re.search(rf"^\s*{re.escape(name)}: (\d+)", self.stderr, re.M)
        return int(match.group(1)) if match else 0

    @property
    def executed(self) -> list[str]:
        """Descriptions of the processes that actually ran (needs `-ldebug`):
        Pants logs `Running <description> under semaphore` for a process it
        executes, and nothing of the kind for a cache hit or a memoized one."""
        return sorted(re.findall(r"\[DEBUG\] Running (.*?) under semaphore", self.stderr))


class BuildRoot:
    """A Pants build root in a temporary directory, run with this checkout's Pants install, with
    its own pantsd (stopped by `cleanup`)."""

    # The launcher every command runs (this checkout's ./pants unless a test sets another).
    launcher: Path = PANTS

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="tb-pants-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self._setup()

    def _setup(self) -> None:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        """Environment variables of every Pants run (besides those ./pants sets)."""
        return {}

    def write(self, files: dict[str, str]) -> None:
        for rel, content in files.items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)

    def copy_example(self, name: str, dest: str | None = None) -> str:
        dest = dest or f"examples/{name}"
        shutil.copytree(
            REPO / "examples" / name, self.root / dest, ignore=shutil.ignore_patterns("node_modules", "dist")
        )
        return dest

    def copy_benchmark(self, name: str) -> str:
        """benchmarks/<name> of this checkout, at the same path in the build root."""
        dest = f"benchmarks/{name}"
        shutil.copytree(
            REPO / "benchmarks" / name, self.root / dest, ignore=shutil.ignore_patterns("node_modules", "dist")
        )
        return dest

    def pants(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        check: bool = True,
        timeout: float = 900,
        debug: bool = True,
        cwd: Path | None = None,
    ) -> PantsRun:
        inherited = {k: v for k, v in os.environ.items() if self.launcher == PANTS or not k.startswith("PANTS_")}
        merged = {**inherited, "PANTS_BOOTSTRAP_QUIET": "1", **self.env(), **(env or {})}
        for var in ("PYTHONPATH", "VIRTUAL_ENV", "PEX_ROOT"):
            merged.pop(var, None)
        start = time.monotonic()
        # At debug level by default: `executed` reads it. (A change of the log level between runs
        # restarts pantsd: keep it the same within one build root.)
        argv = [str(self.launcher), *(["-ldebug"] if debug else []), *args]
        proc = subprocess.run(argv, cwd=cwd or self.root, env=merged, capture_output=True, text=True, timeout=timeout)
        run = PantsRun(list(args), proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)
        if check and proc.returncode != 0:
            raise AssertionError(f"pants {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-6000:]}")
        return run

    def stop_pantsd(self) -> None:
        """Stop the pantsd that this build root started (by its pid file)."""
        for pid_file in (self.root / ".pids").glob("*/pantsd/pid"):
            try:
                pid = int(pid_file.read_text().strip())
            except (OSError, ValueError):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            for _ in range(100):
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)

    def cleanup(self) -> None:
        self.stop_pantsd()
        shutil.rmtree(self.root, ignore_errors=True)


class Workspace(BuildRoot):
    """A small monorepo that runs the plugin and the core from this checkout's sources (as this
    repository does): a copy of its pants.toml (with `pythonpath` pointing at this checkout's
    rules/), the core's sources and the lockfiles, plus whatever benchmarks a test writes."""

    def _setup(self) -> None:
        toml = (REPO / "pants.toml").read_text()
        toml = toml.replace('"%(buildroot)s/rules"', f'"{REPO / "rules"}"')
        (self.root / "pants.toml").write_text(toml)
        shutil.copyfile(REPO / "BUILD", self.root / "BUILD")
        shutil.copytree(REPO / "build-support", self.root / "build-support")
        shutil.copytree(
            REPO / "src" / "trunchbull",
            self.root / "src" / "trunchbull",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        for sub in ("python", "pants"):
            shutil.copytree(REPO / "third_party" / sub, self.root / "third_party" / sub)
        # The toolchain's lockfile and those installed on first use (the core's BUILD names them all).
        for npm in sorted((REPO / "third_party").glob("npm*")):
            (self.root / "third_party" / npm.name).mkdir(parents=True)
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(npm / name, self.root / "third_party" / npm.name / name)


# -----------------------------------------------------------------------------------------------
# Adoption: the distributions in another repository
# -----------------------------------------------------------------------------------------------

WHEELS = ("trunchbull", "trunchbull_pants")


def version() -> str:
    match = re.search(r'^__version__ = "([^"]+)"$', (REPO / "src/trunchbull/__init__.py").read_text(), re.M)
    assert match
    return match.group(1)


def build_wheelhouse() -> Path:
    """Build the two wheels with this checkout's Pants and return the directory that holds them:
    `.cache/wheelhouse/<hash of the wheels>/`. Pants keys its caches by the `find_links` URL, not
    by what it holds, so a wheelhouse named by its content is a cache hit when the wheels are the
    same (they are byte-reproducible) and a new key when they change."""
    # Inside the build root (Pants' rule for `--pants-distdir`), under the git- and Pants-ignored .cache/.
    (REPO / ".cache").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wheel-build-", dir=REPO / ".cache") as out:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PEX_ROOT")}
        proc = subprocess.run(
            [
                str(PANTS),
                "--no-pantsd",
                f"--pants-distdir={out}",
                "package",
                "//src/trunchbull:dist",
                "//rules/trunchbull_pants:dist",
            ],
            cwd=REPO,
            env={**env, "PANTS_BOOTSTRAP_QUIET": "1"},
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if proc.returncode != 0:
            raise AssertionError(f"building the wheels failed:\n{proc.stderr[-6000:]}")
        wheels = [Path(out) / f"{name}-{version()}-py3-none-any.whl" for name in WHEELS]
        digest = hashlib.sha256(b"".join(w.read_bytes() for w in wheels)).hexdigest()[:16]
        house = REPO / ".cache" / "wheelhouse" / digest
        if not house.is_dir():
            house.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=house.parent))
            for wheel in wheels:
                shutil.copyfile(wheel, tmp / wheel.name)
            try:
                tmp.rename(house)
            except OSError:  # built by a concurrent run meanwhile: the same bytes
                shutil.rmtree(tmp, ignore_errors=True)
    return house


def adoption_toml(wheelhouse: Path) -> str:
    """SPEC §7's whole `pants.toml` of an adopting repository, plus the wheelhouse."""
    return (
        "[GLOBAL]\n"
        'pants_version = "2.17.1"\n'
        f'plugins = ["trunchbull-pants=={version()}"]\n'
        'backend_packages.add = ["trunchbull_pants"]\n'
        "\n"
        "[python-repos]\n"
        f'find_links = ["file://{wheelhouse}"]\n'
    )


ADOPTION_GITIGNORE = "/.pants.d/\n/.pids/\n/dist/\n"


class AdoptedRepo(BuildRoot):
    """A fresh git repository that uses Trunchbull as a user's monorepo would: nothing of this
    checkout in it but what a test writes (benchmarks, helpers), and the pants.toml of SPEC §7
    naming a wheelhouse of the two distributions (`build_wheelhouse`)."""

    def __init__(self, wheelhouse: Path, root: Path | None = None) -> None:
        self.wheelhouse = wheelhouse
        super().__init__(root)

    def _setup(self) -> None:
        (self.root / "pants.toml").write_text(adoption_toml(self.wheelhouse))
        (self.root / ".gitignore").write_text(ADOPTION_GITIGNORE)
        self.git("init", "-q")

    def env(self) -> dict[str, str]:
        # What this offline machine needs and a user elsewhere would not write: ./pants points
        # Pants at a locally built pex CLI and the system CA bundle; the machine's pip config
        # (a constraints file) must not reach pex; Pants runs from a venv, not the `pants`
        # launcher (which would need GitHub), so its warning about that is off.
        return {
            "PANTS_SUBPROCESS_ENVIRONMENT_ENV_VARS": "['PIP_CONFIG_FILE=/dev/null']",
            "NO_SCIE_WARNING": "1",
        }

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=True,
        )
        return proc.stdout

    def commit(self, message: str = "commit") -> None:
        self.git("add", "-A")
        self.git("commit", "-qm", message)


LAUNCHER = REPO / "tools" / "pants-launcher" / "pants"


class LaunchedRepo(AdoptedRepo):
    """An adopting repository whose every Pants command runs its own copy of the launcher a user
    copies (tools/pants-launcher/pants), with the launcher cache `cache`, and none of the
    variables this checkout's ./pants sets."""

    def __init__(self, wheelhouse: Path, root: Path, cache: Path) -> None:
        self.cache = cache
        super().__init__(wheelhouse, root)
        shutil.copyfile(LAUNCHER, self.root / "pants")
        (self.root / "pants").chmod(0o755)
        self.launcher = self.root / "pants"

    def env(self) -> dict[str, str]:
        # Only what this machine needs (its pip config must not reach pex, see AdoptedRepo); the
        # launcher itself silences the deprecation warning and names the pex CLI.
        return {
            "PANTS_SUBPROCESS_ENVIRONMENT_ENV_VARS": "['PIP_CONFIG_FILE=/dev/null']",
            "PANTS_LAUNCHER_CACHE": str(self.cache),
            "PANTS_LAUNCHER_QUIET": "",
        }


# -----------------------------------------------------------------------------------------------
# A REAPI remote cache: BuildGrid's CAS + ActionCache on 127.0.0.1
# -----------------------------------------------------------------------------------------------

BUILDGRID_VERSION = "0.4.4"  # the release that installs on Python 3.11

BUILDGRID_CONFIG = """\
thread-pool-size: 64
server:
  - !channel
    address: "127.0.0.1:{port}"
    insecure-mode: true
storages:
  - !disk-storage &cas
    path: {cas}
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
instances:
  - name: ""
    services:
      - !action-cache
        cache: *ac
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
"""


def install_buildgrid() -> Path:
    """BuildGrid from PyPI in .cache/buildgrid-venv/ (once); returns its `bgd`."""
    configured = os.environ.get("TRUNCHBULL_BGD")
    if configured:
        return Path(configured)
    venv = REPO / ".cache" / "buildgrid-venv"
    bgd = venv / "bin" / "bgd"
    if bgd.exists():
        return bgd
    candidates = [
        shutil.which("python3.11"),
        *sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.11*/bin/python3.11")),
    ]
    python = next((c for c in candidates if c), None) or sys.executable
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"buildgrid=={BUILDGRID_VERSION}",
        ],
        check=True,
    )
    return bgd


def _ephemeral_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def buildgrid(directory: Path) -> Iterator[str]:
    """A BuildGrid server (its CAS on disk under `directory`) on an ephemeral port of 127.0.0.1,
    for as long as the context lasts; yields its `grpc://` address."""
    import socket

    bgd = install_buildgrid()
    directory.mkdir(parents=True, exist_ok=True)
    port = _ephemeral_port()
    config = directory / "buildgrid.yml"
    config.write_text(BUILDGRID_CONFIG.format(port=port, cas=directory / "cas"))
    with (directory / "bgd.log").open("w") as log:
        proc = subprocess.Popen([str(bgd), "server", "start", str(config)], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError((directory / "bgd.log").read_text())
                    time.sleep(0.3)
            yield f"grpc://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def remote_cache_options(address: str, *, write: bool = True) -> list[str]:
    """Pants' own remote-cache options for a BuildGrid at `address`. BuildGrid's default gRPC
    thread pool is small and the toolchain is thousands of blobs: Pants' concurrency is capped."""
    return [
        f"--remote-store-address={address}",
        "--remote-instance-name=",
        "--remote-cache-read",
        f"--{'' if write else 'no-'}remote-cache-write",
        "--remote-store-rpc-concurrency=16",
        "--remote-cache-rpc-concurrency=16",
    ]


def fifty_evals(root: str = "bench50", n: int = 50) -> dict[str, str]:
    """A benchmark of `n` evals: evals 0-4 import lib/shared.ts, evals 5-9
    import shared/prompts.ts from outside the benchmark root (a
    `trunchbull_sources` target), the rest self-contained."""
    files = {
        f"{root}/BUILD": 'trunchbull_release(name="release")\n',
        f"{root}/benchmark.config.ts": 'export default { protocolVersion: 1, title: "Fifty", version: "1" }\n',
        f"{root}/lib/shared.ts": 'export const SYSTEM = "Answer briefly."\n',
        "shared/BUILD": "trunchbull_sources()\n",
        "shared/prompts.ts": 'export const PREFIX = "Question: "\n',
    }
    for i in range(n):
        name = f"e{i:02d}"
        imports, system, prefix = "", "", '""'
        if i < 5:
            imports = 'import { SYSTEM } from "../lib/shared"\n'
            system = "  systemPrompt: SYSTEM,\n"
        elif i < 10:
            imports = 'import { PREFIX } from "../../shared/prompts"\n'
            prefix = "PREFIX"
        cases = ",\n".join(
            f'    {{ id: "{name}.c{j}", prompt: {prefix} + "What is {i} + {j}?", '
            f'evaluate: {{ kind: "exact", expected: "{i + j}" }} }}'
            for j in range(3)
        )
        files[f"{root}/evals/{name}.ts"] = (
            f"{imports}export default {{\n  id: \"{name}\",\n  title: \"Eval {i}\",\n{system}"
            f"  cases: [\n{cases},\n  ],\n}}\n"
        )
    return files
