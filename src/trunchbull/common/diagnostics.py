"""Diagnostics: what the compiler reports, collected for the whole run and
rendered as `path:line:col: error[code]: message` lines or JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import orjson


# Errors that keep a file from being read as a whole (it does not parse, or importing it
# fails): listed first, since the errors after them may only follow from them.
CAUSES = frozenset({"config-syntax", "bundle", "module-import"})


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    file: str | None = None  # benchmark-root-relative POSIX path
    line: int | None = None
    col: int | None = None
    hint: str | None = None
    severity: str = "error"

    def sort_key(self) -> tuple:
        return (self.code not in CAUSES, self.file or "", self.line or 0, self.col or 0, self.code, self.message)

    def location(self, prefix: str = "") -> str:
        if not self.file:
            return prefix.rstrip("/") or "."
        parts = [f"{prefix}{self.file}"]
        if self.line:
            parts.append(str(self.line))
            if self.col:
                parts.append(str(self.col))
        return ":".join(parts)

    def render(self, prefix: str = "") -> str:
        text = f"{self.location(prefix)}: {self.severity}[{self.code}]: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_json(self) -> dict:
        return {
            "severity": self.severity,
            "code": self.code,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "hint": self.hint,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Diagnostic":
        return cls(
            data["code"],
            data["message"],
            data.get("file"),
            data.get("line"),
            data.get("col"),
            data.get("hint"),
            data.get("severity", "error"),
        )


@dataclass
class Diagnostics:
    items: list[Diagnostic] = field(default_factory=list)

    def error(
        self,
        code: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        col: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.items.append(Diagnostic(code, message, file, line, col, hint))

    def warning(
        self,
        code: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        col: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.items.append(Diagnostic(code, message, file, line, col, hint, severity="warning"))

    def extend(self, other: Iterable[Diagnostic]) -> None:
        self.items.extend(other)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "warning"]

    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        unique = dict.fromkeys(self.items)  # the same problem reached twice is reported once
        return sorted(unique, key=Diagnostic.sort_key)


def render_text(diagnostics: Iterable[Diagnostic], prefix: str = "") -> str:
    return "\n".join(d.render(prefix) for d in diagnostics)


def render_json(diagnostics: Iterable[Diagnostic]) -> bytes:
    return orjson.dumps([d.to_json() for d in diagnostics], option=orjson.OPT_INDENT_2)


class UsageError(Exception):
    """A problem with how Trunchbull was invoked or with its environment (exit code 2)."""


def report_internal_error(err: BaseException) -> int:
    """An unexpected failure: one line, the traceback only on request."""
    import os
    import sys
    import traceback

    if os.environ.get("TRUNCHBULL_DEBUG"):
        traceback.print_exception(err)
    print(
        f"trunchbull: internal error: {type(err).__name__}: {err} (set TRUNCHBULL_DEBUG=1 for details)", file=sys.stderr
    )
    return 2
