"""Best-effort line:col for values of an inspected module: the first place
its source spells a given string literal."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=256)
def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def find_literal(path: Path, value: str) -> tuple[int | None, int | None]:
    text = _text(path)
    for quoted in (json.dumps(value, ensure_ascii=False), f"'{value}'", f"`{value}`"):
        index = text.find(quoted)
        if index >= 0:
            line = text.count("\n", 0, index) + 1
            return line, index - (text.rfind("\n", 0, index) + 1) + 1
    return None, None


def find_key(path: Path, name: str) -> tuple[int | None, int | None]:
    """Where an object key `name` (bare or quoted) is first written."""
    text = _text(path)
    match = re.search(rf"(?<![A-Za-z0-9_$])[\"']?{re.escape(name)}[\"']?\s*:", text)
    return _position(text, match.start()) if match else find_literal(path, name)


def find_default_export(path: Path) -> tuple[int | None, int | None]:
    text = _text(path)
    index = text.find("export default")
    if index < 0:
        return None, None
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


_CASE_PREFIX = re.compile(r"^cases\[\d+\]")
_SEGMENT = re.compile(r"\.?([A-Za-z_$][A-Za-z0-9_$]*)|\[\"((?:[^\"\\]|\\.)*)\"\]|\[(\d+)\]")


def _offset(text: str, line: int, col: int) -> int:
    index = 0
    for _ in range(line - 1):
        index = text.find("\n", index) + 1
    return index + col - 1


def _position(text: str, index: int) -> tuple[int, int]:
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def refine(path: Path, line: int | None, col: int | None, json_path: str) -> tuple[int | None, int | None]:
    """Move a location from its anchor (a case's id literal, or the default
    export) to the key that `json_path` names, by searching the source for
    each key in turn. Keeps the anchor when a key cannot be found."""
    text = _text(path)
    if not text or not json_path:
        return line, col
    if line is None:
        line, col = find_default_export(path)
        if line is None:
            return None, None
    start = _offset(text, line, col or 1)
    case_prefix = _CASE_PREFIX.match(json_path)
    if case_prefix:
        json_path = json_path[case_prefix.end():]
        start = max(text.rfind("{", 0, start), 0)
    elif text.find("export default") >= 0:  # eval-level keys may come before or after its id
        start = text.find("export default")
    found = None
    for match in _SEGMENT.finditer(json_path):
        key = match.group(1) or match.group(2)
        if key is None:
            continue
        key_match = re.compile(rf"(?<![A-Za-z0-9_$])[\"']?{re.escape(key)}[\"']?\s*:|(?<![A-Za-z0-9_$]){re.escape(key)}\s*\(").search(text, start)
        if not key_match:
            break
        found = start = key_match.start()
    return _position(text, found) if found is not None else (line, col)
