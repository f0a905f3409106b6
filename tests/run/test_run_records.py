"""The run directory (SPEC §8.3, §8.4): records appended as samples finish,
resume after SIGKILL, the response cache, filters, repeats, and secrets."""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest

from tests.run.conftest import kill_group, read_jsonl, start_cli, wait_for_records, wait_until
from tests.support.chat_server import ChatServer, Reply

MODEL = "openai-compatible:test-model"


def args_for(release: Path, server, out: Path, *extra) -> list:
    return ["run", release, "--model", MODEL, "--base-url", server.url, "-o", out, *extra]


def test_run_directory_format(built, server, cli, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    run = cli(
        *args_for(
            release,
            server,
            out,
            "--eval",
            "plain",
            "--temperature",
            "0.2",
            "--max-tokens",
            "64",
            "--seed",
            "7",
            "--top-p",
            "0.9",
            "--json",
        )
    )
    assert run.code == 0, run.stderr  # plain.four's output lacks "echo": a failure, which is not an exit code
    assert sorted(p.name for p in out.iterdir()) == ["responses.jsonl", "results.jsonl", "run.json", "summary.json"]
    meta = orjson.loads((out / "run.json").read_bytes())
    manifest = orjson.loads((release / "release.json").read_bytes())
    assert meta["release"]["digest"] == manifest["digest"] and meta["release"]["title"] == "Agent fixture"
    assert meta["model"] == MODEL and meta["baseUrl"] == server.url
    assert meta["settings"] == {
        "temperature": 0.2,
        "maxTokens": 64,
        "topP": 0.9,
        "seed": 7,
        "maxSteps": 8,
        "timeout": 300.0,
        "toolTimeout": 30.0,
        "retries": 6,
        "concurrency": 16,
        "maxResponseBytes": 1048576,
        "maxToolResultBytes": 1048576,
    }
    assert meta["filters"] == {"eval": ["plain"], "case": [], "limit": None} and meta["repeat"] == 1
    assert meta["startedAt"] <= meta["finishedAt"] and meta["trunchbull"]
    # the call settings reached the server as the provider sends them
    body = server.received("[plain-one]")[0].body
    assert (body["temperature"], body["max_tokens"], body["seed"], body["top_p"]) == (0.2, 64, 7, 0.9)
    records = read_jsonl(out / "responses.jsonl")
    assert sorted(r["caseId"] for r in records) == ["plain.four", "plain.one", "plain.three", "plain.two"]
    assert set(records[0]) == {
        "caseId",
        "repeat",
        "output",
        "toolCalls",
        "toolResults",
        "steps",
        "finishReason",
        "usage",
        "latencyMs",
        "attempts",
        "cached",
        "error",
        "cost",
        "repaired",
        "batch",  # null: a live sample (with --batch, the batch of each request)
    }
    assert records[0]["cost"] is None and records[0]["repaired"] is None  # no price for this model: unknown, not 0
    results = read_jsonl(out / "results.jsonl")
    assert [r["caseId"] for r in results] == ["plain.one", "plain.two", "plain.three", "plain.four"]  # release order
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary == {k: v for k, v in run.json.items() if k not in ("runDir", "failUnder", "sources", "exitCode")}
    plain = summary["evals"]["plain"]
    assert (plain["samples"], plain["passed"], plain["failed"], plain["errors"]) == (4, 3, 1, 0)
    assert plain["passRate"] == 0.75 and plain["tokens"]["total"] > 0 and plain["latencyMs"]["p50"] > 0


def test_filters_union_and_intersection_and_limit(built, server, cli, tmp_path):
    release = built("agent")

    def cases(*extra) -> list[str]:
        out = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        run = cli(*args_for(release, server, out, *extra))
        assert run.code in (0, 1), run.stderr
        return [r["caseId"] for r in read_jsonl(out / "results.jsonl")]

    assert cases("--case", "plain.t*") == ["plain.two", "plain.three"]
    assert cases("--case", "plain.one", "--case", "orders.a*") == ["orders.a1", "plain.one"]  # union
    assert cases("--eval", "plain", "--case", "*o*") == ["plain.one", "plain.two", "plain.four"]  # intersection
    assert cases("--eval", "orders", "--eval", "plain", "--limit", "4") == [
        "orders.a1",
        "orders.b2",
        "orders.calls",
        "plain.one",
    ]


def test_repeats_and_pass_at_k(built, server, cli, tmp_path):
    release = built("agent")
    # plain.one passes 2 of 3 times (its second reply lacks the word)
    server.script("[plain-one]", [[Reply(content="echo"), Reply(content="nope"), Reply(content="echo")]])
    run = cli(
        *args_for(
            release,
            server,
            tmp_path / "run",
            "--case",
            "plain.one",
            "--case",
            "plain.two",
            "--repeat",
            "3",
            "-j",
            "1",
            "--json",
        )
    )
    assert run.code == 0, run.stderr
    results = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert [(r["caseId"], r["repeat"]) for r in results] == [
        ("plain.one", 0),
        ("plain.one", 1),
        ("plain.one", 2),
        ("plain.two", 0),
        ("plain.two", 1),
        ("plain.two", 2),
    ]
    overall = run.json["overall"]
    assert (overall["samples"], overall["cases"], overall["passed"], overall["failed"]) == (6, 2, 5, 1)
    # by hand: case means 2/3 and 1 → pass rate 5/6; pass@1 = mean(2/3, 1) = 5/6;
    # pass@2 = mean(1 - C(1,2)/C(3,2), 1) = 1; pass@3 = 1; pass^3 = mean(0, 1) = 0.5
    assert overall["passRate"] == pytest.approx(5 / 6, abs=1e-6)
    assert overall["passAtK"] == {"1": pytest.approx(5 / 6, abs=1e-6), "2": 1.0, "3": 1.0}
    assert overall["passHatK"] == 0.5
    # the interval: n_eff from the 6 samples is 6, but only one case lies below 1 (df = 1), so the
    # Korn-Graubard factor (1.959964 / 12.7062)² brings it under the 2 cases: the continuity-corrected
    # Wilson interval for 5/6 over 2, Wilson's lower bound at 5/6 - 1/4 and its upper bound at 5/6 + 1/4 (→ 1)
    z2, p, n = 1.959964**2, 5 / 6 - 1 / 4, 2
    center, half = (
        (p + z2 / (2 * n)) / (1 + z2 / n),
        1.959964 / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)) ** 0.5,
    )
    assert overall["passRateCI"] == pytest.approx([center - half, 1.0], abs=1e-5)


