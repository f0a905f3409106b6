"""`trunchbull run --batch` end to end, next to the batch server's own
processing time measured in the same run.

N cases (default 25,000; prompts of 100-300 characters, `expected` a
substring of the prompt, so every sample passes) are run with
`--model openai:bench --batch` against the local batch server
(tests/support/batch_server.py, in its own process), which speaks OpenAI's
Files and Batch APIs as the pinned AI SDK drives them and processes each
batch at --rate requests per second (its processing time: N / rate from the
batch's creation). The run goes end to end as a fresh process: start-up,
submitting (the AI SDK prepares every request, uploads the input file,
creates the batch), polling (--batch-poll), reading the results as they
stream, every reply through generateText in the workers, recording,
grading.

Figures per run: the run's wall time, the server's processing time, the
overhead (wall minus processing) and its share of the processing time
(target <= 10%), split into before the batch existed (start-up and
submitting) and after it ended (noticing that at the next poll, reading,
recording, grading); CPU time and peak RSS of the run's process tree
(target <= 400 MB: results are streamed, never held whole). Median and
range of --runs runs, the load average beside them.

  .venv/bin/python bench/batch.py [--cases 25000] [--rate 100] [--poll 2] [--runs 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "src")]

import checkout_env  # noqa: E402
import peers  # noqa: E402
from run import build, write_benchmark  # noqa: E402


class Server:
    """The batch server in its own process (its CPU is not the run's)."""

    def __init__(self, rate: float):
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.batch_server", "--rate", str(rate)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            raise SystemExit("the batch server did not start")

    def batches(self) -> list[dict]:
        with urllib.request.urlopen(f"{self.url}/_bench/batches") as reply:
            return json.load(reply)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def one_run(release: Path, work: Path, server: Server, n: int, poll: float, index: int) -> dict:
    known = {b["id"] for b in server.batches()}
    out = work / f"run-{index}"
    argv = [
        sys.executable,
        "-m",
        "trunchbull",
        "run",
        str(release),
        "--model",
        "openai:bench",
        "--base-url",
        server.url,
        "--batch",
        "--batch-poll",
        str(poll),
        "--no-cache",
        "--json",
        "-o",
        str(out),
    ]
    env = checkout_env.cli_env(OPENAI_API_KEY="sk-bench")
    env.pop("CI", None)
    load = os.getloadavg()[0]
    began = time.time()
    with open(work / f"stdout-{index}.json", "w") as stdout, open(work / f"stderr-{index}.txt", "w") as stderr:
        measured = peers.run_measured(argv, env=env, stdout=stdout, stderr=stderr)
    ended = began + measured.wall_s
    if measured.returncode != 0:
        raise SystemExit(f"run {index} exited {measured.returncode}; see {work}/stderr-{index}.txt")
    summary = json.loads((work / f"stdout-{index}.json").read_text())
    if summary["overall"]["samples"] != n or summary["overall"]["passed"] != n:
        raise SystemExit(f"run {index}: {summary['overall']['passed']} of {n} passed")
    made = [b for b in server.batches() if b["id"] not in known]
    first = min(b["created"] for b in made)
    last_end = max(b["created"] + b["processingS"] for b in made)
    processing = last_end - first
    overhead = measured.wall_s - processing
    return {
        "samples": n,
        "batches": len(made),
        "wallS": measured.wall_s,
        "processingS": processing,
        "overheadS": overhead,
        "overheadShare": overhead / processing,
        "beforeS": first - began,  # start-up and submitting, until the batch existed
        "afterS": ended - last_end,  # from the batch's end: the next poll, reading, recording, grading
        "cpuS": measured.cpu_s,
        "peakRssMiB": measured.peak_rss_bytes / (1 << 20),
        "downloads": sum(b["downloads"] for b in made),
        "loadBefore": load,
        "loadAfter": os.getloadavg()[0],
    }


def describe(values: list[float], unit: str, digits: int = 1) -> str:
    median = statistics.median(values)
    return f"{median:,.{digits}f}{unit} [{min(values):,.{digits}f}–{max(values):,.{digits}f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=25_000)
    parser.add_argument("--rate", type=float, default=100.0, help="requests the server processes per second")
    parser.add_argument("--poll", type=float, default=2.0, help="--batch-poll of the runs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="trunchbull-bench-batch-"))
    write_benchmark(work / "bench", peers.make_cases(args.cases))
    release = work / "release"
    build(work / "bench", release)
    server = Server(args.rate)
    try:
        # a warm-up: the AI SDK bundle, Python's bytecode (at a rate that does not wait)
        warm = Server(1e9)
        try:
            one_run(release, work, warm, args.cases, 0.2, 0)
        finally:
            warm.stop()
        runs = [one_run(release, work, server, args.cases, args.poll, i + 1) for i in range(args.runs)]
    finally:
        server.stop()
    shutil.rmtree(work)  # (kept when a run failed: its output says why)
    print(f"{args.cases:,} samples in batch mode, server at {args.rate:g} requests/s, --batch-poll {args.poll:g}")
    print(f"  runs                {len(runs)} (load average {runs[0]['loadBefore']:.1f}–{runs[-1]['loadAfter']:.1f})")
    print(f"  wall                {describe([r['wallS'] for r in runs], ' s')}")
    print(f"  server processing   {describe([r['processingS'] for r in runs], ' s')}")
    print(f"  overhead            {describe([r['overheadS'] for r in runs], ' s')}")
    print(f"    share             {describe([100 * r['overheadShare'] for r in runs], '%')} (target <= 10%)")
    print(f"    before the batch  {describe([r['beforeS'] for r in runs], ' s')} (start-up, submitting)")
    print(f"    after it ended    {describe([r['afterS'] for r in runs], ' s')} (poll, read, record, grade)")
    print(f"  CPU (process tree)  {describe([r['cpuS'] for r in runs], ' s')}")
    print(f"  peak RSS (tree)     {describe([r['peakRssMiB'] for r in runs], ' MiB', 0)} (target <= 400 MiB)")
    if args.json:
        args.json.write_text(
            json.dumps({"cases": args.cases, "rate": args.rate, "poll": args.poll, "runs": runs}, indent=2)
        )


if __name__ == "__main__":
    main()
