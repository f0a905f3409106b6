"""`trunchbull run TARGET --model SPEC -o RUN_DIR` (SPEC §8): the run from
start to finish. Everything that can be wrong with the command line is found
before anything is called or written (exit 2); then the run directory is made,
cached samples are recorded, the rest go to the Node workers and are recorded
as they finish, and every sample is graded from the bytes the log got (as
they come for a model called over the network, else at the end).

Exit codes: 0 every sample graded and none in error, 1 a `--fail-under` not
met or any sample in error, 2 usage errors (130 when interrupted: what was
recorded is kept, and `--resume` continues).
"""

from __future__ import annotations

import signal
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from trunchbull import __version__
from trunchbull.common import lifetime
from trunchbull.common.diagnostics import UsageError
from trunchbull.common.gc_pause import gc_paused
from trunchbull.grading.command import check_fail_under, fail_under_verdict
from trunchbull.grading.grader import Graded
from trunchbull.grading.results import write_results
from trunchbull.grading.summary import summarize
from trunchbull.grading.summary_text import render_summary
from trunchbull.node.toolchain import toolchain
from trunchbull.release.loaded import LoadedRelease, load_release, runtime_layout
from trunchbull.run.cache import ResponseCache, as_cached, default_cache_path
from trunchbull.run.grading import RunGrading
from trunchbull.run.local_runtime import context_size, local_runtime, thread_count
from trunchbull.run.model_spec import ModelSpec, parse_model_spec
from trunchbull.run.progress import RunProgress
from trunchbull.run.samples import Sample, plan, select_cases
from trunchbull.run.sdk_bundle import sdk_bundle
from trunchbull.run.settings import DEFAULTS, SCHEDULING_ONLY, Filters, RunSettings, check_repeat
from trunchbull.run.target import resolve_target
from trunchbull.run.workers import WorkerPool, WorkerSetupError, local_model_plan, worker_count
from trunchbull.rundir.records import (
    RESPONSES,
    RESULTS,
    RUN_JSON,
    SUMMARY,
    RecordLog,
    drop_error_records,
    read_records,
    read_run_json,
    write_json,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
CACHE_FLUSH_S = 1.0
FORMAT = "trunchbull.run"

# command-line option → its run.json setting, for --resume's comparison
SETTING_FLAGS = {
    "temperature": "--temperature",
    "maxTokens": "--max-tokens",
    "topP": "--top-p",
    "seed": "--seed",
    "maxSteps": "--max-steps",
    "timeout": "--timeout",
    "toolTimeout": "--tool-timeout",
    "retries": "--retries",
    "concurrency": "-j/--concurrency",
}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class RunOptions:
    spec: ModelSpec
    settings: RunSettings
    filters: Filters
    repeat: int


def resolve_options(args, previous: dict | None) -> RunOptions:
    """The options of this run: what the command line gives, and, on
    --resume, what run.json recorded for everything it does not give. An
    option given that differs from the recorded run is a usage error naming
    each difference."""
    differences: list[str] = []

    def pick(flag: str, given, recorded, present: bool):
        if given is None:
            return recorded if present else None
        if present and given != recorded and flag:
            differences.append(f"{flag} {given!r} (the run has {recorded!r})")
        return given

    old = previous or {}
    old_settings = old.get("settings") or {}
    old_filters = old.get("filters") or {}
    has = previous is not None
    model = pick("--model", args.model, old.get("model"), has)
    if model is None:
        raise UsageError("--model SPEC is required (e.g. --model echo, --model openai:gpt-4o-mini)")
    base_url = pick("--base-url", args.base_url, old.get("baseUrl"), has)
    api_key_env = pick("", args.api_key_env, old.get("apiKeyEnv"), has)
    values: dict[str, Any] = {}
    for name, flag in SETTING_FLAGS.items():
        given = getattr(args, _arg_name(name))
        value = pick(
            flag if name not in SCHEDULING_ONLY else "", given, old_settings.get(name), has and name in old_settings
        )
        values[name] = value if value is not None else DEFAULTS.get(name)
    evals = pick("--eval", tuple(args.eval) if args.eval else None, tuple(old_filters.get("eval") or ()), has)
    cases = pick("--case", tuple(args.case) if args.case else None, tuple(old_filters.get("case") or ()), has)
    limit = pick("--limit", args.limit, old_filters.get("limit"), has)
    repeat = pick("--repeat", args.repeat, old.get("repeat"), has)
    repeat = 1 if repeat is None else repeat
    if differences:
        raise UsageError(
            "--resume: the command line differs from the run being resumed (run.json): "
            + "; ".join(differences)
            + ". Resume with the same options, or start a new run directory"
        )
    spec = parse_model_spec(model, base_url=base_url, api_key_env=api_key_env)
    settings = RunSettings(**{name: values[name] for name in SETTING_FLAGS})
    return RunOptions(spec, settings, Filters(tuple(evals or ()), tuple(cases or ()), limit), check_repeat(repeat))


def _arg_name(setting: str) -> str:
    return {"maxTokens": "max_tokens", "topP": "top_p", "maxSteps": "max_steps", "toolTimeout": "tool_timeout"}.get(
        setting, setting
    )


def _run_json(release: LoadedRelease, release_path: Path, options: RunOptions, samples: int) -> dict:
    spec = options.spec
    return {
        "format": FORMAT,
        "release": {
            "digest": release.digest,
            "title": release.title,
            "version": release.manifest.get("version"),
            "path": str(release_path),
        },
        "model": spec.text,
        "baseUrl": spec.base_url,
        "apiKeyEnv": spec.api_key_env,
        "settings": options.settings.to_json(),
        "filters": options.filters.to_json(),
        "repeat": options.repeat,
        "samples": samples,
        "trunchbull": __version__,
        "startedAt": _now(),
        "finishedAt": None,
    }


def _check_run_dir(run_dir: Path, resume: bool, rerun_errors: bool) -> dict | None:
    """The recorded run.json when resuming; None for a new run."""
    if rerun_errors and not resume:
        raise UsageError("--rerun-errors re-runs the failed samples of a run being resumed: add --resume")
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"{run_dir} exists and is not a directory")
    non_empty = run_dir.is_dir() and any(run_dir.iterdir())
    if not resume:
        if non_empty:
            raise UsageError(
                f"{run_dir} exists and is not empty: nothing is overwritten. Continue that run with "
                "--resume, or choose a new directory"
            )
        return None
    if not non_empty:
        raise UsageError(f"--resume: {run_dir} holds no run to resume")
    previous = read_run_json(run_dir)
    if previous.get("format") != FORMAT:
        raise UsageError(f"--resume: {run_dir / RUN_JSON} is not a trunchbull run")
    return previous


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run_command(args) -> int:
    previous_term = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops a run like Ctrl-C
    try:
        with gc_paused():
            return _run(args)
    finally:
        signal.signal(signal.SIGTERM, previous_term)


