"""Throughput of `trunchbull run`, next to promptfoo and Inspect AI doing the
same work in the same run (bench/peers.py installs them into a cache outside
the repository).

Two workloads on the same N cases (default 25,000; prompts of 100-300
characters, `expected` a substring of the prompt, so every sample passes):

1. **echo**: a model that answers with the prompt, one substring check per
   sample, run and grade end to end, each tool as one fresh process:
   `trunchbull run REL --model echo` (a built release; the build is not
   timed), `promptfoo eval` with its `echo` provider and a `contains`
   assertion, `inspect eval` with `mockllm/model` echoing and `includes()`.
   Targets: >= 10x promptfoo's throughput, >= 100x Inspect's, peak RSS of
   the whole process tree <= 400 MB.
2. **server**: the same cases sent to a local OpenAI-compatible server
   (bench/chat_server.mjs, its own process) that replies after 50 ms, at
   concurrency 32: throughput as a fraction of the bound 32 / 0.05 s =
   640 samples/s (target >= 90%), promptfoo (and Inspect) at the same
   concurrency. Floor: the same requests over bare node:http at the same
   concurrency (bench/http_floor.mjs), which shows what the machine allows
   when the server shares its cores.

Each figure is the median of --runs runs (wall time from start to exit, CPU
time of the process tree, peak RSS of the tree sampled every 20 ms); the
load average is printed beside it, since other jobs often share the machine.

  .venv/bin/python bench/run.py [--cases 25000] [--runs 3] [--skip-peers] [--skip-server] [--skip-inspect]
      [--inspect-cases N] [--server-peer-cases N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "src")]

import checkout_env  # noqa: E402
import peers  # noqa: E402
from trunchbull.node.toolchain import toolchain  # noqa: E402

DELAY_S = 0.05
SERVER_CONCURRENCY = 32
ECHO_CONCURRENCY = 16  # trunchbull's default -j; the peers get the same


def write_benchmark(root: Path, cases: list[dict]) -> None:
    (root / "evals").mkdir(parents=True)
    with open(root / "evals" / "cases.jsonl", "w") as out:
        for case in cases:
            out.write(
                json.dumps(
                    {
                        "id": case["id"],
                        "prompt": case["prompt"],
                        "evaluate": {"kind": "contains", "expected": case["expected"]},
                    }
                )
                + "\n"
            )
    (root / "evals" / "echo.ts").write_text('export default { id: "echo", cases: "./cases.jsonl" }\n')


def trunchbull(*args: str) -> list[str]:
    return [sys.executable, "-m", "trunchbull", *args]


def cli_env() -> dict[str, str]:
    env = checkout_env.cli_env()
    env.pop("CI", None)
    return env


def build(root: Path, out: Path) -> None:
    proc = subprocess.run(trunchbull("build", str(root), "-o", str(out)), env=cli_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"build failed:\n{proc.stderr}")


def measure_trunchbull(
    workload: str, release: Path, work: Path, n: int, extra: list[str], concurrency: int, runs: int
) -> peers.PeerResult:
    results = []
    for index in range(runs):
        out = work / f"run-{workload}-{index}"
        load = os.getloadavg()[0]
        argv = trunchbull("run", str(release), "-o", str(out), "--no-cache", "-j", str(concurrency), *extra)
        with open(work / "stderr.log", "wb") as err:
            m = peers.run_measured(argv, env=cli_env(), stdout=subprocess.DEVNULL, stderr=err)
        if m.returncode != 0:
            raise SystemExit(f"trunchbull run exited {m.returncode}:\n{(work / 'stderr.log').read_text()[-3000:]}")
        passed = json.loads((out / "summary.json").read_text())["overall"]["passed"]
        results.append(peers.measured_result("trunchbull", workload, "main", n, passed, m, concurrency, argv, {}, load))
        shutil.rmtree(out)
    return median(results)


def median(results: list[peers.PeerResult]) -> peers.PeerResult:
    ordered = sorted(results, key=lambda r: r.wall_s)
    return ordered[(len(ordered) - 1) // 2]  # the faster middle run of an even count


def repeat_peer(fn, runs: int) -> peers.PeerResult:
    return median([fn() for _ in range(runs)])


def measure_http_floor(cases: list[dict], url: str, work: Path, concurrency: int, runs: int) -> peers.PeerResult:
    """bench/http_floor.mjs: the same requests over bare node:http (the pinned toolchain's Node)."""
    prompts = work / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(case["prompt"]) + "\n" for case in cases))
    argv = [str(toolchain().node), str(REPO / "bench" / "http_floor.mjs"), url, "bench", str(concurrency)]
    results = []
    for _ in range(runs):
        load = os.getloadavg()[0]
        with open(prompts, "rb") as stdin, open(work / "floor.out", "wb") as out:
            m = peers.run_measured(argv, stdout=out, stderr=subprocess.DEVNULL, stdin=stdin)
        replies = int((work / "floor.out").read_text().strip() or 0)
        if m.returncode != 0:
            raise SystemExit(f"http floor: exit {m.returncode}")
        results.append(
            peers.measured_result("http floor", "server", "node", len(cases), replies, m, concurrency, argv, {}, load)
        )
    return median(results)


