"""`trunchbull diff A B`: cases and tools added, removed and changed between two releases."""

from __future__ import annotations

from trunchbull.release.files import ReleaseFiles, load_cases


def diff(a: ReleaseFiles, b: ReleaseFiles) -> dict:
    """Cases and tools added, removed and changed (with the changed fields)."""
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
                changed.append({"id": key, "fields": fields})
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
