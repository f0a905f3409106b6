"""`trunchbull run … --dry-run` (SPEC §8.7): what a run would do, without
calling any model or writing anything: the samples planned, how many the
run directory (on --resume) and the response cache already hold, the
estimated input tokens and cost of the rest.

The estimator: a sample's first model call sends its system prompt, its
prompt and its tools' definitions (name, description, JSON Schema); their
characters divided by 4, rounded up (the rule of thumb for English text
with OpenAI-style tokenizers, and exactly what the echo model counts). It
is a lower bound for samples with tool loops (each step resends the
conversation) and ignores the provider's message framing. Output tokens
cannot be known before the call: the cost of input is estimated, and with
`--max-tokens` an upper bound on output per call is shown."""

from __future__ import annotations

import sqlite3
import sys
from math import ceil
from pathlib import Path

import orjson

from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.samples import Sample, offered_tools
from trunchbull.run.judge_options import JudgeSetup
from trunchbull.run.judge_plan import judge_plan, judge_plan_lines
from trunchbull.rundir.judgments import read_judgments
from trunchbull.rundir.layout import JUDGMENTS, RESPONSES
from trunchbull.rundir.log import read_records
from trunchbull.stats.run_stats import rounded

CHARS_PER_TOKEN = 4


def token_estimator(release: LoadedRelease):
    """estimate(sample) → estimated input tokens of its first call (memoized per case)."""
    tools = {t["name"]: t for t in release.manifest.tools}
    memo: dict[str, int] = {}

    def estimate(sample: Sample) -> int:
        case = sample.case
        known = memo.get(case["id"])
        if known is None:
            offered = offered_tools(tools, case.get("tools") or [])
            chars = len(case.get("systemPrompt") or "") + len(case["prompt"])
            chars += sum(len(orjson.dumps({k: t[k] for k in ("name", "description", "inputSchema")})) for t in offered)
            known = memo[case["id"]] = ceil(chars / CHARS_PER_TOKEN)
        return known

    return estimate


def cached_keys(path: Path, keys: list[str]) -> set[str]:
    """The keys the response cache holds, read without creating or changing it."""
    if not keys or not path.is_file():
        return set()
    found: set[str] = set()
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                found.update(
                    k
                    for (k,) in db.execute(
                        f"SELECT key FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk
                    )
                )
        finally:
            db.close()
    except sqlite3.Error:
        return set()
    return found


def dry_run(
    release: LoadedRelease,
    samples: list[Sample],
    run_dir: Path,
    resuming: bool,
    cache_path: Path | None,
    price,
    max_tokens: int | None,
    model: str,
    as_json: bool,
    judges: JudgeSetup | None = None,
    rerun_errors: bool = False,
    batch: bool = False,
) -> int:
    """`judges`: the run's judges, when it grades model-graded kinds (judge_plan.py)."""
    done = read_records(run_dir / RESPONSES).records if resuming else {}  # read only: a torn line is left as it is
    todo = [s for s in samples if (s.case_id, s.repeat) not in done]
    hits = cached_keys(cache_path, [s.key for s in todo if s.key]) if cache_path is not None else set()
    to_run = [s for s in todo if s.key not in hits]
    estimate = token_estimator(release)
    tokens = sum(estimate(s) for s in to_run)
    per_token = price.per_token(batch) if price is not None else None
    cost_input = None if per_token is None else tokens * per_token["input"]
    cost_max = (
        None if per_token is None or max_tokens is None else cost_input + len(to_run) * max_tokens * per_token["output"]
    )
    out = {
        "dryRun": True,
        "model": model,
        "samples": len(samples),
        "recorded": len(samples) - len(todo),
        "cached": len(todo) - len(to_run),
        "toRun": len(to_run),
        "estimatedInputTokens": tokens,
        "estimator": "characters of system prompt, prompt and tool definitions / 4, rounded up, per sample",
        "price": None if price is None else price.to_json(),
        "batch": batch,
        "estimatedInputCost": rounded(cost_input),
        "maxCostWithMaxTokens": rounded(cost_max),
    }
    if judges is not None:
        recorded = read_judgments(run_dir / JUDGMENTS) if resuming else {}
        lookup = None if cache_path is None else lambda keys: cached_keys(cache_path, keys)
        out["judges"] = judge_plan(release, samples, judges, done, recorded, lookup, rerun_errors)
    if as_json:
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    print(f"dry run: {model} on {release.title} ({release.digest}); no model is called, nothing is written")
    print(
        f"  samples planned {len(samples):,}: {out['recorded']:,} recorded already, {out['cached']:,} in the "
        f"response cache, {len(to_run):,} to run"
    )
    print(f"  estimated input tokens {tokens:,} (characters / {CHARS_PER_TOKEN} of system prompt, prompt and tools)")
    if price is None:
        print("  estimated cost: unknown (no price for this model; give one with --prices FILE)")
    else:
        rate = price.rates(batch)[0]
        line = f"  estimated cost of input ${cost_input:.4f} at ${rate:g} per million tokens"
        line += " (the batch rate)" if batch else ""
        if cost_max is not None:
            line += f"; with output at most --max-tokens {max_tokens:,} per sample: ≤ ${cost_max:.4f}"
        else:
            line += " (output unknown before the call; --max-tokens bounds it)"
        print(line)
    for line in judge_plan_lines(out.get("judges") or {}):
        print(line)
    return 0
