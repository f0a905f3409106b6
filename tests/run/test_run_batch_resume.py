"""Batch mode is kill-safe and pays once (SPEC §8.8): the run is SIGKILLed
while it submits, while it polls and while it reads results, each time at a
point the local batch server holds until the test has killed it (no sleeps
as margins); `--resume` then re-attaches to the batches the journal names
(or finds the one whose create's answer was lost), every sample is recorded
exactly once, and the server's log shows no request sent to two batches."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.run.conftest import kill_group, read_jsonl, start_cli, wait_until
from tests.run.test_run_batch import POLL, env, run_args, script_tools
from tests.support.batch_server import BatchScript


def once_each(server) -> None:
    """No request of a sample's step went to two batches."""
    sent = Counter((item.custom_id.split("-")[0], item.step) for _b, _s, item in server.submitted())
    assert set(sent.values()) == {1}, sent


def recorded_once(out, count: int) -> list[dict]:
    records = read_jsonl(out / "responses.jsonl")
    keys = Counter((r["caseId"], r["repeat"]) for r in records)
    assert len(keys) == count and set(keys.values()) == {1}, keys
    return records


def killed_at(server, point: str, args: list, cache_dir, after: int = 0):
    """The run, killed once the server holds it at `point`; then the point is let go."""
    gate = server.gate(point, after)
    proc = start_cli(*args, cache=cache_dir, env=env())
    wait_until(lambda: gate.reached.is_set() or proc.poll() is not None, f"the run to reach {point}")
    assert gate.reached.is_set(), proc.communicate()
    kill_group(proc)
    gate.release.set()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_killed_while_creating_a_batch_the_resumed_run_finds_it(
    built, batch_server, cli, cache_dir, tmp_path, provider
):
    """The create reached the provider, its answer never reached the run: the batch is found by
    listing the provider's batches, and followed; nothing is sent again."""
    out = tmp_path / "run"
    args = run_args(built("agent"), batch_server, out, provider, "--eval", "plain", "--repeat", "2", "--batch", *POLL)
    batch_server.process(BatchScript(processing=0.05))
    killed_at(batch_server, "create", args, cache_dir)
    assert len(batch_server.batches) == 1 and not read_jsonl(out / "responses.jsonl")
    resumed = cli(*run_args(built("agent"), batch_server, out, provider, "--resume"), env=env())
    assert resumed.code == 0, resumed.stderr
    assert "whose create's answer was lost; it is followed as this run's" in resumed.stderr
    assert len(batch_server.batches) == 1  # no second batch
    once_each(batch_server)
    records = recorded_once(out, 8)
    (batch_id,) = batch_server.batches
    assert {r["batch"][0]["batch"] for r in records} == {batch_id}


def test_killed_after_uploading_but_before_creating_nothing_is_held_and_all_is_sent_once(
    built, batch_server, cli, cache_dir, tmp_path
):
    out = tmp_path / "run"
    args = run_args(built("agent"), batch_server, out, "openai", "--eval", "plain", "--batch", *POLL)
    killed_at(batch_server, "upload", args, cache_dir)
    assert len(batch_server.files) == 1 and not batch_server.batches  # an input file, no batch
    resumed = cli(*run_args(built("agent"), batch_server, out, "openai", "--resume"), env=env())
    assert resumed.code == 0, resumed.stderr
    assert len(batch_server.batches) == 1 and len(batch_server.files) == 2
    once_each(batch_server)
    recorded_once(out, 4)


def test_killed_while_polling_the_resumed_run_reattaches(built, batch_server, cli, cache_dir, tmp_path):
    out = tmp_path / "run"
    script_tools(batch_server)
    cases = ("--case", "orders.a1", "--case", "plain.*")
    args = run_args(built("agent"), batch_server, out, "openai", *cases, "--batch", *POLL)
    killed_at(batch_server, "status", args, cache_dir)
    resumed = cli(*run_args(built("agent"), batch_server, out, "openai", "--resume"), env=env())
    assert resumed.code == 0, resumed.stderr
    assert [len(b.items) for b in batch_server.batches.values()] == [5, 1]  # the first re-attached, then round 2
    once_each(batch_server)
    records = {r["caseId"]: r for r in recorded_once(out, 5)}
    assert records["orders.a1"]["output"] == "Order A1 has shipped." and records["orders.a1"]["attempts"] == 1


def test_killed_while_reading_results_the_rest_is_read_again_and_recorded_once(
    built, batch_server, cli, cache_dir, tmp_path
):
    out = tmp_path / "run"
    script_tools(batch_server)
    cases = ("--case", "orders.*", "--case", "plain.*", "--repeat", "2")
    args = run_args(built("agent"), batch_server, out, "openai", *cases, "--batch", *POLL)
    gate = batch_server.gate("results", after=6)
    proc = start_cli(*args, cache=cache_dir, env=env())
    wait_until(lambda: gate.reached.is_set() or proc.poll() is not None, "the results to be half read")
    assert gate.reached.is_set(), proc.communicate()
    # what was read before the pause is taken on: recorded, or (a tool loop) its step journaled
    journal = out / "batches.jsonl"
    wait_until(
        lambda: (out / "responses.jsonl").exists()
        and len(read_jsonl(out / "responses.jsonl")) + journal.read_bytes().count(b'"e":"step"') >= 6,
        "the first six replies to be taken on",
    )
    before = len(read_jsonl(out / "responses.jsonl"))
    kill_group(proc)
    gate.release.set()
    assert 0 < before < 14
    resumed = cli(*run_args(built("agent"), batch_server, out, "openai", "--resume"), env=env())
    assert resumed.code == 0, resumed.stderr
    first = next(iter(batch_server.batches.values()))
    assert first.downloads == 2  # its results read again after the kill
    once_each(batch_server)
    records = {(r["caseId"], r["repeat"]): r for r in recorded_once(out, 14)}
    assert records[("orders.a1", 1)]["output"] == "Order A1 has shipped."
    assert records[("orders.a1", 1)]["steps"] == 2


def test_a_second_run_on_the_same_directory_is_refused(built, batch_server, cli, cache_dir, tmp_path):
    out = tmp_path / "run"
    gate = batch_server.gate("status")
    proc = start_cli(
        *run_args(built("agent"), batch_server, out, "openai", "--eval", "plain", "--batch", *POLL),
        cache=cache_dir,
        env=env(),
    )
    try:
        wait_until(lambda: gate.reached.is_set() or proc.poll() is not None, "the first run to poll")
        second = cli(*run_args(built("agent"), batch_server, out, "openai", "--resume"), env=env())
        assert second.code == 2 and "is in use: another trunchbull" in second.stderr
    finally:
        gate.release.set()
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    once_each(batch_server)
    recorded_once(out, 4)


def test_a_create_answered_with_an_error_after_it_made_the_batch_is_followed(built, batch_server, cli, tmp_path):
    """No kill: the provider made the batch and answered 500. The run lists its batches, finds
    it, and follows it: nothing is sent twice."""
    out = tmp_path / "run"
    batch_server.lose_creates = 1
    run = cli(
        *run_args(built("agent"), batch_server, out, "anthropic", "--eval", "plain", "--batch", *POLL),
        env=env("anthropic"),
    )
    assert run.code == 0, run.stderr
    assert "the answer to creating a batch of 4 request(s) was lost" in run.stderr
    assert len(batch_server.batches) == 1
    once_each(batch_server)
    recorded_once(out, 4)
