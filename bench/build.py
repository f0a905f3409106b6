"""Build time of a 25,000-case benchmark, next to a floor measured in the same run.

The benchmark mixes inline evals, a CSV file, a JSONL file and several tool
modules. Reported:
  * dependency installation (npm ci from the lockfile, into an empty cache), once;
  * build time with dependencies installed and no earlier build output
    (median of --runs `trunchbull build` processes, each writing a fresh release);
  * the floor: reading and hashing every input file plus starting Node once;
  * build / floor.
Target: build under 2 s on a 2-core machine.

Usage: ./run-tests is not needed; run with the venv's Python:
  .venv/bin/python bench/build.py [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from trunchbull.node.toolchain import toolchain  # noqa: E402

INLINE_EVALS = 20
INLINE_CASES_PER_EVAL = 250  # 5,000 inline
CSV_CASES = 10_000
JSONL_CASES = 10_000
TOOL_MODULES = 4
TOOLS_PER_MODULE = 5


def generate(root: Path) -> None:
    (root / "evals").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "lib").mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(REPO / "examples" / "support" / name, root / name)
    (root / "benchmark.config.ts").write_text(
        'export default { protocolVersion: 1, title: "Bench 25k", version: "1.0.0" }\n'
    )
    (root / "lib" / "prompts.ts").write_text('export const SYSTEM = "Answer briefly."\n')
    tool_names = []
    for m in range(TOOL_MODULES):
        lines = ['import { tool } from "ai"', 'import { z } from "zod"', "", "export const tools = {"]
        for t in range(TOOLS_PER_MODULE):
            name = f"tool_{m}_{t}"
            tool_names.append(name)
            lines.append(
                f"  {name}: tool({{ description: \"Tool {m}.{t}\", "
                f"inputSchema: z.object({{ q: z.string(), n: z.number().int().optional() }}), "
                f"execute: async ({{ q }}) => ({{ q, m: {m} }}) }}),"
            )
        lines.append("}")
        (root / "tools" / f"set{m}.ts").write_text("\n".join(lines) + "\n")
    for e in range(INLINE_EVALS):
        cases = ",\n".join(
            f'    {{ id: "inline.{e}.{c}", prompt: "Question {e}/{c}: what is {c} plus {e}?", '
            f'evaluate: {{ kind: "gsm8k", expected: "{c + e}" }}, data: {{ n: {c} }} }}'
            for c in range(INLINE_CASES_PER_EVAL)
        )
        (root / "evals" / f"inline{e:02d}.ts").write_text(
            f'import {{ SYSTEM }} from "../lib/prompts"\n\nexport default {{\n  id: "inline-{e}",\n'
            f'  systemPrompt: SYSTEM,\n  tools: ["{tool_names[e % len(tool_names)]}"],\n  cases: [\n{cases}\n  ],\n}}\n'
        )
    rows = "".join(f'csv.{i},"What is the capital of country {i}, please?",City {i}\n' for i in range(CSV_CASES))
    (root / "evals" / "capitals.csv").write_text("id,prompt,expected\n" + rows)
    (root / "evals" / "capitals.ts").write_text(
        'export default { id: "capitals", evaluate: { kind: "contains" }, cases: "./capitals.csv" }\n'
    )
    import orjson

    with open(root / "evals" / "mixed.jsonl", "wb") as out:
        for i in range(JSONL_CASES):
            case = {
                "id": f"jsonl.{i}",
                "prompt": f"Say hello to user {i}.",
                "tools": [tool_names[i % len(tool_names)]],
                "evaluate": {"kind": "answer_bank", "answers": [f"hello {i}"], "forbiddenAnswers": ["goodbye"]},
                "data": {"user": i},
            }
            out.write(orjson.dumps(case) + b"\n")
    (root / "evals" / "mixed.ts").write_text('export default { id: "mixed", cases: "./mixed.jsonl" }\n')


def floor_seconds(root: Path) -> float:
    node = str(toolchain().node)
    start = time.perf_counter()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "dist" not in path.parts:
            hashlib.sha256(path.read_bytes()).hexdigest()
    subprocess.run([node, "-e", "0"], check=True)
    return time.perf_counter() - start


def build(root: Path, out: Path, env: dict) -> float:
    if out.exists():
        for path in [out, *out.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "trunchbull", "build", str(root), "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"build failed:\n{result.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate the benchmark here and keep it")
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="SRC",
        help="also time another source tree (its src/ directory), alternating run by run",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="trunchbull-bench-"))
    root = args.keep or work / "bench25k"
    if root.exists():
        shutil.rmtree(root)
    generate(root)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), TRUNCHBULL_CACHE_DIR=str(work / "cache"))
    env["TRUNCHBULL_TOOLCHAIN"] = str(toolchain().root)
    # Bytecode cached, as ./trunchbull and an installed package run (an inherited
    # PYTHONDONTWRITEBYTECODE would compile every imported module from source on each build).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    out = work / "release"
    first = build(root, out, env)  # includes npm ci into the empty cache
    other_env = dict(env, PYTHONPATH=str(args.compare)) if args.compare else None
    if other_env:
        build(REPO / "examples" / "minimal", work / "small", other_env)  # its bytecode cached too
    builds, other_builds, small, other_small = [], [], [], []
    minimal = REPO / "examples" / "minimal"
    for _ in range(args.runs):  # alternating, so that both see the same load
        builds.append(build(root, out, env))
        small.append(build(minimal, work / "small", env))  # start-up and exit: a one-case build
        if other_env:
            other_builds.append(build(root, out, other_env))
            other_small.append(build(minimal, work / "small", other_env))
    floors = [floor_seconds(root) for _ in range(args.runs)]
    cases = sum(1 for _ in open(out / "cases.jsonl", "rb"))
    b, f = statistics.median(builds), statistics.median(floors)
    print(f"one-case build (start-up + exit), median of {args.runs}: {statistics.median(small):.3f} s")
    if other_env:
        print(
            f"compared tree {args.compare}: build median {statistics.median(other_builds):.2f} s "
            f"(min {min(other_builds):.2f}), one-case build median {statistics.median(other_small):.3f} s"
        )
    print(f"cases                         {cases}")
    print(f"first build (incl. npm ci)    {first:6.2f} s")
    print(f"dependency install (approx.)  {first - b:6.2f} s")
    print(f"build, median of {args.runs}           {b:6.2f} s   (min {min(builds):.2f}, max {max(builds):.2f})")
    print(f"floor (hash inputs + node)    {f:6.2f} s")
    print(f"build / floor                 {b / f:6.1f}x")
    print(f"target build < 2 s            {'met' if b < 2 else 'NOT met'}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
