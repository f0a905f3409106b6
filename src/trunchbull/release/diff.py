"""`trunchbull diff A B`: cases and tools added, removed and changed between
two releases, each changed field with its old and new value."""

from __future__ import annotations

import json

from trunchbull.release.files import ReleaseFiles, load_cases

SHOWN = 96  # characters of a value shown in the text output
BEFORE = 32  # of them, before the first difference when a value is cut


def diff(a: ReleaseFiles, b: ReleaseFiles) -> dict:
    """Cases and tools added, removed and changed (the changed fields, with
    their values in A and B)."""
    cases_a = {c["id"]: c for c in load_cases(a)}
    cases_b = {c["id"]: c for c in load_cases(b)}
    tools_a = {t["name"]: t for t in a.manifest.tools}
    tools_b = {t["name"]: t for t in b.manifest.tools}

    def changes(old: dict, new: dict, ignore: set[str]) -> list[dict]:
        changed = []
        for key in sorted(set(old) & set(new)):
            fields = sorted(
                f for f in set(old[key]) | set(new[key]) if f not in ignore and old[key].get(f) != new[key].get(f)
            )
            if fields:
                values = {f: {"a": old[key].get(f), "b": new[key].get(f)} for f in fields}
                changed.append({"id": key, "fields": fields, "values": values})
        return changed

    return {
        "digest": {"a": a.manifest.data.get("digest"), "b": b.manifest.data.get("digest")},
        "cases": {
            "added": sorted(set(cases_b) - set(cases_a)),
            "removed": sorted(set(cases_a) - set(cases_b)),
            "changed": changes(cases_a, cases_b, {"source"}),
        },
        "tools": {
            "added": sorted(set(tools_b) - set(tools_a)),
            "removed": sorted(set(tools_a) - set(tools_b)),
            "changed": changes(tools_a, tools_b, {"bundle"}),
        },
    }


def one_line(value: object) -> str:
    """A value on one line: JSON, keys in the release's order, non-ASCII as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def changed_values(change: dict) -> str:
    """The lines under `~ case ID: fields`: each field's old (-) and new (+)
    value, cut to a window around their first difference when long."""
    width = max(len(f) for f in change["fields"])
    lines = []
    for field in change["fields"]:
        old, new = (one_line(change["values"][field][side]) for side in ("a", "b"))
        old, new = _window(old, new)
        lines.append(f"    {field.ljust(width)}  - {old}")
        lines.append(f"    {' ' * width}  + {new}")
    return "\n".join(lines)


def _window(old: str, new: str) -> tuple[str, str]:
    if max(len(old), len(new)) <= SHOWN:
        return old, new
    first = next((i for i, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new)))
    start = max(0, first - BEFORE)

    def cut(text: str) -> str:
        part = text[start : start + SHOWN]
        return ("…" if start else "") + part + ("…" if start + SHOWN < len(text) else "")

    return cut(old), cut(new)
