"""`trunchbull report RUN_DIR [--vs OTHER_RUN_DIR] [-o FILE]` (SPEC §9):
prints the run's summary (the same table `run` and `grade` print; with --vs
also the comparison) and writes one self-contained HTML file. The pipeline
runs one way: run directories → release cases → comparison → payload →
bundled front end → HTML."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from trunchbull.common.files import write_atomic
from trunchbull.common.gc_pause import gc_paused
from trunchbull.grading.summary_text import render_summary
from trunchbull.report.compare.comparison import compare_runs
from trunchbull.report.compare.text import render_comparison
from trunchbull.report.html.bundle import bundle_front_end
from trunchbull.report.html.page import render_html
from trunchbull.report.html.payload import build_payload
from trunchbull.report.html.release_cases import release_cases
from trunchbull.rundir.reader import RunDirectory, read_run_dir

DEFAULT_NAME = "report.html"
# variables whose values must never appear in a report, whatever a record holds
SECRET_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY")
MIN_SECRET = 8


def _title(run: RunDirectory, given: str | None) -> str:
    if given:
        return given
    release = run.meta.get("release") or {}
    name = " ".join(str(p) for p in (release.get("title"), release.get("version")) if p) or "Trunchbull run"
    return f"{name} — {run.model}"


def scrub_secrets(data: bytes, runs: list[RunDirectory]) -> bytes:
    """Defence in depth: the records are scrubbed when written, but a report
    must not carry a key even from a log that was not."""
    names = {*SECRET_VARIABLES, *(str(r.meta["apiKeyEnv"]) for r in runs if r.meta.get("apiKeyEnv"))}
    for name in names:
        value = os.environ.get(name)
        if value and len(value) >= MIN_SECRET:
            data = data.replace(value.encode(), b"[redacted]")
    return data


def report_command(args) -> int:
    with gc_paused():
        return _report_command(args)


def _report_command(args) -> int:
    run = read_run_dir(args.run_dir)
    baseline = read_run_dir(args.vs) if args.vs is not None else None
    comparison = compare_runs(baseline, run, allow_release_change=args.allow_release_change) if baseline else None
    out: Path = args.out if args.out is not None else args.run_dir / DEFAULT_NAME
    title = _title(run, args.title)
    cases = release_cases(run.meta, args.release)
    runs = [("B" if baseline else "run", run, cases)]
    if baseline is not None:
        same = (
            baseline.meta.get("release") == run.meta.get("release") and args.vs_release is None and args.release is None
        )
        runs.append(("A", baseline, cases if same else release_cases(baseline.meta, args.vs_release)))
    payload = build_payload(title, runs, comparison)
    page = scrub_secrets(render_html(title, payload, bundle_front_end()), [run] + ([baseline] if baseline else []))
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, page)

    print(render_summary(run.summary))
    if comparison is not None:
        print()
        print(render_comparison(comparison, comparison["a"], comparison["b"]))
    for label, _run, release in runs:
        if release.note:
            print(f"note ({label}): {release.note}", file=sys.stderr)
    print(f"report: {out} ({len(page) / 1e6:.1f} MB)")
    return 0
