"""`trunchbull report RUN_DIR [--vs OTHER_RUN_DIR] [--by FIELD] [-o FILE]`
(SPEC §9): prints the run's summary (the same table `run` and `grade`
print; with --by its breakdown, with --vs also the comparison; as JSON with
--json, as Markdown with --markdown) and writes one self-contained HTML
file. The pipeline runs one way: run directories → release cases →
breakdown and comparison → payload → bundled front end → HTML."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson

from trunchbull.common.files import write_atomic
from trunchbull.common.gc_pause import gc_paused
from trunchbull.grading.summary_text import render_summary
from trunchbull.report.breakdown import By, group_of, parse_by, require_release
from trunchbull.report.breakdown_text import render_breakdown
from trunchbull.report.compare.comparison import compare_runs
from trunchbull.report.compare.text import render_comparison
from trunchbull.report.html.bundle import bundle_front_end
from trunchbull.report.html.page import render_html
from trunchbull.report.html.payload import build_payload
from trunchbull.report.markdown import comparison_markdown, summary_markdown
from trunchbull.report.release_cases import ReleaseCases, release_cases
from trunchbull.report.run_cases import run_cases
from trunchbull.rundir.reader import RunDirectory, read_run_dir
from trunchbull.stats.run_stats import GroupOf, breakdown, cached_samples

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


def _groups(by: By | None, runs: list[tuple[str, RunDirectory, ReleaseCases]]) -> GroupOf:
    """The groups of --by: from the report's run's release, and the
    baseline's too when it ran another release."""
    if by is None or by.is_eval:
        return None
    digests = {run.digest for _, run, _ in runs}
    needed = runs if len(digests) > 1 else runs[:1]
    return group_of(by, [require_release(by, run, release) for _, run, release in needed])


def _breakdown(by: By, groups: GroupOf, run: RunDirectory) -> dict:
    """A run's figures per group (stats/run_stats.py), with the field."""
    repeat = run.meta.get("repeat")
    repeats = repeat if type(repeat) is int else 1
    order = run.summary["evals"] if by.is_eval else ()
    return {"by": by.field, **breakdown(run_cases(run), groups, order, repeats)}


def _print(args, run: RunDirectory, out: Path, mine: dict | None, comparison: dict | None) -> None:
    """The summary (with the breakdown and the comparison) on standard output: as a table, JSON or Markdown."""
    cached = cached_samples(run.records.values())
    if args.json:
        shown = {"runDir": str(run.path), "report": str(out), "summary": run.summary, "cachedSamples": cached}
        if mine:
            shown["breakdown"] = mine
        if comparison:
            shown["comparison"] = comparison
        sys.stdout.buffer.write(orjson.dumps(shown, option=orjson.OPT_INDENT_2) + b"\n")
        return
    if args.markdown:
        if comparison is not None:
            print(comparison_markdown(comparison))
        print(summary_markdown(run.summary, run.model, mine), end="")
        return
    print(render_summary(run.summary))
    if cached:
        print(
            f"cache: {cached:,} of {len(run.results):,} sample(s) came from the response cache when the run "
            "was made; their latencies are those of the original calls"
        )
    if mine:
        print()
        print(render_breakdown(mine["by"], mine))
    if comparison is not None:
        print()
        print(render_comparison(comparison, comparison["a"], comparison["b"]))


def _report_command(args) -> int:
    run = read_run_dir(args.run_dir)
    baseline = read_run_dir(args.vs) if args.vs is not None else None
    by = parse_by(args.by) if args.by else None
    out: Path = args.out if args.out is not None else args.run_dir / DEFAULT_NAME
    title = _title(run, args.title)
    cases = release_cases(run.meta, args.release)
    runs = [("B" if baseline else "run", run, cases)]
    if baseline is not None:
        same = (
            baseline.meta.get("release") == run.meta.get("release") and args.vs_release is None and args.release is None
        )
        runs.append(("A", baseline, cases if same else release_cases(baseline.meta, args.vs_release)))
    groups = _groups(by, runs)
    breakdowns = {label: _breakdown(by, groups, r) for label, r, _ in runs} if by else {}
    comparison = None
    if baseline is not None:
        comparison = compare_runs(baseline, run, args.allow_release_change, by.field if by else None, groups)
    payload = build_payload(title, runs, comparison, breakdowns)
    page = scrub_secrets(render_html(title, payload, bundle_front_end()), [run] + ([baseline] if baseline else []))
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, page)

    _print(args, run, out, breakdowns.get(runs[0][0]), comparison)
    for label, _run, release in runs:
        if release.note:
            print(f"note ({label}): {release.note}", file=sys.stderr)
    plain = not (args.json or args.markdown)
    print(f"report: {out} ({len(page) / 1e6:.1f} MB)", file=sys.stdout if plain else sys.stderr)
    return 0