def _slow_release_run(release, server, out, cache_dir, *extra):
    return start_cli(
        *args_for(release, server, out, "--eval", "plain", "--repeat", "10", "-j", "4", *extra), cache=cache_dir
    )


def test_sigkill_mid_run_then_resume_loses_nothing_and_repeats_nothing(built, cli, cache_dir, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    with ChatServer(default_delay=0.15) as server:
        proc = _slow_release_run(release, server, out, cache_dir)
        log = out / "responses.jsonl"
        wait_for_records(log, 8)
        kill_group(proc)  # the CLI and its workers, at once
        before = log.read_bytes()
        recorded = [orjson.loads(line) for line in before.split(b"\n")[:-1]]
        # a request the killed run sent may still be in the server's socket: count it with the run's
        wait_until(lambda: server.open_connections() == 0, "the killed run's connections to close")
        requests_before = len(server.received())
        assert 8 <= len(recorded) < 40
        assert not (out / "results.jsonl").exists()

        resumed = cli(*args_for(release, server, out, "--resume", "--json"))
        assert resumed.code == 0, resumed.stderr
        after = read_jsonl(log)
        assert log.read_bytes().startswith(before.rsplit(b"\n", 1)[0])  # what was recorded is kept as it was
        keys = Counter((r["caseId"], r["repeat"]) for r in after)
        assert len(keys) == 40 and max(keys.values()) == 1  # all samples, no duplicate
        # only the samples not yet recorded were requested again
        assert len(server.received()) - requests_before == 40 - len(recorded)
        assert resumed.json["overall"]["samples"] == 40
        meta = orjson.loads((out / "run.json").read_bytes())
        assert meta["resumes"] == 1 and meta["finishedAt"]


def test_a_torn_last_line_is_dropped_on_resume(built, server, cli, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    assert cli(*args_for(release, server, out, "--eval", "plain")).code == 0
    lines = (out / "responses.jsonl").read_bytes().split(b"\n")[:-1]
    (out / "responses.jsonl").write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][:25])  # a crash mid-write
    requests = len(server.received())
    resumed = cli(*args_for(release, server, out, "--resume", "--no-cache"))
    assert resumed.code == 0, resumed.stderr
    after = read_jsonl(out / "responses.jsonl")
    assert len(after) == 4 and after[:2] == [orjson.loads(line) for line in lines[:2]]
    assert len(server.received()) - requests == 2


