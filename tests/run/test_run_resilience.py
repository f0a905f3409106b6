"""No server reply or odd byte sinks a run or stalls the other samples: a
local server that misbehaves in a different way for each sample (every way
seen from real servers and gateways, those that once broke a run and those
that never did), with good samples in flight on the same worker. The run
ends with exit 0/1 and no traceback, one valid record per sample, the
expected outcome and error kind for each, the good samples not held up,
no process left behind, no process of the run past 512 MiB, and `grade`,
`report` and `export` of its directory succeed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import orjson
import pytest

from tests.conftest import REPO
from tests.run.conftest import cli_env, read_jsonl
from tests.support.chat_server import Reply
from trunchbull.rundir.schema import FIELDS, MAX_RECORD_BYTES, record_problem

MODEL = "openai-compatible:test-model"
MAX_BYTES = 64 * 1024  # --max-response-bytes and --max-tool-result-bytes in these runs


def completion(content: str | None, tool_calls: list | None = None) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-raw",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def raw_text_reply(json_text: str) -> bytes:
    """A completion whose content is `json_text`, a JSON string literal written as given."""
    body = json.dumps(completion("PLACEHOLDER")).encode()
    return body.replace(b'"PLACEHOLDER"', json_text.encode("latin-1"))


AFTER_TOOL = Reply(content="fine after the tool")
# name → (the server's steps, the record's error kind or None, what else to check)
HOSTILE: dict[str, tuple[list, str | None]] = {
    "surrogate": ([Reply(raw=raw_text_reply('"half a pair: \\ud800 and the rest"'))], None),
    "not-utf8": ([Reply(raw=raw_text_reply('"bytes \xff\xfe are not UTF-8"'))], None),
    "bomb": ([Reply(gzip_bomb=1 << 30)], "response-too-large"),
    "huge-body": ([Reply(raw=json.dumps(completion("y" * (40 << 20))).encode())], "response-too-large"),
    "reset": ([Reply(reset=True)], "connection"),
    "truncated": ([Reply(content="this reply is cut off after a few bytes", truncate=25)], "connection"),
    "deep-args": ([Reply(tool_calls=[("lookup", "[" * 20_000 + "]" * 20_000)]), AFTER_TOOL], None),
    "huge-args": ([Reply(tool_calls=[("lookup", json.dumps({"key": "k" * (MAX_BYTES * 2)}))]), AFTER_TOOL], None),
    "bad-args": ([Reply(tool_calls=[("lookup", '{"key": "unterminated')]), AFTER_TOOL], None),
    "wrong-type": ([Reply(tool_calls=[("lookup", "[1, 2, 3]")]), AFTER_TOOL], None),
    "unknown-tool": ([Reply(tool_calls=[("no_such_tool", {"key": "k"})]), AFTER_TOOL], None),
    "huge-tool": ([Reply(tool_calls=[("huge_result", {})]), AFTER_TOOL], None),
    "invalid-json": ([Reply(raw=b'{"choices": [{"message": ')], "provider"),
    "html": ([Reply(raw=b"<html><body><h1>502 Bad Gateway</h1></body></html>", status=502)], "provider"),
    "empty-choices": ([Reply(raw=json.dumps({**completion("x"), "choices": []}).encode())], "provider"),
    "http-401": ([Reply(status=401, error_body={"error": {"message": "invalid key"}})], "provider"),
    "http-503": ([Reply(status=503)], "provider"),
    "object-args": ([Reply(tool_calls=[("lookup", {"key": "k"})], arguments_as_object=True)], "provider"),
    # answered late on purpose: the good samples' tool loops are all done on the server before it is
    "slow": ([Reply(content="fine, but slowly", delay=5)], None),
}


DEADLINE_S = 240  # the run's bound: far past what it needs (~10 s), short of every sample's --timeout 60 in sequence


def run_on_one_worker(release, server, out, cache, *extra) -> subprocess.CompletedProcess:
    """`trunchbull run` on one core, so that the run has one worker: every
    sample shares it with every other. Run under tests/fuzz/reaper.py, whose
    report (`out`.reaper.json: hung, leftover processes, the largest
    process's peak RSS) the caller checks."""
    report = out.parent / f"{out.name}.reaper.json"
    args = [
        sys.executable, "-m", "tests.fuzz.reaper", str(report), str(DEADLINE_S), "--",
        sys.executable, "-m", "trunchbull", "run", str(release), "--model", MODEL, "--base-url", server.url,
        "-o", str(out), "--retries", "0", "--max-response-bytes", str(MAX_BYTES),
        "--max-tool-result-bytes", str(MAX_BYTES), *map(str, extra),
    ]  # fmt: skip
    env = cli_env(cache)
    env["PYTHONPATH"] = f"{env['PYTHONPATH']}{os.pathsep}{REPO}"
    done = subprocess.run(
        args,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=DEADLINE_S + 60,
        preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),
    )
    reaped = orjson.loads(report.read_bytes())
    assert not reaped["hung"] and reaped["leftover"] == [], reaped
    done.returncode = reaped["returncode"]
    done.max_rss_mib = reaped["maxRssKiB"] / 1024  # type: ignore[attr-defined]
    return done


