"""The run's Node workers, set up (SPEC §8.2): what each is told (the model,
the call settings, the release's tools), how many there are, and what a model
that describes itself said once they were ready."""

from __future__ import annotations

import sys
from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.node.toolchain import toolchain
from trunchbull.node.worker_pool import pool_size
from trunchbull.release.loaded import LoadedRelease, runtime_layout
from trunchbull.run.local_runtime import context_size, local_runtime, thread_count
from trunchbull.run.model_spec import ModelSpec
from trunchbull.run.options import RunOptions
from trunchbull.run.sdk_bundle import sdk_bundle
from trunchbull.run.scheduling import local_model_plan, worker_count
from trunchbull.run.workers import ModelCallerPool, WorkerSetupError
from trunchbull.rundir.schema import MAX_RECORD_BYTES

REPLY_LIMIT_BYTES = 16 << 20  # one HTTP reply, decoded (js/run/http.mjs): past it, `response-too-large`


def reply_limit(max_response_bytes: int) -> int:
    """The most bytes one reply may have: 16 MiB, or room for a model text
    at its limit written as JSON escapes (up to 6 bytes a byte) if that is more."""
    return max(REPLY_LIMIT_BYTES, 6 * max_response_bytes + (1 << 20))


def describe_model(pool: ModelCallerPool, identity: dict) -> dict | None:
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


def spawn_pool(
    release: LoadedRelease,
    options: RunOptions,
    workdir: Path,
    samples: int | None,
    prices: dict | None = None,
    with_tools: bool = True,
) -> ModelCallerPool:
    """The run's workers, started (not yet ready). `samples`: how many are
    left to run (a local model's plan needs it; None for a hosted model);
    `prices`: USD per token (input, output, cachedInput) for each record's
    cost, None when the model's price is unknown; `with_tools` False: no
    tool executors (a judge's workers, run/judge_runner.py)."""
    layout = runtime_layout(release, workdir)
    tools = {}
    for tool in release.manifest.tools if with_tools else ():
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
    batch = options.batch is not None
    # batch mode: the replies come from the batches (run/batch/), so the workers need the AI
    # SDK alone, and hold no key
    sdk = sdk_bundle(tc, None if batch else spec.provider)
    read_paths = [*spec.read_paths(), sdk]  # the model caller reads no benchmark file
    tool_paths = [*layout.read_paths, sdk]
    size, per_worker = worker_count(settings.concurrency), None
    if batch:  # the batch caller and this process take a core of their own while results stream in
        size = max(1, min(size, pool_size() - 1))
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
        "toolchainAi": str(tc.ai_package.resolve()),
        "model": model,
        "settings": settings.call_settings(),
        "maxSteps": settings.maxSteps,
        "timeoutMs": int(settings.timeout * 1000),
        "toolTimeoutMs": int(settings.toolTimeout * 1000),
        "retries": settings.retries,
        "maxRecordBytes": MAX_RECORD_BYTES,
        "maxResponseBytes": settings.maxResponseBytes,
        "maxToolResultBytes": settings.maxToolResultBytes,
        "maxReplyBytes": reply_limit(settings.maxResponseBytes),
        "tools": tools,
        "prices": prices,
        "batch": batch,
    }
    pool = ModelCallerPool(
        tc,
        config,
        read_paths,
        {} if batch else spec.worker_env(),
        tool_paths=tool_paths,
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


def wait_ready(pool: ModelCallerPool, spec: ModelSpec, flag: str = "--model") -> None:
    """Until every worker has made the model (the pool is killed if one cannot)."""
    try:
        pool.wait_ready()
    except WorkerSetupError as err:
        pool.kill_all()
        raise UsageError(f"{flag} {spec.text}: the model cannot be made: {err}") from None