def test_resume_with_different_settings_is_a_usage_error(built, server, cli, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    assert cli(*args_for(release, server, out, "--case", "plain.one", "--temperature", "0.5")).code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = cli(*args_for(release, server, out, "--case", "plain.one"))
    assert again.code == 2 and "not empty" in again.stderr and "--resume" in again.stderr
    differs = cli(*args_for(release, server, out, "--case", "plain.*", "--temperature", "0.7", "--resume"))
    assert differs.code == 2
    assert "--temperature 0.7 (the run has 0.5)" in differs.stderr and "--case" in differs.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing touched
    # options not given are the run's own; -j may differ
    same = cli("run", release, "-o", out, "--resume", "-j", "3")
    assert same.code == 0, same.stderr


def test_rerun_errors(built, server, cli, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    server.script("[plain-one]", [[Reply(status=400), Reply(content="echo fixed")]])
    assert cli(*args_for(release, server, out, "--case", "plain.one", "--case", "plain.two")).code == 1
    assert cli(*args_for(release, server, out, "--resume")).code == 1  # errors stay without --rerun-errors
    fixed = cli(*args_for(release, server, out, "--resume", "--rerun-errors"))
    assert fixed.code == 0, fixed.stderr
    records = read_jsonl(out / "responses.jsonl")
    assert sorted(r["caseId"] for r in records) == ["plain.one", "plain.two"]
    assert next(r for r in records if r["caseId"] == "plain.one")["output"] == "echo fixed"


def test_response_cache_hit_miss_and_no_cache(built, server, cli, cache_dir, tmp_path):
    release = built("agent")
    server.script("[plain-two]", [Reply(status=400)])  # an error: never cached
    first = cli(*args_for(release, server, tmp_path / "a", "--eval", "plain"))
    assert first.code == 1
    sent = len(server.received())
    assert sent == 4

    second = cli(*args_for(release, server, tmp_path / "b", "--eval", "plain"))
    assert len(server.received()) == sent + 1  # only the errored sample was asked again
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "b" / "responses.jsonl")}
    original = {r["caseId"]: r for r in read_jsonl(tmp_path / "a" / "responses.jsonl")}
    for case_id in ("plain.one", "plain.three", "plain.four"):
        assert records[case_id]["cached"] is True
        assert {k: v for k, v in records[case_id].items() if k != "cached"} == {
            k: v for k, v in original[case_id].items() if k != "cached"
        }  # original latency and usage
    assert records["plain.two"]["cached"] is False and records["plain.two"]["error"]["kind"] == "provider"
    assert second.code == 1

    # a different setting is a different key: a miss
    cli(*args_for(release, server, tmp_path / "c", "--eval", "plain", "--temperature", "0.3"))
    assert len(server.received()) == sent + 1 + 4
    # --no-cache neither reads nor writes
    cli(*args_for(release, server, tmp_path / "d", "--eval", "plain", "--no-cache"))
    assert len(server.received()) == sent + 1 + 4 + 4
    assert all(r["cached"] is False for r in read_jsonl(tmp_path / "d" / "responses.jsonl"))
    assert (cache_dir / "responses.sqlite3").exists()


