"""The samples of a run (SPEC §8.2, §8.5): the release's cases after the
filters, each repeated K times; what each sample sends to its worker (never
the case's `data`), and its response-cache key (SPEC §8.4)."""

from __future__ import annotations

import fnmatch
import hashlib
import re
from dataclasses import dataclass

import orjson

from trunchbull.common.diagnostics import UsageError
from trunchbull.common.ids import suggest
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.settings import Filters, RunSettings
from trunchbull.release.tool_offers import entries_key, offered_name, release_name


@dataclass(slots=True)
class Sample:
    k: int  # the sample's number in this run (release order × repeat)
    case: dict
    repeat: int
    key: str | None  # response-cache key (None in a run without the cache)

    @property
    def case_id(self) -> str:
        return self.case["id"]

    def request(self) -> bytes:
        """The worker's request line: what the model is sent, no more."""
        case = self.case
        return (
            orjson.dumps(
                {
                    "k": self.k,
                    "caseId": case["id"],
                    "repeat": self.repeat,
                    "system": case.get("systemPrompt"),
                    "prompt": case["prompt"],
                    "tools": case.get("tools") or [],
                }
            )
            + b"\n"
        )


def select_cases(release: LoadedRelease, filters: Filters) -> list[dict]:
    """Cases in release order: `--eval` values and `--case` globs are each a
    union, the two flags together an intersection; then the first `--limit`."""
    eval_ids = release.manifest.eval_ids
    for wanted in filters.evals:
        if wanted not in eval_ids:
            near = suggest(wanted, eval_ids)
            raise UsageError(
                f"--eval {wanted!r}: the release has no such eval"
                + (f" (did you mean {near!r}?)" if near else f"; evals: {', '.join(eval_ids[:20])}")
            )
    cases = release.cases
    if filters.evals:
        chosen = set(filters.evals)
        cases = [c for c in cases if c["evalId"] in chosen]
    if filters.cases:
        pattern = re.compile("|".join(f"(?:{fnmatch.translate(glob)})" for glob in filters.cases))
        cases = [c for c in cases if pattern.match(c["id"])]
    if filters.limit is not None:
        cases = cases[: filters.limit]
    if not cases:
        raise UsageError("no case of the release matches the filters (--eval, --case, --limit)")
    return cases


def cache_document(
    model_identity: dict, settings: RunSettings, case: dict, offered_tools: list[dict], repeat: int
) -> dict:
    """What a sample's cache key is the SHA-256 of, as canonical JSON (SPEC §8.4)."""
    return {
        "provider": model_identity["provider"],
        "model": model_identity["model"],
        "baseUrl": model_identity["baseUrl"],
        "settings": settings.call_settings(),
        "maxSteps": settings.maxSteps,
        "system": case.get("systemPrompt"),
        "prompt": case["prompt"],
        "tools": offered_tools,
        "repeat": repeat,
    }


def offered_tools(release_tools: dict[str, dict], entries) -> list[dict]:
    """The cache key's part for a case's tools: each as offered (a tool offered under another
    name also names its release tool, so a plain tool's entry is what it always was)."""
    out = []
    for entry in entries:
        tool = release_tools.get(release_name(entry))
        if tool is None:
            continue
        offered = {
            "name": offered_name(entry),
            "description": tool.get("description"),
            "inputSchema": tool.get("inputSchema"),
            "bundle": tool.get("bundle"),
        }
        if not isinstance(entry, str):
            offered["tool"] = entry["tool"]
        out.append(offered)
    return out


def plan(
    release: LoadedRelease,
    cases: list[dict],
    repeat: int,
    model_identity: dict,
    settings: RunSettings,
    keyed: bool = True,
) -> list[Sample]:
    """Every (case, repeat) in release order, with its cache key unless not
    `keyed` (--no-cache: 25,000 keys take ~0.17 s). The key's canonical JSON
    (cache_document, keys sorted) is assembled from pieces, so the parts
    shared by every sample of a case are encoded once."""
    if not keyed:
        pairs = [(case, r) for case in cases for r in range(repeat)]
        return [Sample(k, case, r, None) for k, (case, r) in enumerate(pairs)]
    tools = {t["name"]: t for t in release.manifest.tools}
    dumps, sha256, sort = orjson.dumps, hashlib.sha256, orjson.OPT_SORT_KEYS
    head = (
        b'{"baseUrl":'
        + dumps(model_identity["baseUrl"])
        + b',"maxSteps":'
        + dumps(settings.maxSteps)
        + b',"model":'
        + dumps(model_identity["model"])
        + b',"prompt":'
    )
    provider = b',"provider":' + dumps(model_identity["provider"]) + b',"repeat":'
    call_settings = b',"settings":' + dumps(settings.call_settings(), option=sort) + b',"system":'
    offered: dict[tuple, bytes] = {}
    samples = []
    k = 0
    for case in cases:
        entries = case.get("tools") or ()
        names = entries_key(entries)
        tool_part = offered.get(names)
        if tool_part is None:
            tool_part = offered[names] = b',"tools":' + dumps(offered_tools(tools, entries), option=sort) + b"}"
        before = head + dumps(case["prompt"]) + provider
        after = call_settings + dumps(case.get("systemPrompt")) + tool_part
        for r in range(repeat):
            samples.append(Sample(k, case, r, sha256(before + b"%d" % r + after).hexdigest()))
            k += 1
    return samples
