"""Judged grading's throughput next to the judge server's own (docs/benchmarks.md, bench/README.md).

`.venv/bin/python bench/judge_throughput.py [--cases 25000] [--runs 3] [-j 32]`

Builds a benchmark of CASES cases, one `rubric` eval over JSONL cases (prompts
of 100–300 characters, Inspect AI's default template frozen into the release),
and serves bench/chat_server.mjs (node:http, 50 ms per reply) as both the
model under test (it echoes the prompt) and the judge (`--judge-model`: a
short explanation and `GRADE: C` or `I`). Then, alternated in each of
RUNS rounds, so that all see the same load:

1. **judged run**: `trunchbull run REL --model openai-compatible:model --judge
   openai-compatible:judge -j 32 --no-cache`: CASES model requests, then CASES
   judge requests (the grader defers them to the end), recorded, graded,
   summarized, as a user runs it.
2. **floor**: the same 2 × CASES requests over bare node:http, 32 lanes
   (bench/http_floor.mjs), no SDK, no records: first the prompts, then the
   judge prompts as the release's template renders them, one after the other
   as the run sends them. What the server and the transport allow on this
   machine, now.
3. **plain run**: the same run without judging (a `contains` eval over the
   same cases), for where the time goes.

Reported: each's wall time and rate (samples/s, requests/s); the judged run's
request rate as a share of the floor's (target ≥ 95%), median, range and n.
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "src")]

import peers  # noqa: E402
from run import DELAY_S, build, cli_env, trunchbull  # noqa: E402
from trunchbull.node.toolchain import toolchain  # noqa: E402

RUBRIC = "The reply repeats the question's key facts accurately and politely."
MODEL, JUDGE = "model", "judge"


def write_benchmark(root: Path, cases: list[dict], judged: bool) -> None:
    """One eval over JSONL cases: judged by a rubric, or (the plain run) a `contains` check."""
    (root / "evals").mkdir(parents=True)
    with open(root / "evals" / "cases.jsonl", "w") as out:
        for case in cases:
            line = {"id": case["id"], "prompt": case["prompt"]}
            if not judged:
                line["evaluate"] = {"kind": "contains", "expected": case["expected"]}
            out.write(json.dumps(line) + "\n")
    evaluate = f", evaluate: {{ kind: 'rubric', rubric: {json.dumps(RUBRIC)} }}" if judged else ""
    (root / "evals" / "answers.ts").write_text(
        f'export default {{ id: "answers", cases: "./cases.jsonl"{evaluate} }}\n'
    )


def judge_prompts(release: Path, cases: list[dict]) -> list[str]:
    """The judge's prompt for each case, as the frozen template renders it for an echoed output
    (placeholders substituted in one pass, as evaluators/judge_templates.py does)."""
    files = list((release / "templates").glob("*.txt"))
    assert len(files) == 1, files
    template = files[0].read_text()
    out = []
    for case in cases:
        values = {"question": case["prompt"], "answer": case["prompt"], "criterion": RUBRIC}
        text = template
        for name, value in values.items():
            text = text.replace("{" + name + "}", value)
        out.append(text)
    return out


class Server:
    """bench/chat_server.mjs, replying after DELAY_S, answering the judge model with grades."""

    def __enter__(self) -> str:
        argv = [str(toolchain().node), str(REPO / "bench" / "chat_server.mjs"), str(DELAY_S), "--judge-model", JUDGE]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def __exit__(self, *exc) -> None:
        self.proc.kill()
        self.proc.wait()


def timed_run(release: Path, out: Path, url: str, concurrency: int, judged: bool) -> tuple[float, float, dict]:
    """(wall, CPU) of one `trunchbull run`, and its summary."""
    extra = ["--judge", f"openai-compatible:{JUDGE}", "--judge-base-url", url] if judged else []
    argv = trunchbull(
        "run", str(release), "--model", f"openai-compatible:{MODEL}", "--base-url", url,
        "-o", str(out), "--no-cache", "-j", str(concurrency), *extra,
    )  # fmt: skip
    with open(out.parent / "stderr.log", "wb") as err:
        m = peers.run_measured(argv, env=cli_env(), stdout=subprocess.DEVNULL, stderr=err)
    if m.returncode not in (0, 1):  # 1: the judge's I grades fail their samples
        raise SystemExit(f"trunchbull run exited {m.returncode}:\n{(out.parent / 'stderr.log').read_text()[-3000:]}")
    summary = json.loads((out / "summary.json").read_text())
    shutil.rmtree(out)
    return m.wall_s, m.cpu_s, summary


def timed_floor(url: str, work: Path, concurrency: int, batches: list[tuple[str, list[str]]]) -> tuple[float, float]:
    """(wall, CPU) of bench/http_floor.mjs over each (model, prompts) batch, one after the other."""
    wall = cpu = 0.0
    for model, prompts in batches:
        path = work / f"prompts-{model}.jsonl"
        if not path.exists():
            path.write_text("".join(json.dumps(p) + "\n" for p in prompts))
        argv = [str(toolchain().node), str(REPO / "bench" / "http_floor.mjs"), url, model, str(concurrency)]
        with open(path, "rb") as stdin, open(work / "floor.out", "wb") as out:
            m = peers.run_measured(argv, stdout=out, stderr=subprocess.DEVNULL, stdin=stdin)
        replies = int((work / "floor.out").read_text().strip() or 0)
        if m.returncode != 0 or replies != len(prompts):
            raise SystemExit(f"http floor: exit {m.returncode}, {replies} replies of {len(prompts)}")
        wall += m.wall_s
        cpu += m.cpu_s
    return wall, cpu


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):,.1f} (range {min(values):,.1f}–{max(values):,.1f}, n {len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=25_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("-j", type=int, default=32, dest="concurrency")
    parser.add_argument("--skip-plain", action="store_true", help="no run without judging")
    args = parser.parse_args()
    n, lanes = args.cases, args.concurrency
    cases = peers.make_cases(n)
    bound = lanes / DELAY_S
    with tempfile.TemporaryDirectory(prefix="trunchbull-judge-bench-") as tmp:
        work = Path(tmp)
        releases = {}
        for judged in (True, False):
            name = "judged" if judged else "plain"
            write_benchmark(work / f"src-{name}", cases, judged)
            build(work / f"src-{name}", work / f"rel-{name}")
            releases[judged] = work / f"rel-{name}"
        prompts = [case["prompt"] for case in cases]
        batches = [(MODEL, prompts), (JUDGE, judge_prompts(releases[True], cases))]
        rows: dict[str, list[tuple[float, float]]] = {"judged": [], "floor": [], "plain": []}
        shares: list[float] = []
        with Server() as url:
            for index in range(args.runs):
                load = os.getloadavg()[0]
                wall, cpu, summary = timed_run(releases[True], work / f"run-{index}", url, lanes, judged=True)
                overall = summary["overall"]
                judge = overall.get("judge") or {}
                assert overall["errors"] == 0 and judge.get("requests") == n, (overall, judge)
                rows["judged"].append((wall, cpu))
                rows["floor"].append(timed_floor(url, work, lanes, batches))
                if not args.skip_plain:
                    rows["plain"].append(timed_run(releases[False], work / f"plain-{index}", url, lanes, False)[:2])
                share = rows["floor"][-1][0] / wall
                shares.append(share)
                print(
                    f"round {index + 1}: judged run {wall:.2f} s ({2 * n / wall:,.0f} requests/s, CPU {cpu:.1f} s), "
                    f"floor {rows['floor'][-1][0]:.2f} s ({2 * n / rows['floor'][-1][0]:,.0f}/s), "
                    + (f"plain run {rows['plain'][-1][0]:.2f} s, " if rows["plain"] else "")
                    + f"judged / floor {100 * share:.1f}%, load before {load:.1f}",
                    flush=True,
                )
    print(f"\n{n:,} judged samples, -j {lanes}, server delay {DELAY_S * 1000:.0f} ms (bound {bound:,.0f} requests/s)")
    requests = {"judged": 2 * n, "floor": 2 * n, "plain": n}
    for name, measured in rows.items():
        if measured:
            walls = [w for w, _ in measured]
            rates = [requests[name] / w for w in walls]
            print(
                f"{name:<7} wall s {spread(walls)}; requests/s {spread(rates)}; CPU s {spread([c for _, c in measured])}"
            )
    print(f"judged run / floor: {spread([100 * s for s in shares])} % (target >= 95%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