def check_records(path) -> dict[str, dict]:
    lines = path.read_bytes().splitlines()
    for line in lines:
        assert len(line) <= MAX_RECORD_BYTES
        line.decode("utf-8")  # strict
    records = [orjson.loads(line) for line in lines]  # orjson: what every reader uses
    for record in records:
        assert tuple(record) == FIELDS, record
        assert record_problem(record) is None, record_problem(record)
    by_case = {r["caseId"]: r for r in records}
    assert len(by_case) == len(records)  # one record per sample
    return by_case


def test_misbehaving_replies_end_only_their_own_samples(built, server, cache_dir, tmp_path):
    release = built("unruly")
    for name, (steps, _kind) in HOSTILE.items():
        server.script(f"[bad-{name}]", steps)
    for i in range(8):
        server.script(
            f"[good-{i}]", [Reply(tool_calls=[("lookup", {"key": f"k{i}"})]), Reply(content=f"fine, good sample {i}")]
        )
    out = tmp_path / "run"
    run = run_on_one_worker(release, server, out, cache_dir, "-j", "40", "--timeout", "60")  # every case
    assert run.returncode == 1, run.stderr  # samples ended in error
    assert "Traceback" not in run.stderr
    # memory: no process of the run's tree (the worker that read the gzip bomb, the
    # 40 MB body and the 50 MB tool result included) went past 512 MiB: the executor
    # cuts the 50 MB result to --max-tool-result-bytes before sending it
    assert run.max_rss_mib < 512, run.max_rss_mib

    records = check_records(out / "responses.jsonl")
    assert set(records) == {f"hostile.{n}" for n in HOSTILE} | {f"good.{i}" for i in range(8)} | {
        f"text.{i}" for i in range(6)
    }
    kinds = {name: (records[f"hostile.{name}"]["error"] or {}).get("kind") for name in HOSTILE}
    assert kinds == {name: kind for name, (_steps, kind) in HOSTILE.items()}
    for i in range(8):
        good = records[f"good.{i}"]
        assert good["error"] is None and good["output"] == f"fine, good sample {i}" and good["attempts"] == 1
        assert good["toolResults"] == [{"toolCallId": good["toolCalls"][0]["toolCallId"], "toolName": "lookup",
                                        "output": {"key": f"k{i}", "value": "found"}}]  # fmt: skip

    # the text UTF-8 cannot hold became U+FFFD, and the record says so
    surrogate = records["hostile.surrogate"]
    assert surrogate["output"] == "half a pair: \ufffd and the rest"
    assert surrogate["repaired"] == ["unencodable-text"]
    assert records["hostile.not-utf8"]["output"] == "bytes \ufffd\ufffd are not UTF-8"
    # malformed tool calls went back to the model as tool errors; the model answered after them
    for name in ("deep-args", "huge-args", "bad-args", "wrong-type", "unknown-tool"):
        record = records[f"hostile.{name}"]
        assert record["output"] == "fine after the tool" and record["steps"] == 2, (name, record)
        (result,) = record["toolResults"]
        assert "error" in result and "output" not in result, (name, result)
        second = server.received(f"[bad-{name}]")[1].body["messages"]
        assert any(m["role"] == "tool" for m in second), name  # the model was told
    assert "nested 20,000 levels deep" in records["hostile.deep-args"]["toolResults"][0]["error"]
    assert "--max-response-bytes" in records["hostile.huge-args"]["toolResults"][0]["error"]
    # the 50 MB tool result was cut, for the model and the record, with a marker
    huge = records["hostile.huge-tool"]
    (result,) = huge["toolResults"]
    assert result["output"].startswith("x" * 1000) and "--max-tool-result-bytes" in result["output"]
    assert len(result["output"].encode()) < MAX_BYTES + 200
    assert huge["repaired"] == ["tool-result-truncated"]
    (tool_message,) = [m for m in server.received("[bad-huge-tool]")[1].body["messages"] if m["role"] == "tool"]
    assert "--max-tool-result-bytes" in tool_message["content"] and len(tool_message["content"]) < MAX_BYTES + 300
    assert "a compression bomb" in records["hostile.bomb"]["error"]["message"]
    assert "16,777,216 bytes" in records["hostile.huge-body"]["error"]["message"]

    # The good samples were not held up by the hostile replies on their worker:
    # as the server saw it, each one's second step (sent once the worker had
    # read the first reply and run the tool) came before the slow sample's
    # one reply went out, 5 s after every sample had started. A reply that
    # blocked the worker's loop for longer (as a gzip bomb or a large body
    # once did, for ~10 s) would put them after it.
    (slow,) = server.received("[bad-slow]")
    for i in range(8):
        _first, second = server.received(f"[good-{i}]")
        assert second.started < slow.ended, i
    assert records["hostile.slow"]["error"] is None

    # the run directory is usable by every reader
    results = read_jsonl(out / "results.jsonl")
    assert len(results) == len(records)
    outcomes = {r["caseId"]: r["outcome"] for r in results}
    assert all(outcomes[f"good.{i}"] == "pass" for i in range(8))
    assert {outcomes[f"hostile.{n}"] for n, (_s, kind) in HOSTILE.items() if kind} == {"error"}
    env = cli_env(cache_dir)
    for command in (
        ["report", str(out), "-o", str(tmp_path / "report.html")],
        ["export", str(out), "--format", "junit"],
        ["export", str(out), "--format", "csv"],
        ["grade", str(release), str(out / "responses.jsonl"), "-o", str(tmp_path / "graded.jsonl")],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "trunchbull", *command], capture_output=True, text=True, env=env, cwd=REPO
        )
        assert done.returncode in (0, 1), (command, done.stderr)
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("damage", [b"{not json at all", b'{"caseId": "good.3", "repeat": 0, "output": 7}'])
def test_a_damaged_line_is_reported_and_resume_reruns_only_its_sample(built, server, cache_dir, tmp_path, damage):
    release = built("unruly")
    out = tmp_path / "run"
    first = run_on_one_worker(release, server, out, cache_dir, "--eval", "good", "--no-cache")
    assert first.returncode == 0, first.stderr
    log = out / "responses.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if b'"good.3"' in line)
    lines[number] = damage + b"\n"
    log.write_bytes(b"".join(lines))

    report = subprocess.run(
        [sys.executable, "-m", "trunchbull", "report", str(out), "-o", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        env=cli_env(cache_dir),
        cwd=REPO,
    )
    assert report.returncode in (0, 1), report.stderr
    assert f"responses.jsonl:{number + 1}: a damaged record" in report.stderr

    before = len(server.received())
    again = run_on_one_worker(release, server, out, cache_dir, "--resume", "--no-cache")
    assert again.returncode in (0, 1), again.stderr
    assert f"responses.jsonl:{number + 1}: a damaged record" in again.stderr
    assert len(server.received()) == before + 1  # that sample only
    assert server.received()[-1].body["messages"][-1]["content"].startswith("[good-3]")
    records = check_records(log)
    assert len(records) == 8 and records["good.3"]["error"] is None


def test_a_record_past_the_record_limit_is_cut_to_fit(built, server, cache_dir, tmp_path):
    """Two tool results of 20 MB each (the tool result limit raised to let
    them through) make a record above MAX_RECORD_BYTES: its largest parts are
    cut, with a marker, until it fits; it is still the sample's answer."""
    release = built("unruly")
    server.script(
        "[bad-huge-args]",
        [Reply(tool_calls=[("huge_result", {}), ("huge_result", {})]), Reply(content="fine after two huge results")],
    )
    out = tmp_path / "run"
    run = run_on_one_worker(
        release,
        server,
        out,
        cache_dir,
        "--case",
        "hostile.huge-args",
        "--max-tool-result-bytes",
        20_000_000,
    )
    assert run.returncode == 0, run.stderr
    (record,) = check_records(out / "responses.jsonl").values()
    assert record["error"] is None and record["output"] == "fine after two huge results"
    assert record["repaired"] == ["record-truncated", "tool-result-truncated"]
    first, second = (result["output"] for result in record["toolResults"])
    assert "--max-tool-result-bytes" in second and "its largest parts were cut" in first
    assert len(first) < len(second)  # the first (largest, then) was cut once more to fit
