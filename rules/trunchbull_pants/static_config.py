"""A small reader of the static benchmark config, for target generation only.

The config is a static module: one `export default <object literal>` (or
`const x = <literal>; export default x`), values JSON literals only. Target
generation must not run processes (it happens on every `pants list`), so this
reads the `evals` and `tools` arrays in pure Python. It is lenient: whatever it
cannot read yields `None` (fall back to discovery); the compiler's own reader
(`@babel/parser`, in the compile steps) reports the actual errors.
"""

from __future__ import annotations

import re
from typing import Any

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _Unreadable(Exception):
    pass


def _strip_comments(text: str) -> str:
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


class _Parser:
    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.ws()
        return self.text[self.pos : self.pos + 1]

    def expect(self, c: str) -> None:
        if self.peek() != c:
            raise _Unreadable(f"expected {c!r} at {self.pos}")
        self.pos += 1

    def value(self) -> Any:
        c = self.peek()
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c in "\"'`":
            return self.string()
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return float(m.group()) if any(x in m.group() for x in ".eE") else int(m.group())
        m = _IDENT.match(self.text, self.pos)
        if m and m.group() in ("true", "false", "null"):
            self.pos = m.end()
            return {"true": True, "false": False, "null": None}[m.group()]
        raise _Unreadable(f"unsupported value at {self.pos}")

    def string(self) -> str:
        quote = self.text[self.pos]
        j = self.pos + 1
        chars = []
        while j < len(self.text) and self.text[j] != quote:
            if self.text[j] == "\\":
                nxt = self.text[j + 1 : j + 2]
                chars.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
                j += 2
            else:
                if quote == "`" and self.text.startswith("${", j):
                    raise _Unreadable("template literal with an expression")
                chars.append(self.text[j])
                j += 1
        self.pos = j + 1
        return "".join(chars)

    def arr(self) -> list:
        self.expect("[")
        items = []
        while self.peek() != "]":
            items.append(self.value())
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise _Unreadable(f"expected , or ] at {self.pos}")
        self.pos += 1
        return items

    def obj(self) -> dict:
        self.expect("{")
        result = {}
        while self.peek() != "}":
            c = self.peek()
            if c in "\"'":
                key = self.string()
            else:
                m = _IDENT.match(self.text, self.pos)
                if not m:
                    raise _Unreadable(f"unsupported key at {self.pos}")
                key = m.group()
                self.pos = m.end()
            self.expect(":")
            result[key] = self.value()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise _Unreadable(f"expected , or }} at {self.pos}")
        self.pos += 1
        return result


def read_static_config(text: str) -> dict | None:
    """The config object, or None when it cannot be read statically."""
    try:
        code = _strip_comments(text)
        m = re.search(r"\bexport\s+default\s+", code)
        if not m:
            return None
        pos = m.end()
        if code[pos : pos + 1] != "{":
            ident = _IDENT.match(code, pos)
            if not ident:
                return None
            decl = re.search(r"\b(?:const|let|var)\s+" + re.escape(ident.group()) + r"\s*(?::[^=]+)?=\s*", code)
            if not decl:
                return None
            pos = decl.end()
        value = _Parser(code, pos).value()
        return value if isinstance(value, dict) else None
    except (_Unreadable, IndexError, ValueError):
        return None


def config_entrypoints(text: str) -> tuple[list[str] | None, list[str] | None]:
    """The config's `evals` and `tools` lists (None where absent or unreadable)."""
    config = read_static_config(text)
    if config is None:
        return None, None

    def paths(key: str) -> list[str] | None:
        value = config.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v[2:] if v.startswith("./") else v for v in value]
        return None

    return paths("evals"), paths("tools")
