"""Naming rules (SPEC §3.2): authoring IDs, tool names, transformer source names."""

from __future__ import annotations

import re

AUTHORING_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
AUTHORING_ID_MAX = 120
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
SOURCE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def authoring_id_problem(value: object) -> str | None:
    """Why `value` is not a valid authoring ID, or None when it is."""
    if not isinstance(value, str):
        return f"must be a string, found {json_type(value)}"
    if not value:
        return "must not be empty"
    if len(value) > AUTHORING_ID_MAX:
        return f"is {len(value)} characters long; the limit is {AUTHORING_ID_MAX}"
    if not AUTHORING_ID.fullmatch(value):
        return (
            f"{value!r} is not a valid ID: it must start with a lowercase letter or digit and "
            "then use only lowercase letters, digits, '.', '_' and '-'"
        )
    return None


def tool_name_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return f"must be a string, found {json_type(value)}"
    if not TOOL_NAME.fullmatch(value):
        return (
            f"{value!r} is not a valid tool name: use 1-64 letters, digits, '_' or '-' "
            "(the function-name rule shared by the major model APIs)"
        )
    return None


def source_name_problem(value: str) -> str | None:
    if not SOURCE_NAME.fullmatch(value):
        return (
            f"{value!r} is not a valid source name: start with a letter or '_', then use "
            "letters, digits or '_' (at most 64 characters)"
        )
    return None


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def suggest(name: str, options: list[str]) -> str | None:
    """The closest valid key to a misspelt one, if any is close (a key that
    differs only in case first: `OpenAI` → `openai`)."""
    import difflib

    folded = [o for o in options if o.casefold() == name.casefold()]
    if folded:
        return folded[0]
    match = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return match[0] if match else None