class BenchServer:
    """bench/chat_server.mjs in its own process (the pinned toolchain's Node), replying after DELAY_S."""

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(
            [str(toolchain().node), str(REPO / "bench" / "chat_server.mjs"), str(DELAY_S)],
            stdout=subprocess.PIPE,
            text=True,
        )
        return self.proc.stdout.readline().strip()

    def __exit__(self, *exc) -> None:
        self.proc.kill()
        self.proc.wait()


def row(r: peers.PeerResult, reference: peers.PeerResult | None, bound: float | None) -> str:
    ratio = f"{reference.samples_per_s / r.samples_per_s:8.1f}x" if reference and r is not reference else " " * 9
    of_bound = f"{r.samples_per_s / bound * 100:6.1f}%" if bound else ""
    return (
        f"{r.peer:<11} {r.workload:<7} {r.wall_s:8.2f} s {r.samples_per_s:10,.0f}/s {r.cpu_s:8.2f} s "
        f"{r.peak_rss_mib:8.0f} MiB {ratio} {of_bound}  load {r.load_before:.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=25_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--skip-inspect", action="store_true", help="Inspect AI takes minutes at 25,000 cases")
    parser.add_argument(
        "--inspect-cases", type=int, help="Inspect AI on the first N cases only (its rate does not depend on N)"
    )
    parser.add_argument(
        "--server-peer-cases", type=int, help="the peers' server runs on the first N cases only (bound by the delay)"
    )
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()

    cases = peers.make_cases(args.cases)
    inspect_cases = cases[: args.inspect_cases] if args.inspect_cases else cases
    server_peer_cases = cases[: args.server_peer_cases] if args.server_peer_cases else cases
    if not args.skip_peers:
        installs = peers.install_peers(("promptfoo",) if args.skip_inspect else ("promptfoo", "inspect"))
        for name, seconds in installs.items():
            if seconds is not None:
                print(f"installed {name} in {seconds:.1f} s")
    work = Path(tempfile.mkdtemp(prefix="trunchbull-bench-run-"))
    try:
        write_benchmark(work / "bench", cases)
        release = work / "release"
        build(work / "bench", release)
        # a warm-up run: the dependency and toolchain caches, Python's bytecode
        measure_trunchbull("echo", release, work, args.cases, ["--model", "echo"], ECHO_CONCURRENCY, 1)

        results: list[peers.PeerResult] = []
        ours = measure_trunchbull("echo", release, work, args.cases, ["--model", "echo"], ECHO_CONCURRENCY, args.runs)
        echo = [ours]
        if not args.skip_peers:
            echo.append(repeat_peer(lambda: peers.run_promptfoo_echo(cases, concurrency=ECHO_CONCURRENCY), args.runs))
            if not args.skip_inspect:
                echo.append(repeat_peer(lambda: peers.run_inspect_echo(inspect_cases, concurrency=ECHO_CONCURRENCY), 1))
        results += echo
        server: list[peers.PeerResult] = []
        if not args.skip_server:
            with BenchServer() as url:
                model = ["--model", "openai-compatible:bench", "--base-url", url]
                ours_server = measure_trunchbull(
                    "server", release, work, args.cases, model, SERVER_CONCURRENCY, args.runs
                )
                server.append(ours_server)
                server.append(measure_http_floor(cases, url, work, SERVER_CONCURRENCY, args.runs))
                if not args.skip_peers:
                    server.append(
                        repeat_peer(
                            lambda: peers.run_promptfoo_server(
                                server_peer_cases, url, "bench", concurrency=SERVER_CONCURRENCY
                            ),
                            1,
                        )
                    )
                    if not args.skip_inspect:
                        server.append(
                            repeat_peer(
                                lambda: peers.run_inspect_server(
                                    server_peer_cases[: len(inspect_cases)],
                                    url,
                                    "bench",
                                    concurrency=SERVER_CONCURRENCY,
                                ),
                                1,
                            )
                        )
            results += server

        print(
            f"\n{args.cases:,} cases (Inspect: {len(inspect_cases):,}; the peers' server runs: "
            f"{len(server_peer_cases):,}); median of {args.runs} runs (peers' server runs and Inspect: one run)"
        )
        print(
            f"{'tool':<11} {'load':<7} {'wall':>10} {'throughput':>12} {'CPU':>10} {'peak RSS':>12} "
            f"{'ours ÷ it':>9} {'of bound':>7}"
        )
        for r in echo:
            print(row(r, ours, None))
        bound = SERVER_CONCURRENCY / DELAY_S
        for r in server:
            print(row(r, server[0], bound))
        floor = next((r for r in server if r.peer == "http floor"), None)
        if floor is not None:
            print(
                f"trunchbull server: {server[0].samples_per_s / floor.samples_per_s * 100:.1f}% of the http floor "
                f"(bare node:http requests at -j {SERVER_CONCURRENCY}: "
                f"{floor.samples_per_s / bound * 100:.1f}% of the bound on this machine)"
            )
        if args.json:
            args.json.write_text(json.dumps([r.as_dict() for r in results], indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
