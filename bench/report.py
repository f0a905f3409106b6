"""The HTML report of a 25,000-sample run: generation time, HTML size and
time until the page is interactive in headless Chromium, each next to a floor
measured in the same run.

    .venv/bin/python bench/report.py [--samples N] [--repeat R]

A 25,000-case JSONL benchmark (five evals, `contains`, prompts of ~60-90
characters) is built with the real compiler and run with the `echo` model
(`trunchbull run … --model echo`, the real pipeline: workers, records,
grading); a second run of the same release with other answers (recorded, via
`grade --run-dir`) is the baseline of the `--vs` report. Figures, medians of R:

* generation: a whole `python -m trunchbull report RUN -o OUT` process
  (start-up, reading and checking the run directory and the release, the
  payload, the esbuild bundle of the front end, writing the HTML), and the
  same with `--vs BASELINE`, with the front-end bundle in its cache; once
  without it (`cold`: esbuild bundles the front end first). Floor: a process
  that reads results.jsonl and responses.jsonl with orjson and writes the
  same number of bytes as the HTML.
* size: the HTML file; for reference the run's own results.jsonl +
  responses.jsonl.
* interactive: in one headless Chromium (Debian's, via Playwright), a fresh
  page per repeat: time from navigation start until the report has parsed its
  data and drawn its first view (`window.trunchbullReadyAt`), then the time to
  show the 25,000-row case table (a click on the Cases tab until its rows are
  drawn) and to apply a text search over prompts and outputs. Floor: the load
  event of a static HTML page of the same size (the same bytes in an inert
  <script type="text/plain"> block, no script running).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from trunchbull.node.toolchain import cache_root  # noqa: E402

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EVALS = ["billing", "shipping", "returns", "accounts", "warranty"]
FLOOR = """
import sys, orjson
from pathlib import Path
run, out, size = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
rows = [orjson.loads(l) for name in ("results.jsonl", "responses.jsonl") for l in (run / name).read_bytes().splitlines()]
out.write_bytes(b"x" * size)
"""


def cli(*args, env=None) -> subprocess.CompletedProcess:
    merged = dict(os.environ, PYTHONPATH=str(REPO / "src"), **(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "trunchbull", *map(str, args)], capture_output=True, text=True, env=merged
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"trunchbull {' '.join(map(str, args))} failed:\n{proc.stdout}{proc.stderr}")
    return proc


def make_runs(tmp: Path, n: int) -> tuple[Path, Path]:
    root = tmp / "bench"
    (root / "evals").mkdir(parents=True)
    per_eval = n // len(EVALS)
    for e, eval_id in enumerate(EVALS):
        (root / "evals" / f"{eval_id}.ts").write_text(
            f'export default {{ id: "{eval_id}", systemPrompt: "You answer {eval_id} questions.", '
            f'evaluate: {{ kind: "contains", expected: "order" }}, cases: "./{eval_id}.jsonl" }}\n'
        )
        lines = []
        for i in range(per_eval):
            topic = ["order", "parcel", "invoice", "refund", "account"][(i * 7 + e) % 5]
            lines.append(
                orjson.dumps(
                    {
                        "id": f"{eval_id}.{i}",
                        "prompt": f"Customer {i} asks about their {topic} "
                        f"number {i * 31 % 9973}: what is its status and when will it arrive?",
                    }
                )
            )
        (root / "evals" / f"{eval_id}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    release = tmp / "release"
    cli("build", root, "-o", release)
    env = {"TRUNCHBULL_RESPONSE_CACHE": str(tmp / "cache.sqlite3")}
    cli("run", release, "--model", "echo", "-o", tmp / "run", "-j", "64", "--no-cache", env=env)
    cases = [json.loads(line)["id"] for line in (release / "cases.jsonl").read_text().splitlines()]
    answers = tmp / "baseline.jsonl"
    answers.write_bytes(
        b"".join(
            orjson.dumps({"caseId": c, "output": "your order ships today" if i % 4 else "unknown"}) + b"\n"
            for i, c in enumerate(cases)
        )
    )
    cli("grade", release, answers, "--run-dir", tmp / "baseline")
    return tmp / "run", tmp / "baseline"


def timed(fn, cpu: list | None = None) -> float:
    """Wall seconds of fn(); with `cpu`, the CPU seconds of the processes it ran are appended to it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    fn()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall


