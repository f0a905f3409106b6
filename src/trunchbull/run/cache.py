"""The response cache (SPEC §8.4): completed samples by cache key, in one
SQLite database under the cache directory (`TRUNCHBULL_CACHE_DIR`, or the
file named by `TRUNCHBULL_RESPONSE_CACHE`), shared
safely by concurrent runs. Only samples without an error are stored; a hit
keeps its original latency and usage and is marked `cached: true`."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson

from trunchbull.common.jsonl import loads_repairing
from trunchbull.node.toolchain import cache_root

SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, record BLOB NOT NULL) WITHOUT ROWID"
BATCH = 500  # lookups per query (SQLite's bound-parameter limit is 999 on old builds)


def default_cache_path() -> Path:
    """TRUNCHBULL_RESPONSE_CACHE (a file), else responses.sqlite3 in the cache directory."""
    configured = os.environ.get("TRUNCHBULL_RESPONSE_CACHE")
    return Path(configured) if configured else cache_root() / "responses.sqlite3"


class ResponseCache:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(SCHEMA)
        self._pending: list[tuple[str, bytes]] = []

    def lookup(self, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), BATCH):
            chunk = keys[start : start + BATCH]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(f"SELECT key, record FROM responses WHERE key IN ({marks})", chunk))
        return found

    def put(self, key: str, record: bytes) -> None:
        """Stored at the next flush()."""
        self._pending.append((key, record))

    def flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO responses (key, record) VALUES (?, ?)", pending)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._db.close()


def as_cached(record: bytes, case_id: str, repeat: int) -> bytes:
    """A stored record as this sample's: its case and repeat, `cached: true`
    (another case with the same prompt, tools and settings shares the entry)."""
    row, repaired = loads_repairing(record)  # an entry stored before records were kept valid may need it
    assert type(row) is dict  # only records are stored
    if repaired:
        row["repaired"] = sorted({*(row.get("repaired") or []), "unencodable-text"})
    row["caseId"] = case_id
    row["repeat"] = repeat
    row["cached"] = True
    return orjson.dumps(row)
