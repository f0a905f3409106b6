"""Authored paths: POSIX, relative, inside a boundary directory."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from trunchbull.common.userfiles import display, exists, name_problem, real_path

MODULE_SUFFIXES = (".ts", ".mts", ".js", ".mjs")


def rel_posix(path: Path, base: Path) -> str:
    """`path` relative to `base` as POSIX text (with ../ when outside)."""
    return Path(os.path.relpath(path, base)).as_posix()


def authored_path_problem(text: object) -> str | None:
    """Syntax rules of a path written in config or eval modules."""
    if not isinstance(text, str) or not text:
        return "must be a non-empty string path"
    problem = name_problem(text)
    if problem:
        return f"{display(text)} {problem}"
    if "\\" in text:
        return f"{display(text)} uses backslashes; write a POSIX path with '/'"
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        return f"{display(text)} is absolute; write it relative"
    return None


def resolve_inside(base_dir: Path, text: str, boundary: Path) -> tuple[Path | None, str | None]:
    """Resolve `text` (relative to base_dir) and require it to stay inside
    `boundary`, also after following symlinks. Returns (path, problem)."""
    problem = authored_path_problem(text)
    if problem:
        return None, problem
    joined = Path(posixpath.normpath(posixpath.join(base_dir.as_posix(), text)))
    if not is_within(joined, boundary):
        return None, f"{display(text)} leaves the benchmark root"
    if exists(joined) and not is_within(real_path(joined), real_path(boundary)):
        return None, f"{display(text)} is a symlink that resolves outside the benchmark root"
    return joined, None


def is_within(path: Path, boundary: Path) -> bool:
    try:
        path.relative_to(boundary)
        return True
    except ValueError:
        return False
