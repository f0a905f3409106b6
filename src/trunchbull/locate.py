"""Best-effort line:col for values of an inspected module: the first place
its source spells a given string literal."""

from __future__ import annotations

import json
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


def find_default_export(path: Path) -> tuple[int | None, int | None]:
    text = _text(path)
    index = text.find("export default")
    if index < 0:
        return None, None
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1
