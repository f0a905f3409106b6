"""One fuzz trial: run the real CLI on a (mutated) benchmark or responses
file under tests/fuzz/reaper.py, and check the invariants every run must
keep, whatever the input:

  * it ends before the deadline (no hang);
  * exit 0 or 1, or 2 only for an unreadable path, a failed dependency
    install or unusable grading input;
  * no traceback and no internal error; with --json, stdout is JSON;
  * after a failure nothing is at OUT (nor beside it);
  * after a success OUT is a release that verifies, with read-only files;
  * no process is left behind.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 150.0  # well past every internal deadline a trial can reach (bundling 120 s, inspection 60 s)
EXIT_2_REASONS = (
    "path-unreadable",
    "installing dependencies",
    "trunchbull: error: the benchmark path",
    "is not a benchmark directory",
)


@dataclass
class Trial:
    command: list[str]
    returncode: int
    stdout: bytes
    stderr: str
    hung: bool
    seconds: float
    leftover: list[dict]


def run_cli(args: list[str], env: dict[str, str], cwd: Path | None = None) -> Trial:
    """The CLI as a child of the reaper, which reports what it left behind."""
    with tempfile.TemporaryDirectory(prefix="trunchbull-fuzz-report-") as tmp:
        report = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "trunchbull", *args]
        proc = subprocess.run(
            [sys.executable, "-m", "tests.fuzz.reaper", str(report), str(DEADLINE_S), "--", *command],
            capture_output=True,
            env=env,
            cwd=cwd or REPO,
            stdin=subprocess.DEVNULL,
        )
        data = orjson.loads(report.read_bytes())
    return Trial(
        command,
        data["returncode"],
        proc.stdout,
        proc.stderr.decode(errors="replace"),
        data["hung"],
        data["seconds"],
        data["leftover"],
    )


def fuzz_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{REPO / 'src'}{os.pathsep}{REPO}"
    env["TRUNCHBULL_CACHE_DIR"] = str(cache)
    env.pop("TRUNCHBULL_DEBUG", None)
    return env


def problems_of(trial: Trial) -> list[str]:
    """The invariants every trial keeps, broken ones described."""
    found = []
    if trial.hung:
        found.append(f"hung: still running after {DEADLINE_S:g} s")
    if trial.leftover:
        found.append(f"left processes behind: {trial.leftover}")
    if "Traceback" in trial.stderr or "internal error" in trial.stderr:
        found.append(f"crashed: {trial.stderr[-2000:]}")
    if trial.returncode == 2 and not any(reason in trial.stderr for reason in EXIT_2_REASONS):
        found.append(f"exit 2 without an unreadable path: {trial.stderr[-2000:]}")
    elif trial.returncode not in (0, 1, 2) and not trial.hung:
        found.append(f"exit {trial.returncode}: {trial.stderr[-2000:]}")
    return found


def check_build(trial: Trial, out: Path) -> list[str]:
    found = problems_of(trial)
    if trial.returncode in (0, 1):  # (a usage or environment error, exit 2, is a message on stderr)
        try:
            orjson.loads(trial.stdout)
        except orjson.JSONDecodeError:
            found.append(f"--json output is not JSON: {trial.stdout[:500]!r}")
    siblings = sorted(p.name for p in out.parent.iterdir() if p.name != out.name)
    if siblings:
        found.append(f"files beside OUT: {siblings}")
    if trial.returncode != 0:
        if os.path.lexists(out):
            found.append("a failed build wrote to OUT")
        return found
    found.extend(release_problems(out))
    return found


def release_problems(out: Path) -> list[str]:
    sys.path.insert(0, str(REPO / "src"))
    from trunchbull.release.files import read_release
    from trunchbull.release.verify import verify

    found = [f"release does not verify: {p}" for p in verify(read_release(out))]
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        if mode & 0o222:
            found.append(f"{path.relative_to(out)} is writable ({oct(mode)})")
    return found