def _run(args) -> int:
    check_fail_under(args.fail_under)
    run_dir: Path = args.out
    previous = _check_run_dir(run_dir, args.resume, args.rerun_errors)
    options = resolve_options(args, previous)
    code, release_path = resolve_target(args.target, as_json=args.json)
    if release_path is None:
        return code
    release = load_release(release_path)
    if previous is not None and (previous.get("release") or {}).get("digest") != release.digest:
        raise UsageError(
            f"--resume: {args.target} is release {release.digest}, but the run being resumed ran "
            f"{(previous.get('release') or {}).get('digest')}; resume against the same release"
        )
    identity = options.spec.identity()
    meta: dict = {}
    with lifetime.scratch_dir("trunchbull-run-") as workdir:
        # The workers take ~0.4 s to start (Node, the AI SDK, the tool
        # modules). A hosted model's start before the cases are parsed and the
        # samples planned, which on a big release takes about as long; a local
        # model's wait for the plan, since how many there are depends on how
        # many samples are left to run.
        pool = None if options.spec.local else _spawn_pool(release, options, workdir, None)
        try:
            cases = select_cases(release, options.filters)
            samples = plan(release, cases, options.repeat, identity, options.settings, keyed=not args.no_cache)
            log_path = run_dir / RESPONSES
            recorded = read_records(log_path, drop_torn=True) if previous is not None else None
            rerun = drop_error_records(log_path, recorded) if recorded is not None and args.rerun_errors else 0
            done = recorded.records if recorded is not None else {}
            todo = [s for s in samples if (s.case_id, s.repeat) not in done]
            grading = RunGrading(release, run_dir, done, as_recorded=options.spec.remote)
            cache = None if args.no_cache else ResponseCache(default_cache_path())
            try:
                hits = cache.lookup([s.key for s in todo if s.key is not None]) if cache is not None and todo else {}
                to_run = [s for s in todo if s.key not in hits]
                if not to_run and pool is not None:  # every sample is recorded or cached
                    pool.kill_all()
                    pool = None
                elif to_run and pool is None:
                    pool = _spawn_pool(release, options, workdir, len(to_run))
                if pool is not None:
                    _wait_ready(pool, options.spec)
                if previous is None:
                    run_dir.mkdir(parents=True, exist_ok=True)
                    meta = _run_json(release, release_path, options, len(samples))
                else:
                    meta = {**previous, "finishedAt": None, "resumes": int(previous.get("resumes") or 0) + 1}
                described = _describe_model(pool, identity) if pool is not None else None
                if described is not None:
                    meta["modelInfo"] = described
                write_json(run_dir / RUN_JSON, meta)
                interrupted = _record(
                    run_dir, samples, todo, hits, to_run, pool, cache, options, done, rerun, grading, quiet=args.json
                )
            finally:
                if cache is not None:
                    cache.close()
        except BaseException:
            if pool is not None:
                pool.kill_all()
                pool = None
            raise
        finally:
            if pool is not None:
                pool.close()
                if pool.warnings:
                    meta["warnings"] = list(dict.fromkeys([*(meta.get("warnings") or []), *pool.warnings]))
    if interrupted:
        return EXIT_INTERRUPTED
    return _grade_and_report(run_dir, samples, *grading.finish(samples), options, meta, args)


