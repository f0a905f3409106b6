"""The canonical bytes of a release (SPEC §5): orjson with sorted keys, LF,
UTF-8; and the SHA-256 hashes that name and check every file."""

from __future__ import annotations

import hashlib
import threading

import orjson


def canonical_json(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def canonical_line(value: object) -> bytes:
    """canonical_json and a newline: one line of a JSONL file."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BackgroundSha256:
    """sha256_hex of a large byte string, computed on another thread while
    the caller goes on (hashlib releases the GIL)."""

    def __init__(self, data: bytes):
        self._digest: list[str] = []
        self._thread = threading.Thread(target=lambda: self._digest.append(sha256_hex(data)), daemon=True)
        self._thread.start()

    def hexdigest(self) -> str:
        self._thread.join()
        return self._digest[0]
