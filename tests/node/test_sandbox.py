"""Sandboxed runs of user code (node/sandbox.py, `stream_sandboxed`) with
real Node: the protocol lines handed over as they come, the deadline, a
complete response, an overlong line, and stderr kept within its cap however
much the process prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trunchbull.node.bounded_output import HEAD_BYTES, TAIL_BYTES
from trunchbull.node.protocol import Channel
from trunchbull.node.sandbox import UNSHARE_KILLED_LINE, Running, SandboxResult, stream_sandboxed
from trunchbull.node.toolchain import JS_DIR, toolchain

from tests.support.process_watch import ProcessWatch

MIB = 1 << 20
CHANNEL = Channel("the test process", {b"ok": 1}, 64)
PRELUDE = f"""import {{ blockOnFullPipes }} from {(JS_DIR / "shared/blocking_output.mjs").as_uri()!r};
blockOnFullPipes(process.stderr);
"""


def run(tmp_path: Path, body: str, timeout: float = 60, on_line=None, watch: list | None = None) -> tuple:
    """Run `body` (after the prelude the sandboxed scripts have) in the sandbox; (result, lines)."""
    script = tmp_path / "script.mjs"
    script.write_text(PRELUDE + body)
    lines: list[bytes] = []

    def take(line: bytes) -> bool:
        lines.append(line)
        return bool(on_line and on_line(line))

    def spawned(running: Running) -> None:
        if watch is not None:
            watch.append(ProcessWatch(running.proc).__enter__())

    result = stream_sandboxed(
        script,
        [],
        take,
        channel=CHANNEL,
        read_paths=[tmp_path],
        timeout=timeout,
        tc=toolchain(),
        on_spawn=spawned,
    )
    for watching in watch or ():
        watching.__exit__()
    return result, lines


def test_lines_come_as_they_are_written_and_stderr_whole_when_small(tmp_path):
    result, lines = run(
        tmp_path,
        """console.error("starting");
process.stdout.write("ok\\t1\\n\\nok\\t2\\n");
console.error("done");
""",
    )
    assert isinstance(result, SandboxResult)
    assert (result.returncode, result.timed_out, result.complete, result.overlong) == (0, False, False, False)
    assert lines == [b"ok\t1", b"ok\t2"]  # blank lines are not handed over
    assert result.stderr.text() == "starting\ndone\n" and result.stderr.cut == 0


def test_stderr_past_the_cap_keeps_its_head_and_tail_and_counts_the_rest(tmp_path):
    result, lines = run(
        tmp_path,
        """process.stderr.write("the first line\\n");
const block = ("e".repeat(1023) + "\\n").repeat(1024);
for (let i = 0; i < 64; i++) process.stderr.write(block);
process.stderr.write("the last line\\n");
process.stdout.write("ok\\tdone\\n");
""",
    )
    assert result.returncode == 0 and lines == [b"ok\tdone"]
    total = len("the first line\n") + 64 * MIB + len("the last line\n")
    assert result.stderr.total == total
    assert len(result.stderr.head) == HEAD_BYTES and len(result.stderr.tail) == TAIL_BYTES
    assert result.stderr.cut == total - HEAD_BYTES - TAIL_BYTES
    excerpt = result.stderr.excerpt()
    assert excerpt.startswith("the first line\neeee") and excerpt.endswith("eeee\nthe last line")
    assert re.search(r"\n\[… [\d,]+ bytes not shown …\]\n", excerpt)


def test_a_process_printing_without_end_is_stopped_at_its_deadline_its_output_capped(tmp_path):
    watch: list[ProcessWatch] = []
    result, lines = run(
        tmp_path,
        """process.stdout.write("ok\\tstarted\\n");
console.error("the first line");
const line = "x".repeat(1_500_000);
for (;;) console.error(line);
""",
        timeout=3,
        watch=watch,
    )
    assert result.timed_out and result.returncode is None and lines == [b"ok\tstarted"]
    output = result.stderr
    assert output.cut > 0 and len(output.head) == HEAD_BYTES
    # (less the wrapper's line a stopped process's stderr ends with, where unshare says one)
    assert TAIL_BYTES - len(UNSHARE_KILLED_LINE) <= len(output.tail) <= TAIL_BYTES
    assert output.head.startswith(b"the first line\nxxx")
    assert set(bytes(output.tail)) <= set(b"x\n")  # the loop's own output to the end: no wrapper's line
    assert not output.text().endswith(UNSHARE_KILLED_LINE.decode())
    # what it printed went through the pipe, not into the process's memory
    (watching,) = watch
    node = [s for s in watching.seen.values() if "script.mjs" in s.cmdline and "unshare" not in s.cmdline]
    assert node and max(s.peak_kib for s in node) * 1024 < 256 * MIB


def test_a_complete_response_stops_the_process_without_waiting_for_it(tmp_path):
    result, lines = run(
        tmp_path,
        """process.stdout.write("ok\\tall\\n");
for (;;) console.error("still going");
""",
        on_line=lambda line: line == b"ok\tall",
    )
    assert result.complete and result.returncode is None and not result.timed_out
    assert lines == [b"ok\tall"] and result.stderr.total == 0  # not collected: nobody needs it


def test_a_line_longer_than_the_channel_allows_stops_the_process(tmp_path):
    result, lines = run(
        tmp_path, 'process.stdout.write("ok\\t" + "y".repeat(200) + "\\n"); setInterval(() => {}, 1000)\n'
    )
    assert result.overlong and not result.timed_out and lines == []


def test_a_crash_leaves_its_error_at_the_end_of_stderr(tmp_path):
    result, _ = run(tmp_path, 'console.error("x".repeat(200_000)); throw new Error("boom in user code")\n')
    assert result.returncode == 1 and not result.timed_out
    assert "Error: boom in user code" in result.stderr.text()
    assert result.stderr.cut > 0  # the head and the tail of it only


@pytest.mark.parametrize("operation", ['(await import("node:fs")).writeFileSync("/tmp/trunchbull-sandbox-probe", "x")'])
def test_a_forbidden_operation_is_said_in_stderr(tmp_path, operation):
    result, _ = run(tmp_path, operation + "\n")
    assert result.returncode != 0 and "ERR_ACCESS_DENIED" in result.stderr.text()
    assert not Path("/tmp/trunchbull-sandbox-probe").exists()