def _describe_model(pool: WorkerPool, identity: dict) -> dict | None:
    """What a model that describes itself said when its workers were ready (a
    local model: its file, size, context, threads, load time), with the
    workers' count and resident memory; printed once and kept in run.json."""
    infos = pool.ready_info()
    described = [info["model"] for info in infos if info.get("model")]
    if not described:
        return None
    rss = [info["rssBytes"] for info in infos if isinstance(info.get("rssBytes"), int)]
    out = {
        **described[0],
        "model": identity["model"],
        "workers": len(infos),
        "loadMs": max(d.get("loadMs") or 0 for d in described),
        "rssBytesPerWorker": max(rss) if rss else None,
    }

    def mb(n: object) -> str:
        return f"{n / 1e6:,.0f} MB" if isinstance(n, (int, float)) else "?"

    threads = out.get("threads")
    print(
        f"trunchbull: {out.get('file') or identity['model']} loaded in {out['workers']} worker(s)"
        + (f" × {threads} thread(s)" if threads else "")
        + f" in {out['loadMs'] / 1000:.1f} s"
        + (f"; context {out['contextSize']:,} tokens" if out.get("contextSize") else "")
        + (f"; memory: {mb(out['rssBytesPerWorker'])} resident per worker" if rss else "")
        + (f", {mb(out['sizeBytes'])} of weights memory-mapped (shared)" if out.get("sizeBytes") else "")
        + ("" if out.get("toolCalls", True) else "; its chat template cannot call tools"),
        file=sys.stderr,
    )
    return out


def _spawn_pool(release: LoadedRelease, options: RunOptions, workdir: Path, samples: int | None) -> WorkerPool:
    """The run's workers, started (not yet ready). `samples`: how many are
    left to run (a local model's plan needs it; None for a hosted model)."""
    layout = runtime_layout(release, workdir)
    tools = {}
    for tool in release.manifest.get("tools") or []:
        bundle = layout.bundle(tool["bundle"])
        if bundle is not None:
            tools[tool["name"]] = {
                "module": str(bundle),
                "description": tool["description"],
                "inputSchema": tool["inputSchema"],
            }
    settings = options.settings
    spec = options.spec
    tc = toolchain()
    model = spec.for_worker()
    sdk = sdk_bundle(tc, spec.provider)
    read_paths = [*layout.read_paths, *spec.read_paths(), sdk]
    size, per_worker = worker_count(settings.concurrency), None
    node_flags: tuple[str, ...] = ()
    if spec.local:  # installed on first use; one model instance per worker, one sample at a time on each
        runtime = local_runtime(tc)
        assert samples is not None
        size, threads = local_model_plan(settings.concurrency, samples)
        model.update(runtime=str(runtime.root), threads=thread_count(threads), contextSize=context_size())
        read_paths += runtime.read_paths()
        node_flags, per_worker = runtime.node_flags, 1
    config = {
        "sdk": str(sdk),
        "model": model,
        "settings": settings.call_settings(),
        "maxSteps": settings.maxSteps,
        "timeoutMs": int(settings.timeout * 1000),
        "toolTimeoutMs": int(settings.toolTimeout * 1000),
        "retries": settings.retries,
        "tools": tools,
    }
    pool = WorkerPool(
        tc,
        config,
        read_paths,
        spec.worker_env(),
        size=size,
        concurrency=settings.concurrency,
        cwd=layout.modules_dir,
        timeout_s=settings.timeout,
        tool_timeout_s=settings.toolTimeout,
        node_flags=node_flags,
        per_worker=per_worker,
        on_warning=lambda text: print(f"trunchbull: warning: {text}", file=sys.stderr),
    )
    pool.spawn()
    return pool


