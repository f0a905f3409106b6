#!/usr/bin/env python3
"""Pants build times of a 50-eval benchmark, next to a floor.

    bench/pants.py                    run the benchmark (a throw-away build root)
    bench/pants.py --install-buildgrid  install BuildGrid (REAPI server, PyPI) into .cache/

Reported (seconds):
  floor: pants --version     the Pants client talking to a warm pantsd
  floor: one Node process    the pinned Node 22 starting and exiting
  cold (empty local store)   fresh pantsd, empty local store: toolchain npm ci,
                             core PEX, every step (network for npm/PyPI)
  cold pantsd, warm store    fresh pantsd, every process a local cache hit
  warm no-op                 pantsd warm, nothing changed (median of 5)
  one-eval edit              one eval changed (median of 3)
  shared-helper edit         a helper imported by 5 evals changed (median of 3)
  transformer edit           examples/data's trivia transformer changed: its two
                             runs, that eval's expansion, the assembly (median of 3)

Targets: warm no-op <= 1.5 s, one-eval edit <= 3 s (pantsd warm).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "pants"))

from workspace import Workspace, fifty_evals  # noqa: E402

BUILDGRID_VERSION = "0.4.4"  # the release that installs on Python 3.11


def install_buildgrid() -> Path:
    venv = REPO / ".cache" / "buildgrid-venv"
    bgd = venv / "bin" / "bgd"
    if bgd.exists():
        return bgd
    candidates = [shutil.which("python3.11"), *sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.11*/bin/python3.11"))]
    python = next((c for c in candidates if c), None)
    if not python:
        raise SystemExit("Python 3.11 is needed to install BuildGrid")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                    f"buildgrid=={BUILDGRID_VERSION}"], check=True)
    return bgd


def timed(fn) -> float:
    start = time.monotonic()
    fn()
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install-buildgrid", action="store_true")
    parser.add_argument("--evals", type=int, default=50)
    parser.add_argument("--skip-cold", action="store_true", help="skip the empty-local-store build")
    args = parser.parse_args()
    if args.install_buildgrid:
        print(install_buildgrid())
        return 0

    ws = Workspace()
    results: list[tuple[str, float]] = []
    try:
        ws.write(fifty_evals(n=args.evals))
        ws.copy_example("data")
        target = "bench50:release"
        if not args.skip_cold:
            with tempfile.TemporaryDirectory(prefix="tb-store-") as store:
                run = ws.pants(f"--local-store-dir={store}", "--no-pantsd", "package", target)
                results.append(("cold (empty local store, no pantsd)", run.seconds))
        results.append(("cold pantsd, warm store", ws.pants("package", target).seconds))
        results.append(("floor: pants --version (warm pantsd)",
                        statistics.median(ws.pants("--version").seconds for _ in range(5))))
        node = REPO / ".cache" / "toolchain" / "node_modules" / ".bin" / "node"
        if node.exists():
            results.append(("floor: one Node process", statistics.median(
                timed(lambda: subprocess.run([str(node), "-e", ""], check=True)) for _ in range(5))))
        results.append(("warm no-op", statistics.median(ws.pants("package", target).seconds for _ in range(5))))

        def edit(rel: str, old: str, tgt: str = target) -> float:
            path = ws.root / rel
            text = path.read_text()
            path.write_text(text.replace(old, f"{old} {uuid.uuid4().hex[:6]}", 1))
            return ws.pants("package", tgt).seconds

        results.append(("one-eval edit", statistics.median(edit("bench50/evals/e20.ts", "Eval") for _ in range(3))))
        results.append(("shared-helper edit (5 evals)",
                        statistics.median(edit("bench50/lib/shared.ts", "Answer") for _ in range(3))))
        data = "examples/data:release"
        ws.pants("package", data)
        results.append(("transformer edit (examples/data)", statistics.median(
            edit("examples/data/evals/trivia/transform.ts", "// A case transformer", data) for _ in range(3))))
    finally:
        ws.cleanup()

    width = max(len(name) for name, _ in results)
    print(f"Pants 2.17.1, {args.evals}-eval benchmark (3 cases each), this machine:")
    for name, seconds in results:
        print(f"  {name:<{width}}  {seconds:7.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
