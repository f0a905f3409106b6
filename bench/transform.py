"""Transformer build cost: a transformer over one 50 MiB source producing
25,000 cases, built with `trunchbull build`, next to one plain run of the
same transform in Node (read the source, hash it, transform, serialize).

The build runs the transformer twice (concurrently, in two sandboxes), then
parses, compares and validates the output and writes the release, so the
target is build <= 2.5 x plain. Two plain runs started at once show what the
two runs alone cost on this machine. CPU time (user + system of the process
tree) is reported next to wall time: it varies less on a shared machine.
Peak memory is the largest total RSS of the process tree (Python plus both
Node runs), sampled every 20 ms in a separate round so that sampling does not
slow the timed runs.

Usage: .venv/bin/python bench/transform.py [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from trunchbull.node.toolchain import toolchain  # noqa: E402

CASES = 25_000
SOURCE_BYTES = 50 * 1024 * 1024 - 4096  # just under the per-source limit

TRANSFORM = """// One JSON record per line -> one case.
export default {
  name: "reading",
  transform({ records }) {
    const cases = []
    for (const line of records.content.split("\\n")) {
      if (!line) continue
      const r = JSON.parse(line)
      cases.push({
        id: `reading.${r.n}`,
        prompt: `${r.context}\\n\\nQuestion: ${r.question}`,
        evaluate: { kind: "exact", expected: r.answer },
        data: { n: r.n, source: records.sha256 },
      })
    }
    return cases
  },
}
"""

PLAIN = """import { readFileSync } from "node:fs"
import { createHash } from "node:crypto"
const [module, file] = process.argv.slice(2)
const bytes = readFileSync(file)
const records = { content: bytes.toString("utf8"), path: "evals/reading/records.jsonl",
                  sha256: createHash("sha256").update(bytes).digest("hex") }
const t = (await import(module)).default
const out = JSON.stringify(await t.transform({ records }))
process.stdout.write(String(out.length) + "\\n")
"""


def generate(root: Path) -> None:
    (root / "evals" / "reading").mkdir(parents=True)
    (root / "benchmark.config.ts").write_text('export default { protocolVersion: 1, title: "Transform bench" }\n')
    (root / "evals" / "reading.ts").write_text(
        'export default { id: "reading", cases: { transformer: "./reading/transform.mjs", '
        'sources: { records: "./reading/records.jsonl" } } }\n'
    )
    (root / "evals" / "reading" / "transform.mjs").write_text(TRANSFORM)
    per_record = SOURCE_BYTES // CASES
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()
    lines = []
    for n in range(CASES):
        head = {"n": n, "question": f"What is item {n}?", "answer": f"answer {n}", "context": ""}
        pad = per_record - len(orjson.dumps(head)) - 1
        text = " ".join(words[(n + i) % len(words)] for i in range(pad // 6 + 2))[:pad]
        head["context"] = text
        lines.append(orjson.dumps(head))
    data = b"\n".join(lines) + b"\n"
    assert len(data) <= 50 * 1024 * 1024, len(data)
    (root / "evals" / "reading" / "records.jsonl").write_bytes(data)


def tree_rss_kib(pid: int) -> int:
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{p}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


@dataclass
class Measured:
    wall: float
    cpu: float  # user + system time of the whole process tree
    peak_kib: int  # 0 unless sampled


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmds: list[list[str]], env: dict, sample: bool = False) -> Measured:
    """Run the commands at once; wall and CPU time, and with `sample` the peak
    RSS of their process trees. Walking /proc every 20 ms costs CPU the
    measured processes would otherwise have, so timings come from unsampled
    runs and memory from separate ones."""
    peak = 0
    cpu_before = _children_cpu()
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for cmd in cmds]
    done = threading.Event()

    def sampling() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, sum(tree_rss_kib(p.pid) for p in procs))
            time.sleep(0.02)

    sampler = threading.Thread(target=sampling)
    if sample:
        sampler.start()
    outputs = [p.communicate() for p in procs]
    elapsed = time.perf_counter() - start
    done.set()
    if sample:
        sampler.join()
    for proc, (_, err) in zip(procs, outputs):
        assert proc.returncode == 0, err.decode()
    return Measured(elapsed, _children_cpu() - cpu_before, peak)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate the benchmark here and keep it")
    args = parser.parse_args()
    tc = toolchain()
    tmp = Path(tempfile.mkdtemp(prefix="trunchbull-bench-transform-"))
    root = args.keep or tmp / "bench"
    if not (root / "evals").exists():
        generate(root)
    source = root / "evals" / "reading" / "records.jsonl"
    (tmp / "plain.mjs").write_text(PLAIN)
    # Run the CLI as ./trunchbull does: with its bytecode cached.
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    plain_cmd = [str(tc.node), str(tmp / "plain.mjs"), str(root / "evals/reading/transform.mjs"), str(source)]
    runs: dict[str, list[Measured]] = {"plain": [], "two plain": [], "build": []}
    peaks: dict[str, int] = {}
    try:
        timed(
            [[sys.executable, "-m", "trunchbull", "build", str(root), "-o", str(tmp / "warm-up")]], env
        )  # caches bytecode
        for i in range(args.runs + 1):  # the last round measures memory
            sample = i == args.runs
            out = tmp / f"release-{i}"
            measured = {
                "plain": timed([plain_cmd], env, sample),
                "two plain": timed([plain_cmd, plain_cmd], env, sample),
                "build": timed([[sys.executable, "-m", "trunchbull", "build", str(root), "-o", str(out)]], env, sample),
            }
            for name, m in measured.items():
                if sample:
                    peaks[name] = m.peak_kib
                else:
                    runs[name].append(m)
            cases = sum(1 for _ in (out / "cases.jsonl").open("rb"))
            assert cases == CASES, cases
        wall = {name: statistics.median(m.wall for m in ms) for name, ms in runs.items()}
        cpu = {name: statistics.median(m.cpu for m in ms) for name, ms in runs.items()}
        print(
            f"source: {source.stat().st_size / 2**20:.1f} MiB, {CASES:,} cases, "
            f"cases.jsonl {(tmp / 'release-0' / 'cases.jsonl').stat().st_size / 2**20:.1f} MiB; "
            f"median of {args.runs}, {os.cpu_count()} cores"
        )
        for name, label in (
            ("plain", "plain node run"),
            ("two plain", "two plain runs at once"),
            ("build", "trunchbull build"),
        ):
            print(
                f"{label + ':':24s}{wall[name]:6.2f} s wall {cpu[name]:6.2f} s CPU   "
                f"peak RSS {peaks[name] / 1024:5.0f} MiB"
            )
        print(
            f"build / plain:          {wall['build'] / wall['plain']:6.2f} x wall "
            f"{cpu['build'] / cpu['plain']:6.2f} x CPU   (target <= 2.5 x)"
        )
        print(
            f"build / two plain:      {wall['build'] / wall['two plain']:6.2f} x wall "
            f"{cpu['build'] / cpu['two plain']:6.2f} x CPU   (the two runs alone, without the compiler)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
