"""run/cache.py on its own: the SQLite response cache stores what is
flushed, is shared by two open caches on one file (concurrent runs), answers
lookups larger than one query, and gives a stored record to another sample
as that sample's (the run-level behaviour is tests/run/test_run_records.py's)."""

from __future__ import annotations

import sqlite3

import orjson

from trunchbull.run.cache import BATCH, ResponseCache, as_cached, default_cache_path


def stored(path) -> dict[str, bytes]:
    """The table's rows, read with sqlite3 directly rather than through the cache."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT key, record FROM responses"))


def test_a_put_is_stored_at_the_flush_and_close_flushes(tmp_path):
    path = tmp_path / "deep" / "responses.sqlite3"  # its directory is made
    cache = ResponseCache(path)
    cache.put("a", b'{"output":"1"}')
    assert stored(path) == {} and cache.lookup(["a"]) == {}
    cache.flush()
    assert stored(path) == {"a": b'{"output":"1"}'}
    cache.put("b", b'{"output":"2"}')
    cache.put("a", b'{"output":"3"}')  # the newer record of a key replaces the older
    cache.close()
    assert stored(path) == {"a": b'{"output":"3"}', "b": b'{"output":"2"}'}


def test_two_caches_on_one_file_see_each_others_records(tmp_path):
    path = tmp_path / "responses.sqlite3"
    first, second = ResponseCache(path), ResponseCache(path)
    first.put("k1", b"{}")
    first.flush()
    second.put("k2", b"[]")
    second.flush()
    assert first.lookup(["k1", "k2", "k3"]) == second.lookup(["k2", "k1"]) == {"k1": b"{}", "k2": b"[]"}
    first.close()
    second.close()


def test_a_lookup_of_more_keys_than_one_query_takes_finds_them_all(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite3")
    keys = [f"key-{i}" for i in range(2 * BATCH + 7)]
    for key in keys[::3]:
        cache.put(key, key.encode())
    cache.flush()
    found = cache.lookup(keys)
    assert found == {key: key.encode() for key in keys[::3]}
    cache.close()


def test_the_cache_file_is_named_by_its_variable_else_in_the_cache_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("TRUNCHBULL_RESPONSE_CACHE", raising=False)
    monkeypatch.setenv("TRUNCHBULL_CACHE_DIR", str(tmp_path / "cache"))
    assert default_cache_path() == tmp_path / "cache" / "responses.sqlite3"
    monkeypatch.setenv("TRUNCHBULL_RESPONSE_CACHE", str(tmp_path / "elsewhere.db"))
    assert default_cache_path() == tmp_path / "elsewhere.db"


def test_a_hit_becomes_the_sample_that_asked_marked_cached():
    record = orjson.dumps({"caseId": "other", "repeat": 3, "output": "hi", "latencyMs": 12})
    row = orjson.loads(as_cached(record, "mine", 0))
    assert row == {"caseId": "mine", "repeat": 0, "output": "hi", "latencyMs": 12, "cached": True}


def test_an_entry_with_text_utf8_cannot_hold_is_repaired_and_says_so():
    record = b'{"caseId":"x","repeat":0,"output":"a\\ud800b","repaired":["output-truncated"]}'
    row = orjson.loads(as_cached(record, "y", 1))
    assert row["output"] == "a\ufffdb"
    assert row["repaired"] == ["output-truncated", "unencodable-text"]
    assert (row["caseId"], row["repeat"], row["cached"]) == ("y", 1, True)
