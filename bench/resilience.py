"""A run against a server where a fraction of the replies misbehave
(bench/chat_server.mjs --misbehave 0.1 --seed 1: invalid JSON, an HTML 502,
empty choices, 401, 503, a connection reset, a body cut off, a lone
surrogate, a gzip bomb, a 20 MiB body), next to a clean run in the same
sitting, at -j 64 with --retries 0 (so that every misbehaving reply ends its
sample at once, without backoff):

* every sample is recorded exactly once, as a valid record;
* each sample's outcome is set by its own reply only: every good sample
  passes without error, every misbehaving one ends as its misbehaviour
  says (the kind is recomputed here from the server's hash of the prompt),
  and two runs give identical outcomes;
* the good samples' throughput is within 10% of theirs in a clean run: good
  samples / wall time of the misbehaving run against the same good samples
  / wall time of the clean run (which also ran the others, well-behaved),
  i.e. the misbehaving run takes at most ~11% longer. (Good samples / wall
  against all the clean run's samples / wall is printed too: it cannot pass
  90% when the misbehaving replies hold their slots as long as good ones,
  50 ms here.)

  .venv/bin/python bench/resilience.py [--cases 25000] [-j 64] [--misbehave 0.1] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "src")]

import peers  # noqa: E402
from run import DELAY_S, build, cli_env, trunchbull, write_benchmark  # noqa: E402
from trunchbull.node.toolchain import toolchain  # noqa: E402
from trunchbull.rundir.schema import record_problem  # noqa: E402

# bench/chat_server.mjs's MISBEHAVIOURS, in its order, and the error kind each one's sample ends with
KINDS = {
    "invalid-json": "provider",
    "html": "provider",
    "empty-choices": "provider",
    "http-401": "provider",
    "http-503": "provider",
    "reset": "connection",
    "truncated": "connection",
    "surrogate": None,  # recorded, its text repaired
    "gzip-bomb": "response-too-large",
    "huge-body": "response-too-large",
}


def fnv1a(text: str) -> int:
    """chat_server.mjs's hash, over UTF-16 code units as JavaScript's charCodeAt sees them."""
    h = 0x811C9DC5
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h ^= units[i] | units[i + 1] << 8
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def misbehaviour(prompt: str, fraction: float, seed: int) -> str | None:
    h = fnv1a(f"{seed}:{prompt}")
    return list(KINDS)[(h >> 16) % len(KINDS)] if (h % 10_000) / 10_000 < fraction else None


class Server:
    def __init__(self, *extra: str):
        self.argv = [str(toolchain().node), str(REPO / "bench" / "chat_server.mjs"), str(DELAY_S), *extra]

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def __exit__(self, *exc) -> None:
        self.proc.kill()
        self.proc.wait()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(release: Path, url: str, out: Path, concurrency: int) -> tuple[float, dict, float, float]:
    """(wall seconds, outcome per case: (outcome, error kind, repaired), load
    before, CPU seconds of the run's process tree)."""
    load = os.getloadavg()[0]
    cpu = children_cpu()
    argv = trunchbull(
        "run", str(release), "-o", str(out), "--no-cache", "-j", str(concurrency), "--retries", "0",
        "--model", "openai-compatible:bench", "--base-url", url,
    )  # fmt: skip
    started = time.monotonic()
    proc = subprocess.run(argv, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    cpu = children_cpu() - cpu
    if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
        raise SystemExit(f"trunchbull run exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    lines = (out / "responses.jsonl").read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]
    bad = [r for r in records if record_problem(r) is not None]
    if bad:
        raise SystemExit(f"{len(bad)} invalid record(s), first: {record_problem(bad[0])}")
    keys = [(r["caseId"], r["repeat"]) for r in records]
    if len(set(keys)) != len(keys):
        raise SystemExit(f"{len(keys) - len(set(keys))} sample(s) recorded twice")
    results = {r["caseId"]: r["outcome"] for r in map(orjson.loads, (out / "results.jsonl").read_bytes().splitlines())}
    outcomes = {
        r["caseId"]: (results[r["caseId"]], (r["error"] or {}).get("kind"), tuple(r.get("repaired") or ()))
        for r in records
    }
    return wall, outcomes, load, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=25_000)
    parser.add_argument("-j", "--concurrency", type=int, default=64)
    parser.add_argument("--misbehave", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    cases = peers.make_cases(args.cases)
    expected = {case["id"]: misbehaviour(case["prompt"], args.misbehave, args.seed) for case in cases}
    hostile = sum(1 for kind in expected.values() if kind)
    work = Path(tempfile.mkdtemp(prefix="trunchbull-bench-resilience-"))
    try:
        write_benchmark(work / "bench", cases)
        release = work / "release"
        build(work / "bench", release)
        misbehaving = ("--misbehave", str(args.misbehave), "--seed", str(args.seed))
        runs: list[tuple[str, float, dict, float, float, float]] = []
        for index, (label, extra) in enumerate(
            [("warm-up", ()), ("clean", ()), ("misbehaving", misbehaving), ("misbehaving", misbehaving), ("clean", ())]
        ):
            with Server(*extra) as url:
                wall, outcomes, load, cpu = run_once(release, url, work / f"run-{index}", args.concurrency)
                server_cpu = children_cpu()
            server_cpu = children_cpu() - server_cpu  # the server, reaped as the block ends
            shutil.rmtree(work / f"run-{index}")
            if label != "warm-up":
                runs.append((label, wall, outcomes, load, cpu, server_cpu))

        print(
            f"{args.cases:,} cases at -j {args.concurrency}, --retries 0; {hostile:,} misbehaving replies "
            f"({hostile / args.cases:.1%}, seed {args.seed}); replies after {DELAY_S * 1000:.0f} ms"
        )
        clean_rates = []
        good_rates = []
        for label, wall, outcomes, load, cpu, server_cpu in runs:
            cpu_text = f"CPU: run {cpu:5.1f} s, server {server_cpu:5.1f} s"
            if len(outcomes) != args.cases:
                raise SystemExit(f"{label}: {len(outcomes):,} samples recorded of {args.cases:,}")
            if label == "clean":
                rate = args.cases / wall
                clean_rates.append(rate)
                print(
                    f"  clean        {wall:7.2f} s  {rate:7.0f} samples/s                   {cpu_text}  load {load:.1f}"
                )
                continue
            wrong = []
            for case_id, kind in expected.items():
                outcome, error, repaired = outcomes[case_id]
                want = KINDS[kind] if kind else None
                if error != want or (want is None and outcome != "pass"):
                    wrong.append((case_id, kind, outcomes[case_id]))
                if kind == "surrogate" and repaired != ("unencodable-text",):
                    wrong.append((case_id, kind, outcomes[case_id]))
            if wrong:
                raise SystemExit(f"{label}: {len(wrong)} sample(s) not ended by their own reply, first: {wrong[0]}")
            good = args.cases - sum(1 for kind in expected.values() if kind and KINDS[kind])
            rate = good / wall
            good_rates.append(rate)
            print(
                f"  misbehaving  {wall:7.2f} s  {rate:7.0f} good samples/s (of {good:,})  {cpu_text}  load {load:.1f}"
            )
        first, second = (run[2] for run in runs if run[0] == "misbehaving")
        identical = first == second
        print(f"  the two misbehaving runs' outcomes are identical: {identical}")
        good = good_rates and args.cases - sum(1 for kind in expected.values() if kind and KINDS[kind])
        clean_good = [rate * good / args.cases for rate in clean_rates]  # the same good samples, in a clean run
        ratio = min(good_rates) / max(clean_good)
        median_ratio = sorted(good_rates)[len(good_rates) // 2] / sorted(clean_good)[len(clean_good) // 2]
        print(
            f"  good samples/s: {min(good_rates):.0f}–{max(good_rates):.0f} misbehaving, "
            f"{min(clean_good):.0f}–{max(clean_good):.0f} in the clean runs: worst pair {ratio:.1%}, "
            f"faster of each {median_ratio:.1%} (target ≥ 90%); against every sample of the clean runs "
            f"({min(clean_rates):.0f}–{max(clean_rates):.0f}/s): {min(good_rates) / max(clean_rates):.1%}"
        )
        return 0 if identical and ratio >= 0.9 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
