"""A case's `tools` entries: a tool name, or `{tool, as}`, a release tool offered to the model
under another name (docs/authoring.md, "Offering a tool under another name").

The name offered (`as`) is what the model sees and calls, what recorded calls carry and what
tool_call_syntax plans name; the release tool (`tool`) gives the description, schema and
`execute`. Release tool names stay unique across the release (the seed's rule); offered names
only need to be unique within one case, so two cases may offer different tools under one name
(as benchmarks such as BFCL do, whose function names repeat with different definitions)."""

from __future__ import annotations

from typing import Iterable

OFFER_KEYS = ("tool", "as")


def offered_name(entry: str | dict) -> str:
    return entry if isinstance(entry, str) else entry["as"]


def release_name(entry: str | dict) -> str:
    return entry if isinstance(entry, str) else entry["tool"]


def offered_names(entries: Iterable[str | dict]) -> list[str]:
    return [offered_name(e) for e in entries]


def tools_by_offered_name(entries: Iterable[str | dict]) -> dict[str, str]:
    """offered name → release tool name."""
    return {offered_name(e): release_name(e) for e in entries}


def entries_key(entries: Iterable[str | dict]) -> tuple:
    """A hashable key of a tools list (same key, same offer)."""
    return tuple(e if isinstance(e, str) else (e["tool"], e["as"]) for e in entries)
