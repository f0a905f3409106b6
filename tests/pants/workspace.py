"""A throw-away Pants build root for integration tests and bench/pants.py.

It is a small monorepo that adopts the plugin the way docs/pants.md says: a
copy of this repository's pants.toml (with `pythonpath` pointing at this
checkout's rules/), the core's sources and the lockfiles, plus whatever
benchmarks a test writes. It runs this checkout's `./pants` (so the Pants
install, the pex CLI and the local store/cache are shared), with its own
pantsd, stopped at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

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


class Workspace:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="tb-pants-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self._setup()

    def _setup(self) -> None:
        toml = (REPO / "pants.toml").read_text()
        toml = toml.replace('"%(buildroot)s/rules"', f'"{REPO / "rules"}"')
        (self.root / "pants.toml").write_text(toml)
        shutil.copyfile(REPO / "BUILD", self.root / "BUILD")
        shutil.copytree(REPO / "src" / "trunchbull", self.root / "src" / "trunchbull",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for sub in ("python", "pants"):
            shutil.copytree(REPO / "third_party" / sub, self.root / "third_party" / sub)
        (self.root / "third_party" / "npm").mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(REPO / "third_party" / "npm" / name, self.root / "third_party" / "npm" / name)

    def write(self, files: dict[str, str]) -> None:
        for rel, content in files.items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)

    def copy_example(self, name: str, dest: str | None = None) -> str:
        dest = dest or f"examples/{name}"
        shutil.copytree(REPO / "examples" / name, self.root / dest,
                        ignore=shutil.ignore_patterns("node_modules", "dist"))
        return dest

    def pants(self, *args: str, env: dict[str, str] | None = None, check: bool = True,
              timeout: float = 900) -> PantsRun:
        merged = {**os.environ, "PANTS_BOOTSTRAP_QUIET": "1", **(env or {})}
        for var in ("PYTHONPATH", "VIRTUAL_ENV", "PEX_ROOT"):
            merged.pop(var, None)
        start = time.monotonic()
        # Always at debug level: `executed` reads it, and a change of the log
        # level between runs would restart pantsd.
        proc = subprocess.run([str(PANTS), "-ldebug", *args], cwd=self.root, env=merged, capture_output=True,
                              text=True, timeout=timeout)
        run = PantsRun(list(args), proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)
        if check and proc.returncode != 0:
            raise AssertionError(f"pants {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-6000:]}")
        return run

    def stop_pantsd(self) -> None:
        """Stop the pantsd that this workspace started (by its pid file)."""
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