def test_api_key_is_sent_as_a_bearer_token_and_written_nowhere(built, server, cli, cache_dir, tmp_path):
    release = built("agent")
    key = "sk-trunchbull-test-0123456789"
    # a provider error that quotes the key back
    server.script("[plain-two]", [Reply(status=401, error_body={"error": {"message": f"Incorrect API key: {key}"}})])
    run = cli(
        *args_for(release, server, tmp_path / "run", "--eval", "plain", "--api-key-env", "MY_TEST_KEY"),
        env={"MY_TEST_KEY": key},
    )
    assert run.code == 1
    assert {r.headers["authorization"] for r in server.received()} == {f"Bearer {key}"}
    assert key not in run.stdout and key not in run.stderr
    for directory in (tmp_path / "run", cache_dir):
        for path in directory.rglob("*"):
            if path.is_file():
                assert key.encode() not in path.read_bytes(), path
    record = next(r for r in read_jsonl(tmp_path / "run" / "responses.jsonl") if r["caseId"] == "plain.two")
    assert "[redacted]" in record["error"]["message"] and "HTTP 401" in record["error"]["message"]
    assert orjson.loads((tmp_path / "run" / "run.json").read_bytes())["apiKeyEnv"] == "MY_TEST_KEY"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_keeps_the_records_and_leaves_no_process(built, cache_dir, tmp_path, signum):
    release = built("agent")
    out = tmp_path / "run"
    with ChatServer(default_delay=0.2) as server:
        proc = _slow_release_run(release, server, out, cache_dir)
        log = out / "responses.jsonl"
        wait_for_records(log, 4)
        os.killpg(proc.pid, signum)  # as a terminal's Ctrl-C does: the whole group
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    # the command to continue is the one the user ran (here `python -m trunchbull`)
    assert f"Continue with: {Path(sys.executable).name} -m trunchbull run … -o {out} --resume" in stderr
    records = read_jsonl(log)
    assert len(records) >= 4 and len({(r["caseId"], r["repeat"]) for r in records}) == len(records)
    assert not group_alive(proc.pid)


def group_alive(pgid: int) -> bool:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def comparable(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in ("repeat", "durationMs")} for row in rows]


def test_a_remote_model_is_graded_as_it_runs_exactly_as_grade_grades_its_responses(built, server, cli, tmp_path):
    """A model called over the network is graded round by round while the run
    goes on (64 records at a time); echo is graded at the end. Both give the
    rows `trunchbull grade` gives for the same responses, in release order,
    built-in and custom evaluators alike."""
    release = built("mixed")
    remote, echo = tmp_path / "remote", tmp_path / "echo"
    assert cli(*args_for(release, server, remote, "-j", "8", "--no-cache")).code == 0
    assert cli("run", release, "--model", "echo", "-o", echo, "--no-cache").code == 0
    assert len(server.requests) == 160
    for run_dir in (remote, echo):
        results = read_jsonl(run_dir / "results.jsonl")
        graded = tmp_path / f"{run_dir.name}.graded.jsonl"
        assert cli("grade", release, run_dir / "responses.jsonl", "-o", graded).code == 0
        assert comparable(results) == comparable(read_jsonl(graded))
        assert [r["caseId"] for r in results] == [f"b{i:03d}" for i in range(120)] + [f"j{i:02d}" for i in range(40)]
        outcomes = Counter((r["evaluator"], r["outcome"]) for r in results)
        assert outcomes == {
            ("contains", "pass"): 40,
            ("non_empty", "pass"): 40,
            ("exact", "fail"): 40,
            ("custom", "pass"): 14,
            ("custom", "fail"): 26,
        }
        summary = orjson.loads((run_dir / "summary.json").read_bytes())["overall"]
        assert (summary["samples"], summary["passed"], summary["errors"]) == (160, 94, 0)


SPINNING_EVALUATOR = """export default {
  id: "spin",
  prompt: "Say something.",
  evaluate() { while (true) {} },
}
"""


def test_an_interrupt_while_grading_says_every_sample_is_recorded(cli, cache_dir, tmp_path):
    """A signal once every sample is recorded (here while a custom evaluator
    spins, which the pool stops only after 5 s) keeps the records: the message
    says so and how to continue, not that nothing was written."""
    benchmark = tmp_path / "bench"
    (benchmark / "evals").mkdir(parents=True)
    (benchmark / "evals" / "spin.ts").write_text(SPINNING_EVALUATOR)
    built = cli("build", benchmark, "-o", tmp_path / "release")
    assert built.code == 0, built.stderr
    out = tmp_path / "run"
    proc = start_cli("run", tmp_path / "release", "--model", "echo", "-o", out, "--repeat", "2", cache=cache_dir)
    wait_for_records(out / "responses.jsonl", 2, proc=proc)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert f"trunchbull: interrupted; 2 of 2 samples are recorded in {out}." in stderr
    assert "--resume" in stderr and "nothing was written" not in stderr and "Traceback" not in stderr
    assert len(read_jsonl(out / "responses.jsonl")) == 2
    assert not (out / "results.jsonl").exists()
    assert not group_alive(proc.pid)
