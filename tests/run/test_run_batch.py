"""Batch mode (SPEC §8.8): the real CLI against the local batch server
(tests/support/batch_server.py), which the pinned, unmodified AI SDK drives
as it would OpenAI's, Anthropic's and Google's batch APIs. A run with
--batch records what a live run records against the same scripted replies,
and grades the same; tool loops go in rounds, one batch per step, with the
local tools' results in the next round's requests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.run.conftest import read_jsonl
from tests.support.batch_server import BatchScript
from tests.support.chat_server import Reply

KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GOOGLE_GENERATIVE_AI_API_KEY"}
POLL = ("--batch-poll", "0.02")


def run_args(release: Path, server, out: Path, provider: str = "openai", *extra) -> list:
    return ["run", release, "--model", f"{provider}:test-model", "--base-url", server.url, "-o", out, *extra]


def env(provider: str = "openai") -> dict:
    """Every provider's key (`provider`'s first, for messages)."""
    return {KEYS[provider]: f"sk-{provider}-test", **{v: f"sk-{k}-test" for k, v in KEYS.items() if k != provider}}


def comparable(out: Path, drop_ids: bool = False) -> tuple[dict, dict]:
    """Records without their timing and batch fields (and, for Google, whose protocol has no
    tool-call IDs, with the IDs the SDK makes up numbered in order), and grades."""
    records = {}
    for row in read_jsonl(out / "responses.jsonl"):
        row = {k: v for k, v in row.items() if k not in ("latencyMs", "batch")}
        if drop_ids:
            ids = {call["toolCallId"]: f"id-{n}" for n, call in enumerate(row["toolCalls"])}
            for part in [*row["toolCalls"], *row["toolResults"]]:
                part["toolCallId"] = ids[part["toolCallId"]]
        records[(row["caseId"], row["repeat"])] = row
    grades = {
        (g["caseId"], g["repeat"]): {k: v for k, v in g.items() if k != "durationMs"}
        for g in read_jsonl(out / "results.jsonl")
    }
    return records, grades


def script_tools(server) -> None:
    server.script(
        "[order-a1]",
        [
            Reply(tool_calls=[("lookup_order", {"orderId": "A1"})], usage=(11, 5)),
            Reply(content="Order A1 has shipped.", usage=(20, 7)),
        ],
    )
    server.script(
        "[order-calls]",
        [Reply(tool_calls=[("lookup_order", {"orderId": "C3"})], usage=(9, 4)), Reply(content="done", usage=(15, 2))],
    )
    server.script(
        "[fault-explode]", [Reply(tool_calls=[("explode", {})], usage=(5, 3)), Reply(content="down", usage=(8, 1))]
    )


CASES = ("--case", "orders.a1", "--case", "orders.calls", "--case", "faults.explode", "--case", "plain.*")


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_a_batch_run_records_and_grades_what_a_live_run_does(built, batch_server, cli, tmp_path, provider):
    release = built("agent")
    script_tools(batch_server)
    batch_server.process(BatchScript(processing=0.05))
    live = cli(*run_args(release, batch_server, tmp_path / "live", provider, *CASES, "--no-cache"), env=env(provider))
    assert live.code == 0, live.stderr
    run = cli(
        *run_args(release, batch_server, tmp_path / "batch", provider, *CASES, "--no-cache", "--batch", *POLL),
        env=env(provider),
    )
    assert run.code == 0, run.stderr
    assert comparable(tmp_path / "batch", provider == "google") == comparable(tmp_path / "live", provider == "google")

    # two rounds: every sample's first call in one batch, the three that called tools in the next
    batches = list(batch_server.batches.values())
    assert [len(b.items) for b in batches] == [7, 3] and {b.provider for b in batches} == {provider}
    assert all(item.step == 0 for item in batches[0].items) and all(item.step == 1 for item in batches[1].items)
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "batch" / "responses.jsonl")}
    a1 = records["orders.a1"]
    assert [(b["batch"], b["step"], b["status"]) for b in a1["batch"]] == [
        (batches[0].id, 0, "succeeded"),
        (batches[1].id, 1, "succeeded"),
    ]
    assert records["plain.one"]["batch"][0]["batch"] == batches[0].id and len(records["plain.one"]["batch"]) == 1
    # the local tool's result is in the second round's request, as a live run's second call sends it
    second = next(i for i in batches[1].items if i.key.startswith("[order-a1]")).body
    live_second = batch_server.received("[order-a1]")[1].body
    wire = json.dumps(second)
    assert "DHL" in wire and "shipped" in wire
    if provider == "anthropic":  # the same Messages API body, live or in a batch
        assert second == live_second  # (OpenAI's batches take Responses API calls; Google's IDs are random)
    # every request was sent once, to one batch
    sent = Counter(i.custom_id.split("-")[0] + f"-{i.step}" for b in batches for i in b.items)
    assert set(sent.values()) == {1}


def test_a_stateful_multi_step_benchmark_keeps_its_tool_state_across_rounds(built, batch_server, cli, tmp_path):
    """examples/files: four steps, each running a tool on the sample's in-memory file system; the
    files written in one round are there in the next (its tool calls are made again first)."""
    from tests.run.test_run_stateful_example import comparable as files_comparable, script

    release = built("files")
    script(batch_server)
    args = ("--no-cache", "--repeat", "2")
    live = cli(*run_args(release, batch_server, tmp_path / "live", "anthropic", *args), env=env("anthropic"))
    assert live.code == 0, live.stderr
    run = cli(
        *run_args(release, batch_server, tmp_path / "batch", "anthropic", *args, "--batch", *POLL), env=env("anthropic")
    )
    assert run.code == 0, run.stderr
    assert files_comparable(tmp_path / "batch") == files_comparable(tmp_path / "live")
    records, _grades = files_comparable(tmp_path / "batch")
    note = records[("files.note", 1)]
    assert note[2][-1] == ("read_file", {"path": "/notes/todo.txt", "text": "buy milk"}, None)
    assert [len(b.items) for b in batch_server.batches.values()] == [6, 6, 4, 4]  # a round per step


def test_the_response_cache_is_shared_with_live_runs(built, batch_server, cli, tmp_path):
    release = built("agent")
    live = cli(*run_args(release, batch_server, tmp_path / "live", "openai", "--eval", "plain"), env=env())
    assert live.code == 0, live.stderr
    run = cli(*run_args(release, batch_server, tmp_path / "batch", "openai", "--eval", "plain", "--batch"), env=env())
    assert run.code == 0, run.stderr
    assert not batch_server.batches  # every sample came from the cache: nothing was sent
    assert all(r["cached"] for r in read_jsonl(tmp_path / "batch" / "responses.jsonl"))
    # and what a batch run records, a live run finds
    again = cli(
        *run_args(release, batch_server, tmp_path / "b2", "openai", "--case", "orders.a1", "--batch", *POLL), env=env()
    )
    assert again.code == 0, again.stderr
    live_again = cli(*run_args(release, batch_server, tmp_path / "l2", "openai", "--case", "orders.a1"), env=env())
    assert live_again.code == 0 and read_jsonl(tmp_path / "l2" / "responses.jsonl")[0]["cached"] is True


@pytest.mark.parametrize(
    "model, extra, says",
    [
        ("echo", (), "--batch: --model echo has no batch API (batch mode works with openai, anthropic, google)"),
        ("openai-compatible:m", (), "has no batch API"),
        ("openai:m", ("--batch-poll", "0"), "--batch-poll takes a number of seconds > 0"),
    ],
)
def test_batch_mode_is_a_usage_error_where_it_does_not_apply(built, batch_server, cli, tmp_path, model, extra, says):
    out = tmp_path / "run"
    url = () if model == "echo" else ("--base-url", batch_server.url)
    run = cli("run", built("agent"), "--model", model, *url, "-o", out, "--batch", *extra, env=env())
    assert run.code == 2 and says in run.stderr
    assert not out.exists() and not batch_server.requests


def test_batch_options_need_batch_mode(built, batch_server, cli, tmp_path):
    out = tmp_path / "run"
    poll = cli(*run_args(built("agent"), batch_server, out, "openai", "--batch-poll", "5"), env=env())
    assert poll.code == 2 and "--batch-poll applies to --batch runs only" in poll.stderr
    cancel = cli(*run_args(built("agent"), batch_server, out, "openai", "--batch", "--cancel-batches"), env=env())
    assert cancel.code == 2 and "--cancel-batches cancels the live batches of a run being resumed" in cancel.stderr
    live = cli(*run_args(built("agent"), batch_server, out, "openai", "--eval", "plain"), env=env())
    assert live.code == 0
    resumed = cli(
        *run_args(built("agent"), batch_server, out, "openai", "--eval", "plain", "--resume", "--batch"), env=env()
    )
    assert resumed.code == 2 and "--batch (the run was made without --batch)" in resumed.stderr


def test_without_tools_the_batch_caller_takes_the_replies_and_records_what_live_does(
    built, batch_server, cli, tmp_path
):
    """A release slice with no tools needs no model callers: the batch caller takes each reply
    through generateText itself, a call of a tool the case does not have included (a tool error,
    then a second round, as live)."""
    release = built("agent")
    batch_server.script(
        "[plain-four]",
        [
            Reply(tool_calls=[("lookup_order", {"orderId": "X"})], usage=(4, 2)),
            Reply(content="no such tool", usage=(9, 3)),
        ],
    )
    batch_server.script("[plain-one]", [Reply(content="echo one, in " + "many words " * 50, usage=(7, 80))])
    args = ("--eval", "plain", "--no-cache", "--repeat", "2")
    live = cli(*run_args(release, batch_server, tmp_path / "live", "anthropic", *args), env=env("anthropic"))
    assert live.code == 0, live.stderr
    run = cli(
        *run_args(release, batch_server, tmp_path / "batch", "anthropic", *args, "--batch", *POLL), env=env("anthropic")
    )
    assert run.code == 0, run.stderr
    assert comparable(tmp_path / "batch") == comparable(tmp_path / "live")
    assert [len(b.items) for b in batch_server.batches.values()] == [8, 2]
    four = {r["repeat"]: r for r in read_jsonl(tmp_path / "batch" / "responses.jsonl") if r["caseId"] == "plain.four"}
    assert four[0]["steps"] == 2 and "lookup_order" in four[0]["toolResults"][0]["error"]
