"""`trunchbull run … --batch` (SPEC §8.8): what run/command.py calls
instead of sending each sample to the workers: the cached samples are
recorded, the batch caller (caller.py) is started (beside the run's workers
when a case has tools: else the caller takes the replies itself),
the journal (rundir/batch_journal.py) is opened and each sample's loop
rebuilt from it, and the rounds (rounds.py) run until every sample is
recorded."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from trunchbull.node.toolchain import toolchain
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.batch.caller import BatchCaller
from trunchbull.run.batch.loops import rebuilt_loops
from trunchbull.run.batch.rounds import BatchRun
from trunchbull.run.budget import Budget
from trunchbull.run.cache import ResponseCache
from trunchbull.run.grading import RunGrading
from trunchbull.run.options import RunOptions
from trunchbull.run.providers import PROVIDERS
from trunchbull.run.recording import Recorder, interrupted_message
from trunchbull.run.samples import Sample
from trunchbull.run.sdk_bundle import sdk_bundle
from trunchbull.run.worker_setup import reply_limit
from trunchbull.run.workers import ModelCallerPool
from trunchbull.rundir.schema import MAX_RECORD_BYTES
from trunchbull.rundir.writer import RunDirWriter
from trunchbull.common.invocation import resume_command

LEFT_LIVE = (
    " The batches sent go on at the provider (and are billed): --resume re-attaches to them; "
    "--resume --cancel-batches cancels them."
)


def caller_config(release: LoadedRelease, options: RunOptions, sdk: Path, prices: dict | None) -> dict:
    """What js/run/batch.mjs is told: the provider, the tools' definitions, the call settings, and
    for the replies it takes through generateText itself, what a model caller is told of them."""
    manifest_tools = release.manifest.tools
    tools = {t["name"]: {"description": t["description"], "inputSchema": t["inputSchema"]} for t in manifest_tools}
    settings = options.settings
    return {
        "sdk": str(sdk),
        "model": options.spec.for_worker(),
        "tools": tools,
        "settings": settings.call_settings(),
        "retries": settings.retries,
        "maxReplyBytes": reply_limit(settings.maxResponseBytes),
        "maxItemBytes": MAX_RECORD_BYTES,
        "prices": prices,
        "maxSteps": settings.maxSteps,
        "timeoutMs": int(settings.timeout * 1000),
        "maxResponseBytes": settings.maxResponseBytes,
        "maxRecordBytes": MAX_RECORD_BYTES,
    }


def tool_sizes(release: LoadedRelease) -> dict[str, int]:
    """Each release tool's definition, in bytes as a request carries it (name, description, schema)."""
    keys = ("name", "description", "inputSchema")
    return {t["name"]: len(orjson.dumps({k: t.get(k) for k in keys})) for t in release.manifest.tools}


def record_in_batches(
    writer: RunDirWriter,
    release: LoadedRelease,
    samples: list[Sample],
    todo: list[Sample],
    hits: dict[str, bytes],
    to_run: list[Sample],
    pool: ModelCallerPool | None,
    cache: ResponseCache | None,
    options: RunOptions,
    done: dict,
    grading: RunGrading,
    quiet: bool,
    workdir: Path,
    budget: Budget | None = None,
    prices: dict | None = None,
) -> bool:
    """Record the cached samples, then run the rest in batches; True when interrupted (or cancelled)."""
    mode = options.batch
    assert mode is not None
    recorder = Recorder(writer, samples, todo, done, cache, options, grading, quiet, budget, priced=prices is not None)
    recorder.cached(todo, hits)
    journal = writer.batch_journal()
    tc = toolchain()
    sdk = sdk_bundle(tc, options.spec.provider)
    caller = BatchCaller(
        tc,
        caller_config(release, options, sdk, prices),
        options.spec.worker_env(),
        [sdk],
        workdir,
        options.settings.timeout,
    )
    if to_run:
        caller.spawn()
    try:
        if to_run:
            limits = PROVIDERS[options.spec.provider].batch
            assert limits is not None
            batch_run = BatchRun(
                caller=caller,
                pool=pool,
                journal=journal,
                loops=rebuilt_loops(journal.state, to_run),
                recorder=recorder,
                retries=options.settings.retries,
                limits=limits,
                tool_bytes=tool_sizes(release),
                poll_s=mode.poll,
                budget=budget,
            )
            batch_run.run(mode.cancel)
            if mode.cancel:
                left = len(batch_run.loops)
                print(
                    f"trunchbull: the run's batches are cancelled and what they finished is recorded; {left:,} "
                    f"sample(s) are not. Continue with: {resume_command(writer.path)}",
                    file=sys.stderr,
                )
                recorder.close()
                return True
    except KeyboardInterrupt:
        caller.kill()
        if pool is not None:
            pool.kill_all()
        recorder.close()
        print(interrupted_message(recorder.progress.done, len(samples), writer.path) + "." + LEFT_LIVE, file=sys.stderr)
        return True
    finally:
        caller.close()
        journal.close()
        for warning in caller.warnings:  # (the AI SDK's, on the requests: kept in run.json with the workers')
            if pool is not None and warning not in pool.warnings:
                pool.warnings.append(warning)
                print(f"trunchbull: warning: {warning}", file=sys.stderr)
    recorder.close()
    return False
