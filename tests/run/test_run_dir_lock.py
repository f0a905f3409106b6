"""One writer per run directory (SPEC §8.4): two `--resume` of one killed run
at once, and a resume after its holder was SIGKILLed. Which process holds the
lock is set by structure, not by timing: the server holds the replies of one
eval's samples until the test releases them, so a run stays in progress, its
lock held, for as long as the test needs."""

from __future__ import annotations

import threading
from collections import Counter

from tests.run.conftest import kill_group, read_jsonl, start_cli, wait_for_records, wait_until
from tests.run.test_run_records import args_for
from tests.support.chat_server import ChatServer, Reply

HELD = "[plain-four]"  # 3 of the 12 samples (plain.four × 3 repeats) wait for the gate


def test_two_resumes_at_once_one_proceeds_and_a_killed_holder_is_resumed(built, cli, cache_dir, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    log = out / "responses.jsonl"
    gate = threading.Event()
    with ChatServer() as server:
        server.script(HELD, [Reply(content="echo four, at last", hold=gate)])
        try:
            # the first run records the 9 samples answered at once, then waits on the 3 held (-j 4: a slot
            # is always free for the others); it is killed there
            first = start_cli(
                *args_for(release, server, out, "--eval", "plain", "--repeat", "3", "-j", "4"), cache=cache_dir
            )
            wait_for_records(log, 9, proc=first)
            wait_until(lambda: len(server.received(HELD)) == 3, "the first run's 3 held requests")
            kill_group(first)
            assert len(read_jsonl(log)) == 9

            # a resume takes the lock and waits on the same 3 held samples
            holder = start_cli("run", release, "-o", out, "--resume", cache=cache_dir)
            wait_until(lambda: len(server.received(HELD)) == 6, "the resume's 3 held requests")
            sent = len(server.received())

            # a second resume meanwhile: refused, naming the holder, having sent nothing
            second = cli("run", release, "-o", out, "--resume")
            assert second.code == 2, second.stderr
            assert f"is in use: another trunchbull (PID {holder.pid})" in second.stderr
            assert "Traceback" not in second.stderr
            assert len(server.received()) == sent
            # nor may `grade --run-dir` write there meanwhile
            answers = tmp_path / "answers.jsonl"
            answers.write_text('{"caseId": "plain.one", "output": "echo"}\n')
            graded = cli("grade", release, answers, "--run-dir", out)
            assert graded.code == 2 and f"(PID {holder.pid})" in graded.stderr, graded.stderr
            assert holder.poll() is None  # the holder goes on

            # the holder is SIGKILLed: its lock file stays behind, naming a dead process ...
            kill_group(holder)
            assert (out / ".lock").read_text() == f"{holder.pid}\n"
            assert len(read_jsonl(log)) == 9
        finally:
            gate.set()
        # ... and blocks nothing: the next resume runs the 3 samples left, and completes
        resumed = cli("run", release, "-o", out, "--resume", "--json")
        assert resumed.code == 0, resumed.stderr
        assert len(server.received(HELD)) == 9
    records = read_jsonl(log)
    keys = Counter((r["caseId"], r["repeat"]) for r in records)
    assert len(records) == 12 and len(keys) == 12  # every sample once, no duplicate
    assert {r["output"] for r in records if r["caseId"] == "plain.four"} == {"echo four, at last"}
    assert resumed.json["overall"]["samples"] == 12
    assert not (out / ".lock").exists()
    assert cli("export", out, "--format", "csv").code == 0  # the run reads back
