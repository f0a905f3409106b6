"""What the secret boundary and the fresh environment per sample cost, in one
sitting, against the same code before them (each variant a `git archive` of
its commit's src/, run with the same toolchain and caches):

1. **tools**: N cases (default 25,000), each calling one tool once (a
   module-level counter), against bench/chat_server.mjs (its own process),
   which answers a request that offers tools with a call of the first one and
   then echoes, after DELAY s, at -j 64. Variants: `split` (the model caller
   and the tool executor, one module instance per executor: --shared, default
   the commit before per-sample instances), `fresh` (this checkout: a fresh
   V8 context and module instance per sample), `fresh-before` (--fresh-before,
   an earlier commit with fresh instances, e.g. the branch's base), and
   `tools-in-worker` (--before). Each round runs every variant once, in turn,
   so that a change in the machine's load touches all of them. Targets:
   `fresh` within 5% of `split`'s throughput, at most 50 MB more peak RSS of
   the process tree.
2. **echo**: bench/run.py's echo workload (`--model echo -j 16`, no tools)
   before the process split (--before, default the branch's base) and now.
3. **per instance**: the cost of one fresh instance of the workload's tool
   module, measured in a Node process (shared/fresh_module.mjs, M instances).

Each figure is the median of --runs runs (wall time, CPU of the process tree,
peak RSS of the tree), the load average printed beside it, and every run's
figures below it when there are several.

  .venv/bin/python bench/isolation.py [--cases 25000] [--runs 1] [--shared REV] [--before REV]
      [--fresh-before REV] [--skip-tools] [--skip-echo]
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
from run import BenchServer, median, write_benchmark  # noqa: E402
from trunchbull.node.toolchain import toolchain  # noqa: E402

SHARED_REV = "172422c"  # the process split, one tool-module instance per executor
BEFORE_REV = "89601d5"  # tools in the model caller's process
FRESH_BEFORE_REV = "5ee3873"  # fresh instances, before their heap was bounded and the executor's pipe capped
TOOLS_CONCURRENCY = 64
ECHO_CONCURRENCY = 16
INSTANCES = 2000

TOOL_MODULE = """import { tool } from "ai"
import { z } from "zod"

let calls = 0

export const tools = {
  count: tool({
    description: "Counts its calls.",
    inputSchema: z.object({}),
    execute: async () => ({ n: ++calls }),
  }),
}
"""

INSTANCE_BENCH = """import { ModuleSource } from "%s";
const source = new ModuleSource(process.argv[2]);
(await source.instantiate()).close();
const n = Number(process.argv[3]);
const started = performance.now();
for (let i = 0; i < n; i++) (await source.instantiate()).close();
const ms = (performance.now() - started) / n;
const rss = process.memoryUsage().rss;
console.log(JSON.stringify({ ms, rssMiB: rss / 2 ** 20 }));
"""


def export(rev: str, into: Path) -> Path:
    """src/ of `rev`, for PYTHONPATH."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "src", "third_party/npm"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def env_for(src: Path) -> dict[str, str]:
    return checkout_env.cli_env(PYTHONPATH=str(src), TRUNCHBULL_TOOLCHAIN=str(toolchain().root))


def write_tool_benchmark(root: Path, cases: list[dict]) -> None:
    write_benchmark(root, cases)
    (root / "evals" / "echo.ts").write_text('export default { id: "echo", tools: ["count"], cases: "./cases.jsonl" }\n')
    (root / "tools").mkdir()
    (root / "tools" / "count.ts").write_text(TOOL_MODULE)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(REPO / "examples" / "support" / name, root / name)


def build(root: Path, out: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", "build", str(root), "-o", str(out)],
        env=env_for(REPO / "src"),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"build failed:\n{proc.stderr}")


def measure_once(label: str, src: Path, release: Path, work: Path, n: int, extra: list[str], jobs: int):
    out = work / f"run-{label}"
    load = os.getloadavg()[0]
    argv = [sys.executable, "-m", "trunchbull", "run", str(release), "-o", str(out), "--no-cache", "-j", str(jobs)]
    argv += extra
    with open(work / "stderr.log", "wb") as err:
        m = peers.run_measured(argv, env=env_for(src), stdout=subprocess.DEVNULL, stderr=err)
    if m.returncode != 0:
        raise SystemExit(f"{label}: exit {m.returncode}:\n{(work / 'stderr.log').read_text()[-3000:]}")
    passed = json.loads((out / "summary.json").read_text())["overall"]["passed"]
    result = peers.measured_result(label, "", "", n, passed, m, jobs, argv, {}, load)
    result.load_after = os.getloadavg()[0]
    shutil.rmtree(out)
    return result


def measure(
    label: str, src: Path, release: Path, work: Path, n: int, extra: list[str], jobs: int, runs: int
) -> peers.PeerResult:
    return median([measure_once(label, src, release, work, n, extra, jobs) for _ in range(runs)])


def measure_rounds(
    variants: dict[str, Path], release: Path, work: Path, n: int, extra: list[str], jobs: int, runs: int
):
    """Every variant once per round, in turn: label → its runs."""
    results: dict[str, list[peers.PeerResult]] = {label: [] for label in variants}
    for index in range(runs):
        order = list(variants) if index % 2 == 0 else list(reversed(variants))
        for label in order:
            results[label].append(measure_once(label, variants[label], release, work, n, extra, jobs))
            print("  " + line(results[label][-1], None), flush=True)
    return results


