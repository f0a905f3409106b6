"""Every sample gets fresh instances of its tool modules (a V8 context of its
own per sample, in the tool executor): a module-level counter gives 1 in
every sample whatever ran before it (at -j 1 and -j 16, with repeats, after
--resume), state lives across the steps of one sample, patched prototypes,
JSON and globals stay in their sample, and timers a tool leaves running are
stopped when its sample ends and said once in the run's warnings."""

from __future__ import annotations

import pytest

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply

MODEL = "openai-compatible:test-model"
NOT_PATCHED = {"arrayPatched": False, "jsonPatched": False, "globalMarker": None, "moduleSaw": False}
PATCHED = {"arrayPatched": True, "jsonPatched": True, "globalMarker": "left by an earlier sample", "moduleSaw": True}
LEAK_WARNING = "left 1 timer(s) running when its sample ended"


def script(server) -> None:
    for i in range(8):
        server.script(f"[count-{i}]", [Reply(tool_calls=[("count", {})]), Reply(content="counted")])
    server.script("[twice]", [Reply(tool_calls=[("count", {})])] * 2 + [Reply(content="counted twice")])
    server.script("[patch-a]", [Reply(tool_calls=[("patch", {})]), Reply(content="patched")])
    server.script("[patch-b]", [Reply(tool_calls=[("patch", {})])] * 2 + [Reply(content="patched twice")])
    server.script("[leak]", [Reply(tool_calls=[("leak", {})]), Reply(content="leaked")])


def outputs(record: dict) -> list:
    assert record["error"] is None, record["error"]
    return [result["output"] for result in record["toolResults"]]


def check(records: list[dict], repeats: int) -> None:
    assert len(records) == 12 * repeats
    assert len({(r["caseId"], r["repeat"]) for r in records}) == len(records)
    for record in records:
        case = record["caseId"]
        if case.startswith("state.count-"):
            assert outputs(record) == [{"n": 1}], record
        elif case == "state.twice":
            assert outputs(record) == [{"n": 1}, {"n": 2}]  # state lives across the steps of one sample
        elif case == "state.patch-a":
            assert outputs(record) == [NOT_PATCHED]
        elif case == "state.patch-b":
            assert outputs(record) == [NOT_PATCHED, PATCHED]  # the patches hold within their own sample
        else:
            assert outputs(record) == [{"started": True, "ticks": 0}]


@pytest.mark.parametrize("jobs", ["1", "16"])
def test_every_sample_sees_fresh_tool_modules(built, server, cli, tmp_path, jobs):
    script(server)
    out = tmp_path / "run"
    args = ["run", built("stateful"), "--model", MODEL, "--base-url", server.url, "-o", out, "--no-cache"]
    run = cli(*args, "-j", jobs, "--repeat", "3")
    assert run.code == 0, run.stderr
    check(read_jsonl(out / "responses.jsonl"), 3)
    assert run.stderr.count(LEAK_WARNING) == 1, run.stderr  # said once, though three samples leaked

    # --resume: the samples run again in a new set of workers see fresh modules too.
    lines = (out / "responses.jsonl").read_bytes().splitlines(keepends=True)
    (out / "responses.jsonl").write_bytes(b"".join(lines[:13]))
    resumed = cli(*args, "-j", jobs, "--repeat", "3", "--resume")
    assert resumed.code == 0, resumed.stderr
    check(read_jsonl(out / "responses.jsonl"), 3)


def test_a_sample_that_calls_no_tool_makes_no_instance(built, server, cli, tmp_path):
    """A sample's instance of a tool module is made when it first validates or
    calls one of its tools: the five samples between the two that call the
    tool are offered it, but their model answers without it, and no instance
    is made for them (the module counts its instances in the host's
    `process`, which all of them share; the first is the executor's preload)."""
    server.script("[call-first]", [Reply(tool_calls=[("instances", {})]), Reply(content="called")])
    server.script("[call-last]", [Reply(tool_calls=[("instances", {})]), Reply(content="called")])
    for i in range(5):
        server.script(f"[quiet-{i}]", [Reply(content="no tool needed")])
    out = tmp_path / "run"
    run = cli(
        "run", built("lazy_tools"), "--model", MODEL, "--base-url", server.url, "-o", out, "--no-cache", "-j", "1"
    )
    assert run.code == 0, run.stderr
    records = read_jsonl(out / "responses.jsonl")  # at -j 1: in the order the samples ran
    assert len(records) == 7
    calling = [i for i, r in enumerate(records) if r["caseId"] in ("lazy.first", "lazy.last")]
    assert calling[-1] - calling[0] > 1, "no quiet sample ran between the two calling ones"
    made = [outputs(records[i]) for i in calling]
    assert made == [[{"made": 2}], [{"made": 3}]]
    assert all(outputs(r) == [] for r in records if r["caseId"].startswith("lazy.quiet-"))