def _wait_ready(pool: WorkerPool, spec: ModelSpec) -> None:
    """Until every worker has made the model (the pool is killed if one cannot)."""
    try:
        pool.wait_ready()
    except WorkerSetupError as err:
        pool.kill_all()
        raise UsageError(f"--model {spec.text}: the model cannot be made: {err}") from None


def _record(
    run_dir: Path,
    samples: list[Sample],
    todo: list[Sample],
    hits: dict[str, bytes],
    to_run: list[Sample],
    pool: WorkerPool | None,
    cache: ResponseCache | None,
    options: RunOptions,
    done: dict,
    rerun: int,
    grading: RunGrading,
    quiet: bool,
) -> bool:
    """Record cached samples, then run the rest (each record appended to the
    log is also handed to `grading`); True when interrupted."""
    errors_before = sum(1 for row in done.values() if row.get("error"))
    progress = RunProgress(len(samples), len(samples) - len(todo), errors_before, enabled=False if quiet else None)
    secret = options.spec.secret
    secret_bytes = secret.encode() if secret else None
    log = RecordLog(run_dir / RESPONSES)
    flushed = [time.monotonic()]

    def on_record(sample: Sample, kind: str | None, record: bytes) -> None:
        if secret_bytes and secret_bytes in record:
            record = record.replace(secret_bytes, b"[redacted]")
        log.append(record + b"\n")
        grading.add(sample, record)
        if kind is None and cache is not None and sample.key is not None:
            cache.put(sample.key, record)
            now = time.monotonic()
            if now - flushed[0] >= CACHE_FLUSH_S:
                flushed[0] = now
                cache.flush()
        progress.sample_done(kind is not None)

    def after_records() -> None:
        log.flush()
        grading.grade_some()

    try:
        for sample in todo:
            stored = hits.get(sample.key) if sample.key is not None else None
            if stored is not None:
                record = as_cached(stored, sample.case_id, sample.repeat)
                log.append(record + b"\n")
                grading.add(sample, record)
                progress.sample_done(False)
        log.flush()
        if pool is not None:
            pool.run(to_run, on_record, after_records=after_records)
    except KeyboardInterrupt:
        if pool is not None:
            pool.kill_all()
        progress.finish()
        log.close()
        print(
            f"trunchbull: interrupted; {progress.done:,} of {len(samples):,} samples are recorded in {run_dir}. "
            f"Continue with: trunchbull run … -o {run_dir} --resume",
            file=sys.stderr,
        )
        return True
    progress.finish()
    log.close()
    if rerun:
        print(f"re-ran {rerun:,} sample(s) that had ended in error", file=sys.stderr)
    return False


def _grade_and_report(
    run_dir: Path,
    samples: list[Sample],
    graded: Graded,
    records: dict,
    options: RunOptions,
    meta: dict,
    args,
) -> int:
    usages: list[dict | None] = []
    latencies: list[float | None] = []
    for sample in samples:
        row = records.get((sample.case_id, sample.repeat))
        usages.append(row.get("usage") if row is not None else None)
        latencies.append(row.get("latencyMs") if row is not None else None)
    write_results(run_dir / RESULTS, graded.results)
    summary = summarize(graded.release.manifest, graded.results, usages, latencies, repeats=options.repeat)
    summary["model"] = options.spec.text
    write_json(run_dir / SUMMARY, summary)
    meta["finishedAt"] = _now()
    write_json(run_dir / RUN_JSON, meta)

    overall = summary["overall"]
    code = EXIT_FAILED if overall["errors"] else EXIT_OK
    met = None
    verdict = None
    if args.fail_under is not None:
        met, verdict = fail_under_verdict(summary, args.fail_under, noun="sample")
        if not met:
            code = EXIT_FAILED
    if args.json:
        out = {
            **summary,
            "runDir": str(run_dir),
            "failUnder": None if args.fail_under is None else {"rate": args.fail_under, "met": met},
            "exitCode": code,
        }
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(render_summary(summary))
        print(f"run: {run_dir}")
    if overall["errors"]:
        print(
            f"trunchbull: {overall['errors']:,} sample(s) ended in error (infrastructure failures); see "
            f"{run_dir / RESULTS} and re-run them with --resume --rerun-errors",
            file=sys.stderr,
        )
    if verdict:
        print(verdict, file=sys.stderr)
    return code
