"""Best-effort line:col for values of an inspected module: the first place
its source spells a given string literal."""

from __future__ import annotations

import bisect
import json
import re
from functools import lru_cache
from pathlib import Path

from trunchbull.common.userfiles import FileProblem, read_file


@lru_cache(maxsize=256)
def _text(path: Path) -> str:
    try:
        return read_file(path).decode("utf-8")
    except (FileProblem, UnicodeDecodeError):
        return ""


def module_text(path: Path) -> str:
    """The file's text ("" when it cannot be read or is not UTF-8)."""
    return _text(path)


@lru_cache(maxsize=256)
def _line_starts(path: Path) -> list[int]:
    text = _text(path)
    starts, index = [0], text.find("\n")
    while index >= 0:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def position(path: Path, index: int) -> tuple[int, int]:
    """1-based line and column of a character offset in the file."""
    starts = _line_starts(path)
    line = bisect.bisect_right(starts, index)
    return line, index - starts[line - 1] + 1


def literal_offset(path: Path, value: str, start: int = 0) -> int:
    """Offset of the first spelling of string `value` at or after `start`
    (then, failing that, anywhere), or -1."""
    text = _text(path)
    for begin in (start, 0) if start else (0,):
        for quoted in (json.dumps(value, ensure_ascii=False), f"'{value}'", f"`{value}`"):
            index = text.find(quoted, begin)
            if index >= 0:
                return index
    return -1


def find_literal(path: Path, value: str) -> tuple[int | None, int | None]:
    index = literal_offset(path, value)
    return position(path, index) if index >= 0 else (None, None)


def find_in_line(path: Path, line: int, value: str) -> int | None:
    """The 1-based column of string literal `value` on line `line`, if it is there."""
    starts = _line_starts(path)
    if not 0 < line <= len(starts):
        return None
    text = _text(path)
    end = starts[line] if line < len(starts) else len(text)
    index = text.find(json.dumps(value, ensure_ascii=False), starts[line - 1], end)
    return index - starts[line - 1] + 1 if index >= 0 else None


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


class _Scanner:
    """Just enough of a JS/TS literal scanner to follow a JSON path through
    object and array literals: skips strings, template literals and comments,
    tracks bracket depth."""

    OPEN, CLOSE = "[{(", "]})"

    def __init__(self, text: str):
        self.text = text

    def skip_trivia(self, i: int) -> int:
        text, n = self.text, len(self.text)
        while i < n:
            if text[i].isspace():
                i += 1
            elif text.startswith("//", i):
                j = text.find("\n", i)
                i = n if j < 0 else j + 1
            elif text.startswith("/*", i):
                j = text.find("*/", i + 2)
                i = n if j < 0 else j + 2
            else:
                break
        return i

    def skip_string(self, i: int) -> int:
        quote, text, n = self.text[i], self.text, len(self.text)
        i += 1
        while i < n and text[i] != quote:
            i += 2 if text[i] == "\\" else 1
        return i + 1

    def members(self, open_index: int):
        """Yield (start, end) of each top-level member of the literal whose
        opening bracket is at open_index."""
        text, n = self.text, len(self.text)
        i = self.skip_trivia(open_index + 1)
        start, depth = i, 0
        while i < n:
            c = text[i]
            if c in "\"'`":
                i = self.skip_string(i)
                continue
            if text.startswith("//", i) or text.startswith("/*", i):
                i = self.skip_trivia(i)
                continue
            if c in self.OPEN:
                depth += 1
            elif c in self.CLOSE:
                if depth == 0:
                    if text[start:i].strip():
                        yield start, i
                    return
                depth -= 1
            elif c == "," and depth == 0:
                yield start, i
                start = i = self.skip_trivia(i + 1)
                continue
            i += 1

    def element(self, open_index: int, n: int) -> int | None:
        for index, (start, _) in enumerate(self.members(open_index)):
            if index == n:
                return start
        return None

    def key(self, open_index: int, name: str) -> tuple[int, int | None] | None:
        """(key position, value position or None for a shorthand property)."""
        pattern = re.compile(rf"(?:{re.escape(name)}|\"{re.escape(name)}\"|'{re.escape(name)}')\s*(:|\(|$)", re.S)
        for start, end in self.members(open_index):
            match = pattern.match(self.text, start, end)
            if match:
                value = self.skip_trivia(match.end()) if match.group(1) == ":" else None
                return start, value
        return None


def locate_path(path: Path, json_path: str) -> tuple[int | None, int | None, int]:
    """Follow `json_path` (e.g. `cases[3].evaluate.alternatives[1][0].toolName`)
    through the default export's literal. Returns the position of the deepest
    step found and how many steps were found (-1: all of them)."""
    text = _text(path)
    index = text.find("export default")
    if index < 0:
        return None, None, 0
    scanner = _Scanner(text)
    start = scanner.skip_trivia(index + len("export default"))
    value: int | None = start
    ident = re.match(r"[A-Za-z_$][A-Za-z0-9_$]*", text[start:])
    if ident and text[start] != "{":  # export default x, with const x = { … }
        decl = re.search(rf"(?:const|let|var)\s+{re.escape(ident.group(0))}\b[^=]*=\s*", text)
        if decl:
            value = scanner.skip_trivia(decl.end())
    found = index
    for steps, match in enumerate(_SEGMENT.finditer(json_path)):
        key = match.group(1) or match.group(2)
        if value is None or value >= len(text) or text[value] != ("{" if key is not None else "["):
            return (*_position(text, found), steps)
        if key is not None:
            hit = scanner.key(value, key)
            if hit is None:
                return (*_position(text, found), steps)
            found, value = hit
        else:
            element = scanner.element(value, int(match.group(3)))
            if element is None:
                return (*_position(text, found), steps)
            found = value = element
    return (*_position(text, found), -1)


def refine(path: Path, line: int | None, col: int | None, json_path: str) -> tuple[int | None, int | None]:
    """The most precise location for `json_path` in a module: the literal
    it names when the source spells it out; else, from the anchor given (a
    case's id literal), the first matching key after it."""
    if not json_path:
        return line, col
    found_line, found_col, steps = locate_path(path, json_path)
    if steps == -1 or steps >= 2 or line is None:  # the literal was followed past cases[N]
        return (found_line, found_col) if found_line else (line, col)
    text = _text(path)
    start = _offset(text, line, col or 1)
    case_prefix = _CASE_PREFIX.match(json_path)
    if not case_prefix:
        return found_line, found_col
    start = max(text.rfind("{", 0, start), 0)
    found = None
    for match in _SEGMENT.finditer(json_path[case_prefix.end() :]):
        key = match.group(1) or match.group(2)
        if key is None:
            continue
        key_match = re.compile(rf"(?<![A-Za-z0-9_$])[\"']?{re.escape(key)}[\"']?\s*:").search(text, start)
        if not key_match:
            break
        found = start = key_match.start()
    return _position(text, found) if found is not None else (line, col)
