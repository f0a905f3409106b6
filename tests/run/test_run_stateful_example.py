"""examples/files, a stateful benchmark (an in-memory file system whose
commands a model must sequence): two runs at different -j give identical
records (outputs, tool calls, tool results) and identical grades, and a
sample never sees a file another sample wrote."""

from __future__ import annotations

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply

MODEL = "openai-compatible:test-model"


def call(name: str, **args) -> Reply:
    return Reply(tool_calls=[(name, args)])


def script(server) -> None:
    todo = "/notes/todo.txt"
    server.script(
        "[files-note]",
        [
            call("mkdir", path="/notes"),
            call("write_file", path=todo, text="buy milk"),
            call("read_file", path=todo),
            Reply(content="It holds: buy milk"),
        ],
    )
    server.script(
        "[files-order]",
        [
            call("mkdir", path="/notes"),
            call("write_file", path=todo, text="buy milk"),
            call("list", path="/notes"),
            Reply(content="Done."),
        ],
    )
    server.script("[files-fresh]", [call("read_file", path=todo), Reply(content="There is no such file.")])


def comparable(out) -> tuple[dict, dict]:
    records = {
        (r["caseId"], r["repeat"]): (
            r["output"],
            [(c["toolName"], c["input"], c["step"]) for c in r["toolCalls"]],
            [(t["toolName"], t.get("output"), t.get("error")) for t in r["toolResults"]],
            r["steps"],
            r["finishReason"],
            r["error"],
        )
        for r in read_jsonl(out / "responses.jsonl")
    }
    grades = {(g["caseId"], g["repeat"]): (g["outcome"], g["score"]) for g in read_jsonl(out / "results.jsonl")}
    return records, grades


def test_two_runs_at_different_concurrency_agree(built, server, cli, tmp_path):
    release = built("files")
    script(server)
    runs = []
    for jobs in ("1", "8"):
        out = tmp_path / f"run-{jobs}"
        run = cli(
            "run",
            release,
            "--model",
            MODEL,
            "--base-url",
            server.url,
            "-o",
            out,
            "-j",
            jobs,
            "--repeat",
            "4",
            "--no-cache",
        )
        assert run.code == 0, run.stderr
        runs.append(comparable(out))
    (records, grades), (records_8, grades_8) = runs
    assert records == records_8 and grades == grades_8
    assert len(records) == 12 and set(grades.values()) == {("pass", 1.0)}
    for repeat in range(4):
        note = records[("files.note", repeat)]
        assert note[2][-1] == ("read_file", {"path": "/notes/todo.txt", "text": "buy milk"}, None)
        order = records[("files.order", repeat)]
        assert order[2][-1] == ("list", {"path": "/notes", "entries": ["todo.txt"]}, None)
        (fresh,) = records[("files.fresh", repeat)][2]  # other samples wrote the file; this one never did
        assert fresh[0] == "read_file" and fresh[1] is None and "/notes/todo.txt: no such file" in fresh[2]
