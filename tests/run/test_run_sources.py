"""Where a run's samples came from, said in its summary: a re-run served
from the response cache says how many samples came from it and that their
latencies are the original calls'; `--resume` says how many samples it kept
and how many it ran. Real runs against the local model server, whose
request log is the oracle for what was called."""

from __future__ import annotations

import orjson

from tests.run.conftest import kill_group, read_jsonl, start_cli, wait_for_records, wait_until
from tests.support.chat_server import ChatServer

MODEL = "openai-compatible:test-model"


def run_args(release, server, out, *extra) -> list:
    return ["run", release, "--model", MODEL, "--base-url", server.url, "-o", out, "--eval", "plain", *extra]


def test_a_rerun_served_from_the_cache_says_so(built, server, cli, tmp_path):
    release = built("agent")
    first = cli(*run_args(release, server, tmp_path / "first", "--json"))
    assert first.code == 0, first.stderr
    called = len(server.received())
    assert first.json["sources"] == {"resumed": False, "kept": 0, "cached": 0, "called": called}
    assert "cache:" not in cli(*run_args(release, server, tmp_path / "other", "--no-cache")).stdout
    requests = len(server.received())

    again = cli(*run_args(release, server, tmp_path / "again"))
    assert again.code == 0, again.stderr
    assert len(server.received()) == requests  # nothing was called
    assert (
        f"cache: all {called} sample(s) run now came from the response cache, not the model; their latencies are "
        "those of the original calls (--no-cache calls the model again)"
    ) in again.stdout.splitlines()
    as_json = cli(*run_args(release, server, tmp_path / "json", "--json"))
    assert as_json.json["sources"] == {"resumed": False, "kept": 0, "cached": called, "called": 0}
    # the latencies shown are the original calls'
    assert as_json.json["overall"]["latencyMs"] == first.json["overall"]["latencyMs"]
    records = read_jsonl(tmp_path / "json" / "responses.jsonl")
    assert all(r["cached"] is True for r in records)
    # and the report of such a run says so too
    report = cli("report", tmp_path / "again", "-o", tmp_path / "r.html")
    assert report.code == 0, report.stderr
    assert (
        f"cache: {called} of {called} sample(s) came from the response cache when the run was made; their "
        "latencies are those of the original calls"
    ) in report.stdout.splitlines()
    assert cli("report", tmp_path / "json", "--json", "-o", tmp_path / "r.html").json["cachedSamples"] == called
    assert "cache:" not in cli("report", tmp_path / "first", "-o", tmp_path / "r.html").stdout


def test_resume_says_how_many_samples_it_kept_and_ran(built, cli, cache_dir, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    with ChatServer(default_delay=0.15) as server:
        proc = start_cli(*run_args(release, server, out, "--repeat", "10", "-j", "4", "--no-cache"), cache=cache_dir)
        wait_for_records(out / "responses.jsonl", 8, proc=proc)
        kill_group(proc)
        kept = len(read_jsonl(out / "responses.jsonl"))
        # a request the killed run sent may still be in the server's socket: count it with the run's
        wait_until(lambda: server.open_connections() == 0, "the killed run's connections to close")
        before = len(server.received())
        assert 8 <= kept < 40
        resumed = cli(*run_args(release, server, out, "--resume", "--json"))
        assert resumed.code == 0, resumed.stderr
        ran = len(server.received()) - before
    assert ran == 40 - kept
    assert resumed.json["sources"] == {"resumed": True, "kept": kept, "cached": 0, "called": ran}
    again = cli("run", release, "-o", out, "--resume")  # a finished run: everything kept, nothing run
    assert again.code == 0, again.stderr
    assert "resume: kept 40 sample(s) recorded before, ran 0 (0 from the response cache, 0 called the model)" in (
        again.stdout.splitlines()
    )
    meta = orjson.loads((out / "run.json").read_bytes())
    assert meta["resumes"] == 2


def test_a_run_made_with_no_cache_keeps_it_when_resumed(built, server, cli, tmp_path):
    from tests.support.chat_server import Reply

    release = built("agent")
    server.script("[plain-one]", [[Reply(status=400), Reply(content="echo fixed")]])
    uncached = tmp_path / "uncached"
    assert cli(*run_args(release, server, uncached, "--case", "plain.one", "--no-cache")).code == 1  # an error
    assert orjson.loads((uncached / "run.json").read_bytes())["cache"] is False
    # another run puts plain.one's answer in the response cache
    assert cli(*run_args(release, server, tmp_path / "cached", "--case", "plain.one")).code == 0
    requests = len(server.received())

    # resumed without --no-cache, the sample in error is asked again, not taken from the cache
    resumed = cli("run", release, "-o", uncached, "--resume", "--rerun-errors", "--json")
    assert resumed.code == 0, resumed.stderr
    assert len(server.received()) == requests + 1
    assert resumed.json["sources"] == {"resumed": True, "kept": 0, "cached": 0, "called": 1}
    assert orjson.loads((uncached / "run.json").read_bytes())["cache"] is False
    fresh = orjson.loads((tmp_path / "cached" / "run.json").read_bytes())
    assert fresh["cache"] is True
