#!/usr/bin/env python3
"""Pants build times of a 50-eval benchmark in a repository that adopts the plugin as a user does
(the two wheels, SPEC §7's pants.toml, the launcher of tools/pants-launcher), each next to a
floor measured in the same run.

    bench/pants.py                      run the benchmark (a throw-away git repository)
    bench/pants.py --rounds 3           rounds of the cold-pantsd measurements (medians reported)
    bench/pants.py --no-cold            skip the cold first build
    bench/pants.py --install-buildgrid  install BuildGrid (REAPI server, PyPI) into .cache/

Cold first build (target <= 30 s): `pants --no-pantsd package` with an empty local store and
empty named caches (what a fresh CI machine has; Pants itself installed by the launcher, whose
cache is its default, ~/.cache/trunchbull-pants-launcher/), with what its long steps took (Pants' `Starting:`/`Completed:`
lines) and the floors `pants --no-pantsd --version` (Pants starting) and the pex CLI building a
PEX of polars alone from an empty PEX_ROOT (the largest distribution the core needs).

CI speed, every process already cached, pantsd not running (targets: ratio to the floor):
  floor                  `pants --no-pantsd list //benchmark::` with the same options: Pants
                         starting, its rule graph, reading the BUILD files, target generation
  warm local store       `pants package //benchmark:release`, pantsd cold      (<= 1.5x floor)
  warm remote cache      the same with an empty local store and a warm BuildGrid
                         remote cache on 127.0.0.1 (the floor then also has an
                         empty local store and the remote options)           (<= 2x floor)
Rounds alternate floor and package, each with a fresh pantsd (and fresh local stores).

Edits, pantsd warm (medians): warm no-op (target <= 1.5 s), one-eval edit (<= 3 s), a helper
imported by 5 evals, examples/data's transformer; floors: `pants --version` against a warm
pantsd, one Node process.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "pants"))

from workspace import (  # noqa: E402
    LaunchedRepo,
    PantsRun,
    build_wheelhouse,
    buildgrid,
    fifty_evals,
    install_buildgrid,
    remote_cache_options,
)

TARGET = "//benchmark:release"


def timed(fn) -> float:
    start = time.monotonic()
    fn()
    return time.monotonic() - start


class Bench:
    def __init__(self, repo: LaunchedRepo) -> None:
        self.repo = repo
        self.rows: list[tuple[str, str]] = []

    def pants(self, *args: str) -> PantsRun:
        return self.repo.pants(*args, debug=False)

    def row(self, name: str, value: str) -> None:
        self.rows.append((name, value))
        print(f"  {name}: {value}", file=sys.stderr, flush=True)

    def cold_pair(self, options: list[str], stores: Path | None, rounds: int) -> tuple[list[float], list[float]]:
        """Alternating `--no-pantsd list` (the floor) and `package` with a cold pantsd; with
        `stores`, each run gets its own empty local store under it."""
        floors, packages = [], []
        for i in range(rounds):
            for kind in ("floor", "package"):
                store = [f"--local-store-dir={stores / f'{kind}{i}'}"] if stores else []
                self.repo.stop_pantsd()
                if kind == "floor":
                    floors.append(self.pants("--no-pantsd", *store, *options, "list", "//benchmark::").seconds)
                else:
                    run = self.pants(*store, *options, "--stats-log", "package", TARGET)
                    executed = run.counter("local_execution_requests")
                    packages.append(run.seconds)
                    print(
                        f"    package: {run.seconds:.2f} s, local executions {executed}, remote hits "
                        f"{run.counter('remote_cache_requests_cached')}",
                        file=sys.stderr,
                        flush=True,
                    )
        self.repo.stop_pantsd()
        return floors, packages

    def report_pair(self, label: str, floors: list[float], packages: list[float], target: float) -> None:
        floor, package = statistics.median(floors), statistics.median(packages)
        self.row(f"floor ({label})", f"{floor:.2f} s  (runs: {', '.join(f'{x:.1f}' for x in floors)})")
        self.row(f"package, {label}", f"{package:.2f} s  (runs: {', '.join(f'{x:.1f}' for x in packages)})")
        self.row(f"ratio, {label}", f"{package / floor:.2f}x  (target <= {target}x)")


_STAMP = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) \[(?:DEBUG|INFO)\] (.*)$", re.M)


def phases(stderr: str, started: float) -> list[tuple[str, float]]:
    """What a `-ldebug` cold build spent its time on, from its log lines (UTC timestamps) and the
    wall-clock time `started` of the command: (phase, seconds), each from its first to its last
    line (phases run concurrently: they do not add up)."""
    day = started - started % 86400
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    marks = {
        "Pants start (launcher, options, rule graph)": ("Starting: `package` goal",),
        "toolchain: npm ci of the Node toolchain": (
            "Running Install the pinned Node toolchain",
            "Completed: Install the pinned Node toolchain (npm ci)",
        ),
        "core PEX: pex resolve + install of the lockfile": (
            "Starting: Building trunchbull.pex",
            "Completed: Building trunchbull.pex",
        ),
        "import scans (esbuild, 1 per module)": ("Running Scan imports", "Completed: Scan imports of"),
        "compile steps (config, bundle-inspect, expand, assemble)": (
            "Running Read the config",
            "Completed: Assemble the release",
        ),
    }
    for h, m, sec, text in _STAMP.findall(stderr):
        at = day + int(h) * 3600 + int(m) * 60 + float(sec)
        for name, prefixes in marks.items():
            if any(text.startswith(p) for p in prefixes):
                first.setdefault(name, at)
                last[name] = at
    out = []
    for name in marks:
        if name not in first:
            continue
        if name.startswith("Pants start"):
            out.append((name, first[name] - started))
        else:
            out.append((f"{name} (from {first[name] - started:.1f} s)", last[name] - first[name]))
    return out


def _pex_cli(launcher_cache: Path) -> tuple[str, str] | None:
    pex = next(iter(sorted(launcher_cache.glob("*/pex.pex"))), None)
    python = shutil.which("python3.11")
    return None if pex is None or python is None else (python, str(pex))


def _run_pex(argv: list[str], root: Path, cwd: Path) -> float:
    env = {**os.environ, "PEX_ROOT": str(root), "PIP_CONFIG_FILE": "/dev/null"}
    ca = os.environ.get("PANTS_CA_CERTS_PATH") or "/etc/ssl/certs/ca-certificates.crt"
    if os.path.isfile(ca):  # as Pants passes [GLOBAL].ca_certs_path to pex
        argv = [*argv, "--cert", ca]
    return timed(lambda: subprocess.run(argv, check=True, env=env, capture_output=True, cwd=cwd))


def pex_floor(tmp: Path, launcher_cache: Path) -> float | None:
    """The pex CLI that Pants runs, building a PEX of polars alone from an empty PEX_ROOT."""
    cli = _pex_cli(launcher_cache)
    if cli is None:
        return None
    argv = [*cli, "polars==2.1.0", "polars-runtime-32==2.1.0", "-o", str(tmp / "polars.pex")]
    return _run_pex(argv, tmp / "pex-floor-root", tmp)


def pex_lock_floors(tmp: Path, launcher_cache: Path, wheelhouse: Path) -> list[tuple[str, float]]:
    """The pex CLI alone building the core's PEX from the lockfile the plugin ships, from an empty
    PEX_ROOT: with the flags the plugin's PexRequest gives it (what Pants runs, minus Pants),
    plainly (a zipapp, pex's defaults), and with `--no-compress` added (the cost of not storing)."""
    cli = _pex_cli(launcher_cache)
    plugin = next(iter(wheelhouse.glob("trunchbull_pants-*.whl")), None)
    if cli is None or plugin is None:
        return []
    work = tmp / "pex-lock-floor"
    (work / "source_files").mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(plugin) as z:
        (work / "trunchbull.lock").write_bytes(z.read("trunchbull_pants/trunchbull.lock"))
    common = ["--requirement", "trunchbull.lock", "--no-transitive", "--no-pypi", "--index=https://pypi.org/simple/"]
    common += [f"--find-links=file://{wheelhouse}", "--interpreter-constraint", "CPython<3.15,>=3.11"]
    as_plugin = [
        *("--jobs", "1", "--pip-version", "vendored", "--layout", "packed"),
        *("--venv", "--seed", "verbose", "--venv-site-packages-copies", "--sources-directory=source_files"),
        *("--manylinux", "manylinux2014", "--resolver-version", "pip-2020-resolver"),
        *("--entry-point", "trunchbull.compile.steps"),
    ]
    return [
        (
            "floor: the pex CLI, the core's lock with the plugin's flags (empty PEX_ROOT)",
            _run_pex([*cli, *common, *as_plugin, "-o", "core.pex"], work / "root1", work),
        ),
        (
            "floor: the pex CLI, the core's lock, pex's defaults (empty PEX_ROOT)",
            _run_pex([*cli, *common, "-o", "core-zipapp.pex"], work / "root2", work),
        ),
        (
            # What the plugin once ran: faster, but it poisons pex's shared cache (docs/pants.md).
            "the pex CLI, the plugin's flags + --no-compress (empty PEX_ROOT)",
            _run_pex([*cli, *common, *as_plugin, "--no-compress", "-o", "core-stored.pex"], work / "root3", work),
        ),
    ]


def cold_first_build(bench: Bench, tmp: Path) -> None:
    repo = bench.repo
    lock_floors = pex_lock_floors(tmp, repo.cache, repo.wheelhouse)
    version = statistics.median(bench.pants("--no-pantsd", "--version").seconds for _ in range(3))
    bench.row("floor: pants --no-pantsd --version", f"{version:.2f} s")
    empty = [f"--local-store-dir={tmp / 'cold' / 'store'}", f"--named-caches-dir={tmp / 'cold' / 'named'}"]
    listed = bench.pants("--no-pantsd", *empty, "list", "//benchmark::")
    bench.row("floor: pants --no-pantsd list //benchmark:: (empty stores)", f"{listed.seconds:.2f} s")
    empty = [f"--local-store-dir={tmp / 'cold2' / 'store'}", f"--named-caches-dir={tmp / 'cold2' / 'named'}"]
    started = time.time()
    run = repo.pants("--no-pantsd", *empty, "package", TARGET)  # -ldebug: its phases
    bench.row("cold first build (empty stores, no pantsd; target <= 30 s)", f"{run.seconds:.2f} s")
    for name, seconds in phases(run.stderr, started):
        bench.row(f"  phase: {name}", f"{seconds:.2f} s")
    for name, seconds in lock_floors:
        bench.row(name, f"{seconds:.2f} s")
    floor = pex_floor(tmp, repo.cache)
    if floor is not None:
        bench.row("floor: the pex CLI, a PEX of polars alone (empty PEX_ROOT)", f"{floor:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install-buildgrid", action="store_true")
    parser.add_argument("--evals", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold first build")
    parser.add_argument("--no-remote", action="store_true", help="skip the remote cache measurements")
    args = parser.parse_args()
    if args.install_buildgrid:
        print(install_buildgrid())
        return 0

    wheelhouse = build_wheelhouse()
    with tempfile.TemporaryDirectory(prefix="tb-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        repo = LaunchedRepo(wheelhouse, tmp / "monorepo", Path.home() / ".cache" / "trunchbull-pants-launcher")
        bench = Bench(repo)
        try:
            repo.write(fifty_evals(root="benchmark", n=args.evals))
            repo.copy_example("data")
            repo.commit("benchmarks")
            print(f"Pants 2.17.1, a {args.evals}-eval benchmark (3 cases each) in {repo.root}:", file=sys.stderr)

            bench.pants("--version")  # the launcher's environment (installed once per machine)
            repo.stop_pantsd()
            if not args.no_cold:
                cold_first_build(bench, tmp)

            # 1. Warm local store, cold pantsd.
            bench.pants("package", TARGET)
            floors, packages = bench.cold_pair([], None, args.rounds)
            bench.report_pair("warm local store, cold pantsd", floors, packages, 1.5)

            # 2. Empty local store, warm remote cache, cold pantsd.
            if not args.no_remote:
                with buildgrid(tmp / "buildgrid") as address:
                    write = remote_cache_options(address, write=True)
                    bench.pants(
                        "--no-pantsd", f"--local-store-dir={tmp / 'stores' / 'writer'}", *write, "package", TARGET
                    )
                    repo.stop_pantsd()
                    floors, packages = bench.cold_pair(
                        remote_cache_options(address, write=False), tmp / "stores", args.rounds
                    )
                    bench.report_pair("empty local store, warm remote cache, cold pantsd", floors, packages, 2.0)

            # 3. Edits, pantsd warm.
            bench.pants("package", TARGET)
            bench.row(
                "floor: pants --version (warm pantsd)",
                f"{statistics.median(bench.pants('--version').seconds for _ in range(5)):.2f} s",
            )
            node = REPO / ".cache" / "toolchain" / "node_modules" / ".bin" / "node"
            if node.exists():
                one_node = statistics.median(
                    timed(lambda: subprocess.run([str(node), "-e", ""], check=True)) for _ in range(5)
                )
                bench.row("floor: one Node process", f"{one_node:.2f} s")
            bench.row(
                "warm no-op (target <= 1.5 s)",
                f"{statistics.median(bench.pants('package', TARGET).seconds for _ in range(5)):.2f} s",
            )

            def edit(rel: str, old: str, tgt: str = TARGET) -> float:
                path = repo.root / rel
                path.write_text(path.read_text().replace(old, f"{old} {uuid.uuid4().hex[:6]}", 1))
                return bench.pants("package", tgt).seconds

            bench.row(
                "one-eval edit (target <= 3 s)",
                f"{statistics.median(edit('benchmark/evals/e20.ts', 'Eval') for _ in range(3)):.2f} s",
            )
            bench.row(
                "shared-helper edit (5 evals)",
                f"{statistics.median(edit('benchmark/lib/shared.ts', 'Answer') for _ in range(3)):.2f} s",
            )
            data = "//examples/data:release"
            bench.pants("package", data)
            transformer = statistics.median(
                edit("examples/data/evals/trivia/transform.ts", "// A case transformer", data) for _ in range(3)
            )
            bench.row("transformer edit (examples/data)", f"{transformer:.2f} s")
        finally:
            repo.cleanup()

    width = max(len(name) for name, _ in bench.rows)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"\nPants 2.17.1, {args.evals}-eval benchmark (3 cases each), load average now {load}:")
    for name, value in bench.rows:
        print(f"  {name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
