"""Batch mode when things go wrong (SPEC §8.8): a request that fails in a
batch is sent again in a later batch up to --retries, then recorded as an
error of its kind; a batch that expires has only its unfinished requests
sent again; a results download that breaks off is read again; cancelled
batches (--resume --cancel-batches) keep what they finished, and the rest
is sent by the next --resume."""

from __future__ import annotations

import threading

from tests.run.conftest import kill_group, read_jsonl, start_cli, wait_until
from tests.run.test_run_batch import POLL, env, run_args
from tests.run.test_run_batch_resume import once_each, recorded_once
from tests.support.batch_server import BatchScript
from tests.support.chat_server import Reply


def statuses(record: dict) -> list[tuple[int, str]]:
    return [(entry["step"], entry["status"]) for entry in record["batch"]]


def test_a_failed_request_is_sent_again_in_a_later_batch(built, batch_server, cli, tmp_path):
    batch_server.script("[plain-one]", [[Reply(status=500), Reply(content="echo one", usage=(3, 2))]])
    out = tmp_path / "run"
    run = cli(*run_args(built("agent"), batch_server, out, "openai", "--eval", "plain", "--batch", *POLL), env=env())
    assert run.code == 0, run.stderr
    assert [len(b.items) for b in batch_server.batches.values()] == [4, 1]  # only the failed one again
    records = {r["caseId"]: r for r in recorded_once(out, 4)}
    one = records["plain.one"]
    assert one["output"] == "echo one" and one["attempts"] == 2 and one["error"] is None
    assert statuses(one) == [(0, "failed"), (0, "succeeded")]
    assert records["plain.two"]["attempts"] == 1


def test_a_request_that_keeps_failing_is_an_error_of_its_kind(built, batch_server, cli, tmp_path):
    batch_server.script("[plain-one]", [Reply(status=400)])
    batch_server.script("[plain-two]", [Reply(status=429)])
    out = tmp_path / "run"
    args = ("--eval", "plain", "--batch", "--retries", "1", *POLL)
    run = cli(*run_args(built("agent"), batch_server, out, "anthropic", *args), env=env("anthropic"))
    assert run.code == 1, run.stderr  # samples in error
    records = {r["caseId"]: r for r in recorded_once(out, 4)}
    one = records["plain.one"]
    assert one["error"]["kind"] == "provider" and "sent 2 time(s) in batches (--retries 1)" in one["error"]["message"]
    assert statuses(one) == [(0, "failed"), (0, "failed")] and one["attempts"] == 3
    assert [len(b.items) for b in batch_server.batches.values()] == [4, 2]
    graded = {g["caseId"]: g["outcome"] for g in read_jsonl(out / "results.jsonl")}
    assert graded["plain.one"] == "error" and graded["plain.three"] == "pass"


def test_an_expired_batch_has_only_its_unfinished_requests_sent_again(built, batch_server, cli, tmp_path):
    batch_server.process(BatchScript(finish=2, expire=True), BatchScript())
    out = tmp_path / "run"
    run = cli(*run_args(built("agent"), batch_server, out, "openai", "--eval", "plain", "--batch", *POLL), env=env())
    assert run.code == 0, run.stderr
    first, second = batch_server.batches.values()
    assert first.state == "expired" and len(second.items) == 2
    assert {i.key for i in second.items} == {i.key for i in first.items[2:]}  # the unfinished ones
    records = recorded_once(out, 4)
    # the requests the expired batch finished are recorded from it (billed, kept)
    kept = [r for r in records if statuses(r) == [(0, "succeeded")]]
    assert {r["batch"][0]["batch"] for r in kept} == {first.id} and len(kept) == 2
    again = [r for r in records if statuses(r) == [(0, "expired"), (0, "succeeded")]]
    assert len(again) == 2 and all(r["attempts"] == 2 for r in again)
    once_each_live(batch_server)


def once_each_live(server) -> None:
    """A request went to a second batch only after its first had ended without it."""
    seen: dict[tuple[str, int], str] = {}
    for _batch, _state, item in server.submitted():
        key = (item.custom_id.split("-")[0], item.step)
        assert key not in seen or seen[key] != "succeeded", key
        seen[key] = item.status


def test_a_broken_download_is_read_again(built, batch_server, cli, tmp_path):
    batch_server.process(BatchScript(pieces=3, cut_after=2))
    out = tmp_path / "run"
    run = cli(
        *run_args(built("agent"), batch_server, out, "openai", "--eval", "plain", "--repeat", "2", "--batch", *POLL),
        env=env(),
    )
    assert run.code == 0, run.stderr
    assert "reading its results broke off" in run.stderr
    (batch,) = batch_server.batches.values()
    assert batch.downloads == 2
    once_each(batch_server)
    recorded_once(out, 8)


def test_cancelled_batches_keep_what_they_finished_and_the_rest_is_sent_on_resume(
    built, batch_server, cli, cache_dir, tmp_path
):
    hold = threading.Event()  # the batch never ends by itself
    batch_server.process(BatchScript(hold=hold, finish=1), BatchScript())
    out = tmp_path / "run"
    proc = start_cli(
        *run_args(built("agent"), batch_server, out, "openai", "--eval", "plain", "--batch", *POLL),
        cache=cache_dir,
        env=env(),
    )
    wait_until(lambda: batch_server.batches or proc.poll() is not None, "a batch to be created")
    journal = out / "batches.jsonl"
    wait_until(lambda: journal.exists() and b'"e":"batch"' in journal.read_bytes(), "its reference to be journaled")
    kill_group(proc)
    cancel = cli(*run_args(built("agent"), batch_server, out, "openai", "--resume", "--cancel-batches"), env=env())
    assert cancel.code == 130, cancel.stderr
    assert "cancellation asked for" in cancel.stderr and "3 sample(s) are not" in cancel.stderr
    (first,) = batch_server.batches.values()
    assert first.state == "cancelled"
    (kept,) = read_jsonl(out / "responses.jsonl")
    assert statuses(kept) == [(0, "succeeded")]
    resumed = cli(*run_args(built("agent"), batch_server, out, "openai", "--resume"), env=env())
    assert resumed.code == 0, resumed.stderr
    second = list(batch_server.batches.values())[1]
    assert len(second.items) == 3
    records = recorded_once(out, 4)
    assert sorted(statuses(r)[0][1] for r in records) == ["cancelled", "cancelled", "cancelled", "succeeded"]
    assert all(r["attempts"] == 1 for r in records)  # a cancelled request is not a failed attempt


def test_a_refused_create_made_no_batch_and_is_sent_again(built, batch_server, cli, tmp_path):
    batch_server.refuse_creates = 1
    out = tmp_path / "run"
    run = cli(*run_args(built("agent"), batch_server, out, "anthropic", "--eval", "plain", "--batch", *POLL), env=env())
    assert run.code == 0, run.stderr
    assert "a batch of 4 request(s) was refused" in run.stderr
    assert len(batch_server.batches) == 1  # the second create
    records = recorded_once(out, 4)
    assert all(statuses(r) == [(0, "succeeded")] and r["attempts"] == 2 for r in records)
