"""Settings the environment may give (`TRUNCHBULL_*` variables, docs/cli.md)."""

from __future__ import annotations

import os

from trunchbull.common.diagnostics import UsageError


def positive_number(name: str, default: float, kind: type) -> float:
    """The variable `name` as a positive `kind` (int or float), else `default`
    when it is unset or empty; a UsageError when it is not such a number."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"{name}={text!r} is not a number") from None
    if value <= 0:
        raise UsageError(f"{name} must be positive")
    return value
