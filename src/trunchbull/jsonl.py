"""JSON Lines read defensively (responses files for `grade`, a run's records
for `run --resume`): each line parsed once, in place (a memoryview of the
file's bytes, so a long line is never copied), with every way a line can be
hostile reported against its line number:

  * not UTF-8, NUL or other control bytes, NaN / Infinity literals, invalid
    JSON (orjson rejects them);
  * longer than MAX_LINE_BYTES (never parsed: memory stays bounded);
  * nested deeper than MAX_DEPTH (orjson alone stops only at 1024);
  * an object with a duplicate key (orjson keeps the last one silently);
  * a torn last line: the file does not end with a newline and its last
    line is not complete JSON (a crash mid-write).

Duplicate keys are found without a second parse in the common case: the
colons of a line are either member separators or inside strings, so a line
whose colon count equals its parsed members plus the colons in its parsed
strings has none; any other line (or one with ':' escaped as \\u003a) is
parsed again by the standard library, which sees every member."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterator

import orjson

MAX_LINE_BYTES = 32 << 20
MAX_DEPTH = 64


@dataclass(frozen=True)
class LineProblem:
    line: int
    col: int | None
    message: str
    torn: bool = False  # the file's last line, cut off mid-write


def _shape(value: object) -> tuple[int, int, int]:
    """(object members, ':' inside strings, nesting depth) of a parsed value."""
    members = colons = depth = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        kind = type(item)
        if kind is str:
            colons += item.count(":")
        elif kind is dict:
            depth = max(depth, level)
            members += len(item)
            for key, child in item.items():
                colons += key.count(":")
                stack.append((child, level + 1))
        elif kind is list:
            depth = max(depth, level)
            stack.extend((child, level + 1) for child in item)
    return members, colons, depth


class _Duplicate(Exception):
    pass


def _reject_duplicates(pairs: list) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


def _duplicate_key(raw: memoryview) -> str | None:
    try:
        json.loads(bytes(raw), object_pairs_hook=_reject_duplicates)
    except _Duplicate as err:
        return str(err.args[0])
    except (ValueError, RecursionError):
        return None
    return None


def read_lines(data: bytes) -> Iterator[tuple[int, object, LineProblem | None]]:
    """(line number, parsed value or None, problem or None) for every
    non-blank line of `data` (a leading UTF-8 BOM is skipped)."""
    view = memoryview(data)
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    number = 0
    loads = orjson.loads
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        last = end < 0
        if last:
            end = size
        number += 1
        first, start = start, end + 1
        length = end - first
        if length > MAX_LINE_BYTES:
            yield number, None, LineProblem(number, None, f"the line is {length:,} bytes; the limit is {MAX_LINE_BYTES:,}")
            continue
        raw = view[first:end]
        try:
            value = loads(raw)
        except orjson.JSONDecodeError as err:
            if not data[first:end].strip():
                continue
            if last:
                yield number, None, LineProblem(number, err.colno, "the last line is cut off (no newline at the end "
                                                f"and not complete JSON: {err.msg})", torn=True)
            elif b"NaN" in data[first:end] or b"Infinity" in data[first:end]:
                yield number, None, LineProblem(number, err.colno, f"invalid JSON: {err.msg} (NaN and Infinity are not JSON)")
            else:
                yield number, None, LineProblem(number, err.colno, f"invalid JSON: {err.msg}")
            continue
        kind = type(value)
        if kind is dict or kind is list:
            members, colons, depth = _shape(value)
            if depth > MAX_DEPTH:
                yield number, None, LineProblem(number, None,
                                                f"the value is nested {depth} levels deep; the limit is {MAX_DEPTH}")
                continue
            if data.count(b":", first, end) != members + colons:
                key = _duplicate_key(raw)
                if key is not None:
                    yield number, None, LineProblem(number, None, f"the key {key!r} appears twice in one object")
                    continue
        yield number, value, None