def interactive(browser, page_path: Path, floor_path: Path, repeat: int) -> dict:
    ready, table, search, floor = [], [], [], []
    for _ in range(repeat):
        for path, is_floor in ((floor_path, True), (page_path, False)):  # interleaved: both see the same load
            context = browser.new_context(viewport={"width": 1360, "height": 900})
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri(), wait_until="load")
            if is_floor:
                floor.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
            else:
                page.wait_for_selector("body[data-ready]")
                ready.append(page.evaluate("window.trunchbullReadyAt"))
                table.append(
                    page.evaluate("""() => new Promise((resolve) => {
                    const t0 = performance.now();
                    document.querySelector('button[data-tab=cases]').click();
                    requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0));
                })""")
                )
                search.append(
                    page.evaluate("""() => new Promise((resolve) => {
                    const input = document.querySelector('[data-testid=search]');
                    const t0 = performance.now();
                    input.value = 'refund number 42';
                    input.dispatchEvent(new Event('input'));
                    requestAnimationFrame(() => setTimeout(() => resolve([performance.now() - t0,
                        document.querySelector('[data-testid=case-count]').dataset.count]), 0));
                })""")
                )
                if errors:
                    raise SystemExit(f"page errors: {errors}")
            context.close()
    return {
        "readyMs": statistics.median(ready),
        "readyMsAll": [round(v) for v in ready],
        "caseTableMs": statistics.median(table),
        "searchMs": statistics.median(s[0] for s in search),
        "searchMatches": search[0][1],
        "floorLoadMs": statistics.median(floor),
        "floorLoadMsAll": [round(v) for v in floor],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="trunchbull-bench-report-") as tmp_name:
        tmp = Path(tmp_name)
        run, baseline = make_runs(tmp, args.samples)
        load_before = round(os.getloadavg()[0], 2)
        out, out_vs = tmp / "report.html", tmp / "report-vs.html"
        gen, gen_vs, floor, gen_cpu, floor_cpu = [], [], [], [], []
        shutil.rmtree(cache_root() / "report-bundles", ignore_errors=True)  # a cache: the first report rebuilds it
        cold = timed(lambda: cli("report", run, "-o", out))
        for _ in range(args.repeat):
            gen.append(timed(lambda: cli("report", run, "-o", out), gen_cpu))
            size = out.stat().st_size
            floor.append(
                timed(
                    lambda: subprocess.run(
                        [sys.executable, "-c", FLOOR, str(run), str(tmp / "floor.out"), str(size)], check=True
                    ),
                    floor_cpu,
                )
            )
            gen_vs.append(timed(lambda: cli("report", run, "--vs", baseline, "-o", out_vs)))
        html = out.read_bytes()
        static = tmp / "static.html"
        head = b"<!doctype html><html><head><meta charset='utf-8'><title>static</title></head><body><p>static</p><script type='text/plain'>"
        tail = b"</script></body></html>"
        static.write_bytes(head + html.replace(b"</script", b"<\\/script")[: len(html) - len(head) - len(tail)] + tail)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = interactive(browser, out, static, args.repeat)
            page_vs = interactive(browser, out_vs, static, max(2, args.repeat // 2))
            browser.close()
        data_bytes = sum((run / name).stat().st_size for name in ("results.jsonl", "responses.jsonl"))
        print(
            json.dumps(
                {
                    "samples": args.samples,
                    "generationSeconds": round(statistics.median(gen), 3),
                    "generationSecondsAll": [round(v, 2) for v in gen],
                    "generationVsSeconds": round(statistics.median(gen_vs), 3),
                    "generationColdSeconds": round(cold, 3),
                    "floorSeconds": round(statistics.median(floor), 3),
                    "generationCpuSeconds": round(statistics.median(gen_cpu), 3),
                    "floorCpuSeconds": round(statistics.median(floor_cpu), 3),
                    "htmlBytes": len(html),
                    "htmlVsBytes": out_vs.stat().st_size,
                    "runJsonlBytes": data_bytes,
                    "interactive": {k: round(v, 1) if isinstance(v, float) else v for k, v in page.items()},
                    "interactiveVs": {k: round(v, 1) if isinstance(v, float) else v for k, v in page_vs.items()},
                    "loadAverage": [load_before, round(os.getloadavg()[0], 2)],
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
