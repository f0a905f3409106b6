"""One error per mistake: what a module that does not bundle or import would
have told the release-wide stage, guessed from its text, so that the errors
that would only follow from it are not reported.

* A discovered module in evals/ that a failed eval module names (its
  transformer, a helper it imports) is presumably no eval: its eval errors
  (no `id`, unknown keys `name` and `transform`, no default export) are left
  out; its own bundle and import errors are not.
* A tool that no tool module defines, but that a failed tool module spells
  as a key, is presumably defined there: the `unknown-tool` error of each
  case naming it is left out. A tool no module spells is still reported:
  that mistake is independent of the failed module."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

from trunchbull.common.paths import MODULE_SUFFIXES
from trunchbull.compile.locate import find_key, module_text
from trunchbull.compile.modules import ModuleReport

# A relative module path in quotes: an import, a transformer path, a data file.
_RELATIVE = re.compile(r"""(["'`])(\.{1,2}/[^"'`\n]{1,1000})\1""")


def failed(reports: list[ModuleReport], kind: str) -> list[str]:
    """The modules of `kind` that did not bundle or import (their error is reported)."""
    return [r.path for r in reports if r.kind == kind and not r.ok]


def named_by_failed(root: Path, failed_evals: list[str], discovered: set[str]) -> set[str]:
    """The discovered modules that some failed eval module names by a relative path."""
    named: set[str] = set()
    for module in failed_evals:
        base = os.path.dirname(module)
        for match in _RELATIVE.finditer(module_text(root / module)):
            target = os.path.normpath(os.path.join(base, match.group(2))).replace(os.sep, "/")
            candidates = (
                target,
                *(target + s for s in MODULE_SUFFIXES),
                *(f"{target}/index{s}" for s in MODULE_SUFFIXES),
            )
            named.update(c for c in candidates if c in discovered and c != module)
    return named


def defined_by_failed(root: Path, failed_tools: Sequence[str], name: str) -> bool:
    """Whether a failed tool module spells `name` (as a key, or a string)."""
    return any(find_key(root / module, name)[0] is not None for module in failed_tools)
