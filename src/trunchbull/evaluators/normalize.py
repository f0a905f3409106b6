"""Text normalization shared by compile-time checks and grading (SPEC §4)."""

from __future__ import annotations

import re
import unicodedata

_NOT_ALNUM_RUN = re.compile(r"[^\w]+|_+")


def normalize_answer(text: str) -> str:
    """answer_bank normalization: NFKC, casefold, every run of characters that
    are not letters or digits becomes one space, trimmed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NOT_ALNUM_RUN.sub(" ", folded).strip()


GSM8K_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d*[1-9])?")
