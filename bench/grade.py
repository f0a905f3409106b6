"""Grading throughput: 25,000 responses graded with built-in evaluators and
25,000 with a custom JS evaluator, each next to a floor measured in the same
run (reading the responses JSONL and writing the same lines back with orjson).

    .venv/bin/python bench/grade.py [--cases N] [--repeat R] [--cli-repeat C]

Releases are built with the real compiler (`python -m trunchbull build`) into a
temporary directory. Suites: `builtin` (five built-in kinds, one spec per kind,
so five graders are prepared), `builtinPerCaseSpecs` (the same kinds, but each
case has its own expected value, as in real datasets) and `custom`. Three figures per suite, each the median of R runs (the
machine is shared, so medians, with the load average before and after):

* `grade` (the headline figure): `run_grade_command` in-process — release
  load + verify, responses validation, grading, results JSONL, summary —
  after one untimed warm-up run. The warm-up is reported too (`coldSeconds`):
  it also imports, for tool calls, jsonschema.
* `gradeCpu`: the process CPU time of the same runs (less sensitive to other
  load on the machine; the Node workers of the custom suite are not included).
* `cli`: a whole `python -m trunchbull grade RELEASE RESPONSES -o OUT --json`
  process (interpreter start-up, imports, then the same work),
  median of C runs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), str(REPO / "src")]

from checkout_env import cli_env  # noqa: E402
from trunchbull.node.worker_pool import pool_size  # noqa: E402
from trunchbull.grading.command import run_grade_command  # noqa: E402

KINDS = [
    ({"kind": "contains", "expected": "30 days"}, "The window is 30 DAYS.", "about a month"),
    ({"kind": "exact", "expected": "Paris"}, " Paris\n", "paris"),
    ({"kind": "gsm8k", "expected": "72"}, "70 + 2 = 72 apples.\n#### $72", "#### 71.00"),
    (
        {"kind": "answer_bank", "answers": ["full refund", "yes"], "forbiddenAnswers": ["no refund"]},
        "Yes, they get a FULL-refund.",
        "No refund, sorry.",
    ),
    ({"kind": "non_empty"}, "hello", "   "),
]

CUSTOM_EVAL = """export default {
  id: "custom",
  cases: "./cases.jsonl",
  evaluate({ output, caseData }) {
    const answer = output.trim().toLowerCase()
    const passed = answer.includes(caseData.label)
    return { passed, score: passed ? 1 : 0, message: passed ? "ok" : `expected ${caseData.label}` }
  },
}
"""


def build(root: Path, out: Path) -> None:
    env = cli_env()
    run = subprocess.run(
        [sys.executable, "-m", "trunchbull", "build", str(root), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    if run.returncode != 0:
        raise SystemExit(f"build failed:\n{run.stdout}{run.stderr}")


def per_case_kind(i: int) -> tuple[dict, str, str]:
    """The same five kinds, but every case has its own expected value (as in
    real datasets): one grader is prepared per case."""
    spec, good, bad = KINDS[i % len(KINDS)]
    kind = spec["kind"]
    if kind == "contains":
        return {"kind": kind, "expected": f"{i} days"}, f"The window is {i} DAYS.", "about a month"
    if kind == "exact":
        return {"kind": kind, "expected": f"Paris {i}"}, f" Paris {i}\n", "paris"
    if kind == "gsm8k":
        return {"kind": kind, "expected": str(i)}, f"70 + 2 = {i} apples.\n#### ${i}", "#### 71.00"
    if kind == "answer_bank":
        return (
            {"kind": kind, "answers": [f"full refund {i}", "yes"], "forbiddenAnswers": ["no refund"]},
            f"Yes, they get a FULL-refund {i}.",
            "No refund, sorry.",
        )
    return spec, good, bad


def make_builtin(tmp: Path, n: int, per_case: bool = False) -> tuple[Path, Path]:
    name = "builtin-per-case" if per_case else "builtin"
    root = tmp / name
    (root / "evals").mkdir(parents=True)
    (root / "evals" / "mixed.ts").write_text('export default { id: "mixed", cases: "./cases.jsonl" }\n')
    cases, responses = [], []
    for i in range(n):
        spec, good, bad = per_case_kind(i) if per_case else KINDS[i % len(KINDS)]
        cases.append({"id": f"case-{i}", "prompt": f"Question {i}?", "evaluate": spec})
        responses.append({"caseId": f"case-{i}", "output": good if i % 3 else bad, "finishReason": "stop"})
    (root / "evals" / "cases.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in cases))
    build(root, tmp / f"{name}-release")
    path = tmp / f"{name}-responses.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in responses))
    return tmp / f"{name}-release", path


def make_custom(tmp: Path, n: int) -> tuple[Path, Path]:
    root = tmp / "custom"
    (root / "evals").mkdir(parents=True)
    (root / "evals" / "custom.js").write_text(CUSTOM_EVAL)
    labels = ["positive", "negative", "mixed"]
    cases, responses = [], []
    for i in range(n):
        cases.append({"id": f"case-{i}", "prompt": f"Review {i}", "data": {"label": labels[i % 3]}})
        responses.append({"caseId": f"case-{i}", "output": labels[(i // 2) % 3], "finishReason": "stop"})
    (root / "evals" / "cases.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in cases))
    build(root, tmp / "custom-release")
    path = tmp / "custom-responses.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in responses))
    return tmp / "custom-release", path


def floor(responses: Path, out: Path) -> float:
    """Read the JSONL, parse every line, serialize it back, write the file."""
    started = time.perf_counter()
    rows = [orjson.loads(line) for line in responses.read_bytes().split(b"\n") if line]
    out.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return time.perf_counter() - started


def grade(release: Path, responses: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one in-process run."""
    started, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = run_grade_command(release, responses, out, json_summary=True, fail_under=None)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if code != 0:
        raise SystemExit(f"grade exited {code}: {err.getvalue()}")
    return elapsed, cpu


