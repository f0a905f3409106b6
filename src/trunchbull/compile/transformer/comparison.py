"""The two runs of a transformer compared (SPEC §3.7): their canonical
outputs must be byte-identical; otherwise the first differing case and field
is reported."""

from __future__ import annotations

from typing import Callable

import orjson

SHORT = 80
Error = Callable[..., None]  # error(code, message, hint, path="")


def _short(value: object) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = orjson.dumps(value).decode()
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


_ABSENT = object()


def first_difference(a: object, b: object, path: str = "") -> tuple[str, object, object] | None:
    """The first path (sorted keys, array order) where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                return sub, a.get(key, _ABSENT), b.get(key, _ABSENT)
            found = first_difference(a[key], b[key], sub)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(a) or i >= len(b):
                return sub, a[i] if i < len(a) else _ABSENT, b[i] if i < len(b) else _ABSENT
            found = first_difference(a[i], b[i], sub)
            if found:
                return found
        return None
    if type(a) is not type(b) or a != b:
        return path or "(whole value)", a, b
    return None


def canonical(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def report_nondeterministic(error: Error, who: str, first: dict, second: dict) -> None:
    hint = (
        "transform must depend only on its sources: the two runs differ in working directory, TZ, LANG/LC_ALL, "
        "HOME, USER, environment order, umask and clock, and Math.random() differs anyway"
    )
    a, b = first["value"], second["value"]
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                longer = a if i < len(a) else b
                case_id = longer[i].get("id") if isinstance(longer[i], dict) else None
                error(
                    "transformer-nondeterministic",
                    f"{who} is not deterministic: run 1 returned {len(a)} cases, run 2 returned {len(b)}; "
                    f"first differing case: index {i} (id {case_id!r}, present in run {1 if i < len(a) else 2} only)",
                    hint,
                    path=f"result[{i}]",
                )
                return
            found = first_difference(a[i], b[i])
            if found:
                field_path, va, vb = found
                ids = [c.get("id") if isinstance(c, dict) else None for c in (a[i], b[i])]
                case_id = repr(ids[0]) if ids[0] == ids[1] else f"{ids[0]!r} in run 1, {ids[1]!r} in run 2"
                error(
                    "transformer-nondeterministic",
                    f"{who} is not deterministic: case {i} (id {case_id}) differs in field {field_path}: "
                    f"run 1 gave {_short(va)}, run 2 gave {_short(vb)}",
                    hint,
                    path=f"result[{i}]",
                )
                return
    found = first_difference(first, second)
    field_path, va, vb = found or ("(output)", None, None)
    error(
        "transformer-nondeterministic",
        f"{who} is not deterministic: the output differs at {field_path}: run 1 gave {_short(va)}, "
        f"run 2 gave {_short(vb)}",
        hint,
    )
