"""A release tool offered under another name ({ tool, as } in a case's tools): the model is
offered the name and the release tool's description and schema, its call of that name runs the
release tool's own `execute`, the record carries the offered name and the call's step, and
tool_call_syntax grades against the release tool's schema (fixtures/offered: find_order and
find_book, each offered as `find`)."""

from __future__ import annotations

import json

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply

MODEL = "openai-compatible:test-model"


def test_a_tool_offered_under_another_name_runs_the_release_tool(built, server, cli, tmp_path):
    release = built("offered")
    manifest = json.loads((release / "release.json").read_text())
    book_schema = next(t["inputSchema"] for t in manifest["tools"] if t["name"] == "find_book")
    server.script("[offer-order]", [Reply(tool_calls=[("find", {"orderId": "C3"})]), Reply(content="shipped")])
    server.script("[offer-book]", [Reply(tool_calls=[("find", {"isbn": "978-0441013593"})]), Reply(content="Dune")])
    run = cli("run", release, "--model", MODEL, "--base-url", server.url, "-o", tmp_path / "run")
    assert run.code == 0, run.stderr

    first = {r.body["messages"][0]["content"]: r.body for r in server.received() if len(r.body["messages"]) == 1}
    book = first["[offer-book] Find the book 978-0441013593."]
    assert [t["function"]["name"] for t in book["tools"]] == ["find", "find_order"]
    assert book["tools"][0]["function"]["parameters"] == book_schema
    assert book["tools"][0]["function"]["description"] == "Find a book by its ISBN."

    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "run" / "responses.jsonl")}
    order, found = records["lookups.order"], records["lookups.book"]
    assert [(c["toolName"], c["step"]) for c in order["toolCalls"]] == [("find", 0)]
    assert order["toolResults"][0]["output"] == {"orderId": "C3", "status": "shipped"}  # find_order's execute
    assert found["toolResults"][0]["output"] == {"isbn": "978-0441013593", "title": "Dune"}  # find_book's
    results = {r["caseId"]: r["outcome"] for r in read_jsonl(tmp_path / "run" / "results.jsonl")}
    assert results == {"lookups.order": "pass", "lookups.book": "pass"}