def grade_cli(release: Path, responses: Path, out: Path) -> float:
    env = cli_env()
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "trunchbull", "grade", str(release), str(responses), "-o", str(out), "--json"],
        capture_output=True,
        env=env,
    )
    elapsed = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"trunchbull grade exited {run.returncode}: {run.stderr.decode()}")
    return elapsed


def load() -> float:
    return round(os.getloadavg()[0], 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cli-repeat", type=int, default=3)
    args = parser.parse_args()
    report = {"cases": args.cases, "cores": pool_size(), "python": sys.version.split()[0]}
    median = statistics.median
    with tempfile.TemporaryDirectory(prefix="trunchbull-bench-") as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.perf_counter()
        suites = {
            "builtin": make_builtin(tmp, args.cases),
            "builtinPerCaseSpecs": make_builtin(tmp, args.cases, True),
            "custom": make_custom(tmp, args.cases),
        }
        report["setupSeconds"] = round(time.perf_counter() - t0, 1)
        for name, (release, responses) in suites.items():
            load_before = load()
            out = tmp / f"{name}-results.jsonl"
            cold = grade(release, responses, out)[0]
            floors, grades = [], []
            for _ in range(args.repeat):  # interleaved, so both see the same load
                floors.append(floor(responses, tmp / f"{name}-floor.jsonl"))
                grades.append(grade(release, responses, out))
            clis = [grade_cli(release, responses, tmp / f"{name}-cli.jsonl") for _ in range(args.cli_repeat)]
            outcomes: dict[str, int] = {}
            for line in out.read_bytes().splitlines():
                o = orjson.loads(line)["outcome"]
                outcomes[o] = outcomes.get(o, 0) + 1
            wall = median(g[0] for g in grades)
            cpu = median(g[1] for g in grades)
            report[name] = {
                "floorCasesPerSecond": round(args.cases / median(floors)),
                "gradeCasesPerSecond": round(args.cases / wall),
                "gradeSeconds": round(wall, 3),
                "gradeSecondsRange": [round(min(g[0] for g in grades), 3), round(max(g[0] for g in grades), 3)],
                "gradeCpuCasesPerSecond": round(args.cases / cpu),
                "gradeCpuSeconds": round(cpu, 3),
                "coldSeconds": round(cold, 3),
                "cliCasesPerSecond": round(args.cases / median(clis)),
                "cliSeconds": round(median(clis), 3),
                "floorSeconds": round(median(floors), 4),
                "loadAverage": [load_before, load()],
                "outcomes": outcomes,
            }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
