"""What an evaluator gives for one sample, whatever its kind: the outcome
("pass" | "fail" | "error"), a score (None: none), a message and details.
Its own module, so that the registry (which prepares kinds) and judging.py
(whose requests decide a result) both read it without reading each other."""

from __future__ import annotations

from typing import Any

Result = tuple[str, "float | None", str, Any]
