"""Text that grading messages share."""

from __future__ import annotations


def preview(text: str, limit: int = 60) -> str:
    """A short quoted excerpt for grading messages."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(text)