def per_instance(release: Path, work: Path) -> dict:
    """One fresh instance of the release's tool module, timed in a Node process beside the
    release's installed dependencies (the layout a run gives its executors)."""
    manifest = json.loads((release / "release.json").read_text())
    bundle = Path(manifest["tools"][0]["bundle"]).name
    proc = subprocess.run(
        [sys.executable, "-c", PREPARE, str(release), str(work / "instance-run")],
        env=env_for(REPO / "src"),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"preparing the release's runtime layout failed:\n{proc.stderr}")
    script = work / "instances.mjs"
    script.write_text(INSTANCE_BENCH % (REPO / "src/trunchbull/js/shared/fresh_module.mjs").as_uri())
    flags = ["--experimental-vm-modules", "--experimental-import-meta-resolve", "--disable-warning=ExperimentalWarning"]
    target = Path(proc.stdout.strip()) / bundle
    out = subprocess.run(
        [str(toolchain().node), *flags, str(script), str(target), str(INSTANCES)], capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"instance bench failed:\n{out.stderr}")
    return json.loads(out.stdout)


PREPARE = """import sys
from pathlib import Path
from trunchbull.release.loaded import load_release, runtime_layout
layout = runtime_layout(load_release(Path(sys.argv[1])), Path(sys.argv[2]))
print(layout.modules_dir)
"""


def line(r: peers.PeerResult, reference: peers.PeerResult | None) -> str:
    versus = ""
    if reference is not None and r is not reference:
        versus = (
            f"  {r.samples_per_s / reference.samples_per_s * 100 - 100:+.1f}% throughput, "
            f"{(r.peak_rss_bytes - reference.peak_rss_bytes) / 2**20:+.0f} MiB peak RSS vs {reference.peer}"
        )
    return (
        f"{r.peer:<15} {r.wall_s:8.2f} s {r.samples_per_s:9,.0f}/s {r.cpu_s:8.2f} s CPU "
        f"{r.cpu_s / r.cases * 1000:6.3f} ms/sample {r.peak_rss_bytes / 2**20:6.0f} MiB  "
        f"load {r.load_before:.1f}-{r.load_after:.1f}{versus}"
    )


def ranges(runs: list[peers.PeerResult]) -> str:
    def span(values, fmt):
        return f"{fmt(min(values))}-{fmt(max(values))}"

    return (
        f"{'':<15} n={len(runs)}: CPU {span([r.cpu_s / r.cases * 1000 for r in runs], lambda v: f'{v:.3f}')} ms/sample, "
        f"{span([r.samples_per_s for r in runs], lambda v: f'{v:,.0f}')}/s, "
        f"peak RSS {span([r.peak_rss_bytes / 2**20 for r in runs], lambda v: f'{v:.0f}')} MiB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=25_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--shared", default=SHARED_REV, help="the process split with one module instance per executor")
    parser.add_argument("--before", default=BEFORE_REV, help="before the process split")
    parser.add_argument("--fresh-before", default=FRESH_BEFORE_REV, help="an earlier commit with fresh instances")
    parser.add_argument("--skip-echo", action="store_true")
    parser.add_argument("--skip-tools", action="store_true")
    args = parser.parse_args()

    cases = peers.make_cases(args.cases)
    work = Path(tempfile.mkdtemp(prefix="trunchbull-bench-isolation-"))
    try:
        shared_src = export(args.shared, work / "shared")
        before_src = export(args.before, work / "before")
        fresh_before_src = export(args.fresh_before, work / "fresh-before")
        write_tool_benchmark(work / "tools-bench", cases)
        tools_release = work / "tools-release"
        build(work / "tools-bench", tools_release)
        if not args.skip_tools:
            with BenchServer() as url:
                model = ["--model", "openai-compatible:bench", "--base-url", url]
                jobs, n = TOOLS_CONCURRENCY, args.cases
                measure("warm-up", REPO / "src", tools_release, work, n, model, jobs, 1)
                variants = {
                    "split": shared_src,
                    "fresh": REPO / "src",
                    "fresh-before": fresh_before_src,
                    "tools-in-worker": before_src,
                }
                results = measure_rounds(variants, tools_release, work, n, model, jobs, args.runs)
            print(f"\ntools: {n:,} samples, one tool call each, -j {jobs}; median of {args.runs}")
            split = median(results["split"])
            for label, runs in results.items():
                print(line(median(runs), split))
                if len(runs) > 1:
                    print(ranges(runs))
        if not args.skip_echo:
            write_benchmark(work / "echo-bench", cases)
            echo_release = work / "echo-release"
            build(work / "echo-bench", echo_release)
            echo = ["--model", "echo"]
            measure("warm-up", REPO / "src", echo_release, work, args.cases, echo, ECHO_CONCURRENCY, 1)
            before = measure(
                "echo-before", before_src, echo_release, work, args.cases, echo, ECHO_CONCURRENCY, args.runs
            )
            now = measure("echo-now", REPO / "src", echo_release, work, args.cases, echo, ECHO_CONCURRENCY, args.runs)
            print(f"\necho: {args.cases:,} samples, -j {ECHO_CONCURRENCY}; median of {args.runs}")
            for r in (before, now):
                print(line(r, before))
        cost = per_instance(tools_release, work)
        print(
            f"\none fresh instance of the tool module: {cost['ms']:.3f} ms (mean of {INSTANCES:,}), "
            f"{cost['rssMiB']:.0f} MiB RSS after them"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
