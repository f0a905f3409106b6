"""JSON Lines read defensively (responses files for `grade`, a run's records
for `run --resume`): each line cut from the file's bytes and parsed once
(one line at a time: a file is never split into copies of all its lines,
and a line over the size limit is never copied or parsed), with every way a
line can be hostile reported against its line number:

  * not UTF-8, NUL or other control bytes, NaN / Infinity literals, invalid
    JSON (orjson rejects them);
  * longer than MAX_LINE_BYTES (never parsed: memory stays bounded);
  * nested deeper than MAX_DEPTH (orjson alone stops only at 1024);
  * an object with a duplicate key (orjson keeps the last one silently);
  * a torn last line: the file does not end with a newline and its last
    line is not complete JSON (a crash mid-write).

Text that JSON can hold but UTF-8 cannot is repaired, not refused: a lone
UTF-16 surrogate escape (`"\\ud800"`, written by JavaScript's JSON.stringify
for a string cut inside a pair; orjson rejects it) becomes U+FFFD, as does a
byte sequence that is not UTF-8 (`loads_repairing`).

Duplicate keys are found without a second parse in the common case: the
colons of a line are either member separators or inside strings, so a line
with as many colons as orjson's re-encoding of it (which writes each member
and each string colon as ':') has none; any other line (or one with an
escaped colon, \\u003a) is parsed again by the standard library, which sees
every member. The value is walked for its depth only when the line has more
brackets than the depth limit."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

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
    stack: list[tuple[Any, int]] = [(value, 1)]
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


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _well_formed(value: object) -> object:
    """`value` with every lone surrogate of its strings and keys replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_well_formed(item) for item in value]
    if isinstance(value, dict):
        return {_well_formed(key): _well_formed(item) for key, item in value.items()}
    return value


def loads_repairing(raw: bytes) -> tuple[object, bool]:
    """(value, repaired): orjson's parse, or, for a line orjson refuses only
    because of its text (a lone surrogate escape, bytes that are not UTF-8),
    the standard library's with that text made U+FFFD. Raises
    orjson.JSONDecodeError (orjson's own error) for anything else."""
    try:
        return orjson.loads(raw), False
    except orjson.JSONDecodeError as err:
        if b"\\u" not in raw and raw.isascii():
            raise
        error = err
    try:
        value = json.loads(raw.decode("utf-8", "replace"), parse_constant=_no_constant)
        return _well_formed(value), True
    except (ValueError, RecursionError):
        raise error from None


class _Duplicate(Exception):
    pass


def _reject_duplicates(pairs: list) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


def _duplicate_key(raw: bytes) -> str | None:
    try:
        json.loads(raw, object_pairs_hook=_reject_duplicates)
    except _Duplicate as err:
        return str(err.args[0])
    except (ValueError, RecursionError):
        return None
    return None


def _unparsable(raw: bytes, number: int, err: orjson.JSONDecodeError, last: bool) -> LineProblem | None:
    """What is wrong with a line no parse accepts (None: a blank line)."""
    if not raw.strip():
        return None
    if last:
        return LineProblem(
            number,
            err.colno,
            f"the last line is cut off (no newline at the end and not complete JSON: {err.msg})",
            torn=True,
        )
    if b"NaN" in raw or b"Infinity" in raw:
        return LineProblem(number, err.colno, f"invalid JSON: {err.msg} (NaN and Infinity are not JSON)")
    return LineProblem(number, err.colno, f"invalid JSON: {err.msg}")


def read_lines(data: bytes) -> Iterator[tuple[int, object, LineProblem | None]]:
    """(line number, parsed value or None, problem or None) for every
    non-blank line of `data` (a leading UTF-8 BOM is skipped)."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    number = 0
    loads, dumps = orjson.loads, orjson.dumps
    repairing = loads_repairing
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
            yield (
                number,
                None,
                LineProblem(number, None, f"the line is {length:,} bytes; the limit is {MAX_LINE_BYTES:,}"),
            )
            continue
        raw = data[first:end]  # (orjson parses bytes ~2x faster than a memoryview; one line is copied at a time)
        try:
            value = loads(raw)
        except orjson.JSONDecodeError:
            try:
                value, _ = repairing(raw)
            except orjson.JSONDecodeError as err:
                problem = _unparsable(raw, number, err, last)
                if problem is not None:
                    yield number, None, problem
                continue
        kind = type(value)
        if kind is dict or kind is list:
            # Deeper than MAX_DEPTH needs more than MAX_DEPTH brackets: only then is the value walked.
            if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
                depth = _shape(value)[2]
                if depth > MAX_DEPTH:
                    yield (
                        number,
                        None,
                        LineProblem(number, None, f"the value is nested {depth} levels deep; the limit is {MAX_DEPTH}"),
                    )
                    continue
            # A line that is its own re-encoding (compact JSON, as JSON.stringify and orjson write it)
            # dropped no member. Otherwise: orjson writes every member's colon and every colon of its
            # strings as ':' (never escaped), so the line has as many as its re-encoding unless a member
            # was dropped (a duplicate key) or a colon was written \u003a; either way the standard
            # library decides.
            again = dumps(value)
            if again != raw and (raw.count(b":") != again.count(b":") or b"\\u003" in raw):
                key = _duplicate_key(raw)
                if key is not None:
                    yield number, None, LineProblem(number, None, f"the key {key!r} appears twice in one object")
                    continue
        yield number, value, None
