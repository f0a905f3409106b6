"""Tools that print without end (fixtures/chatty), through the real
`trunchbull run`: the run completes with the right outcomes, the tool
executors' output goes through a pipe kept within its cap in memory (no log
file grows on disk), and neither the CLI nor the executors grow with what was
printed (measured from outside: tests/support/process_watch.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.run.conftest import cli_env, read_jsonl
from tests.support.chat_server import Reply
from tests.support.process_watch import ProcessWatch

MIB = 1 << 20
MODEL = "openai-compatible:test-model"


def _run(release, server, cache_dir, out, *options: str) -> tuple[subprocess.Popen, bytes, ProcessWatch]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "trunchbull", "run", str(release), "--model", MODEL, "--base-url", server.url]
        + ["-o", str(out), "-j", "2", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(cache_dir),
    )
    with ProcessWatch(proc) as watch:
        _stdout, stderr = proc.communicate(timeout=600)
    return proc, stderr, watch


def _within_bounds(watch: ProcessWatch) -> None:
    # what the tools printed went through pipes, read within the cap
    executors = [s for s in watch.running("run/tool_executor.mjs") if "unshare" not in s.cmdline.split()[0]]
    assert executors, "no tool executor was seen"
    assert all(s.outputs <= {"pipe"} for s in watch.running("run/")), [
        (s.cmdline[:60], s.outputs) for s in watch.running("run/")
    ]
    assert all(s.largest_output_file == 0 for s in watch.seen.values())
    assert max(s.peak_kib for s in executors) * 1024 < 256 * MIB
    assert watch.root.peak_kib * 1024 < 160 * MIB, f"the CLI peaked at {watch.root.peak_kib} KiB"


def test_tools_printing_without_end_leave_the_run_its_outcomes_within_bounded_memory(
    built, server, cache_dir, tmp_path
):
    release = built("chatty")
    server.script("[chatty-chatter]", [Reply(tool_calls=[("chatter", {})]), Reply(content="never reached")])
    server.script("[chatty-loud]", [Reply(tool_calls=[("loud", {})]), Reply(content="loud and done")])
    # A tool that prints 150 MB and answers, under the default tool timeout (no race with it) ...
    proc, stderr, watch = _run(
        release, server, cache_dir, tmp_path / "loud", "--case", "chatty.loud", "--case", "chatty.plain"
    )
    assert proc.returncode == 0, stderr.decode()
    loud = {r["caseId"]: r for r in read_jsonl(tmp_path / "loud" / "responses.jsonl")}["chatty.loud"]
    assert loud["error"] is None and loud["output"] == "loud and done"
    assert loud["toolResults"][0]["output"] == {"printed": 100}
    results = {r["caseId"]: r["outcome"] for r in read_jsonl(tmp_path / "loud" / "results.jsonl")}
    assert results == {"chatty.loud": "pass", "chatty.plain": "pass"}
    _within_bounds(watch)
    # ... and one that prints without end until a short one stops it.
    proc, stderr, watch = _run(
        release, server, cache_dir, tmp_path / "chatter", "--case", "chatty.chatter", "--tool-timeout", "3"
    )
    assert proc.returncode == 1, stderr.decode()  # a sample ended in error
    records = {r["caseId"]: r for r in read_jsonl(tmp_path / "chatter" / "responses.jsonl")}
    assert records["chatty.chatter"]["error"]["kind"] == "tool-timeout"
    results = {r["caseId"]: r["outcome"] for r in read_jsonl(tmp_path / "chatter" / "results.jsonl")}
    assert results == {"chatty.chatter": "error"}
    _within_bounds(watch)
