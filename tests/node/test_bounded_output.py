"""What user code prints, kept within a cap (node/bounded_output.py): the
head and tail of a stream against the whole stream, and real Node processes
printing into an OutputPipe (js/shared/blocking_output.mjs keeps them from
queueing what they print in their own memory)."""

from __future__ import annotations

import re
import subprocess
import sys
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from trunchbull.node.bounded_output import (
    HEAD_BYTES,
    TAIL_BYTES,
    CappedOutput,
    OutputPipe,
    read_capped,
    run_capped,
)
from trunchbull.node.toolchain import JS_DIR, toolchain

from tests.support.process_watch import ProcessWatch

MIB = 1 << 20
BLOCKING = (JS_DIR / "shared/blocking_output.mjs").as_uri()


def node(code: str) -> list[str]:
    return [str(toolchain().node), "--input-type=module", "-e", code]


def stream(chunks: list[bytes]) -> bytes:
    return b"".join(chunks)


@settings(max_examples=300, deadline=None)
@given(
    chunks=st.lists(st.binary(max_size=300), max_size=30),
    head=st.integers(min_value=0, max_value=200),
    tail=st.integers(min_value=0, max_value=200),
)
def test_the_head_and_the_tail_are_those_of_the_whole_stream(chunks, head, tail):
    output = CappedOutput(head, tail)
    for chunk in chunks:
        output.feed(chunk)
    whole = stream(chunks)
    assert output.total == len(whole)
    assert bytes(output.head) == whole[:head]
    rest = whole[head:]
    assert bytes(output.tail) == (rest[-tail:] if tail else b"")
    assert output.cut == max(0, len(rest) - tail)
    assert len(output.head) <= head and len(output.tail) <= tail


@settings(max_examples=1000, deadline=None)
@given(
    chunks=st.lists(st.text(alphabet="ab\n", max_size=400), max_size=20),
    head=st.tuples(st.integers(min_value=1, max_value=120), st.integers(min_value=1, max_value=8)),
    tail=st.tuples(st.integers(min_value=1, max_value=120), st.integers(min_value=1, max_value=8)),
)
def test_an_excerpt_shows_the_start_and_the_end_and_counts_what_it_leaves_out(chunks, head, tail):
    output = CappedOutput(160, 160)
    for chunk in chunks:
        output.feed(chunk.encode())
    whole = "".join(chunks)
    text = output.excerpt(head, tail)
    match = re.search(r"\n\[… ([\d,]+) bytes not shown …\]\n", text)
    if match is None:  # all of it, as it is
        assert text == whole.removesuffix("\n")
        return
    assert len(whole) > tail[0] or whole.removesuffix("\n").count("\n") >= tail[1]  # (else it all fits)
    first, last = text[: match.start()], text[match.end() :]
    # the parts as bytes of the stream: a part cut mid-line says so with "…",
    # one cut at a line end has that line break stand for its newline
    first_raw = first.removesuffix("…") if first.endswith("…") else first + "\n"
    last_raw = last.removeprefix("…") + ("\n" if whole.endswith("\n") else "")
    assert whole.startswith(first_raw) and len(first_raw) <= head[0] and first_raw.count("\n") <= head[1]
    assert whole.endswith(last_raw) and len(last_raw) <= tail[0] and last.count("\n") < tail[1]
    assert int(match.group(1).replace(",", "")) == len(whole) - len(first_raw) - len(last_raw) > 0
    # a part is cut mid-line only when its nearest line end would drop more than a quarter of it
    if first.endswith("…"):
        assert "\n" not in whole[head[0] * 3 // 4 : head[0]]


def test_control_characters_are_escaped_in_an_excerpt():
    output = CappedOutput()
    output.feed(b"\x1b[2Jcleared\rback\tand\nnext\x07\n")
    assert output.excerpt() == "\\x1b[2Jcleared\\x0dback\tand\nnext\\x07"


def test_a_known_last_line_can_be_dropped():
    output = CappedOutput(4, 64)
    output.feed(b"user output\nwrapper: noise\n")
    output.drop_ending(b"wrapper: noise\n")
    assert output.total == len(b"user output\n") and output.text() == "user output\n"
    output.drop_ending(b"absent\n")
    assert output.total == len(b"user output\n")


def test_a_record_of_the_output_reads_back():
    output = CappedOutput()
    output.feed(b"first\n" + b"x" * (HEAD_BYTES + TAIL_BYTES) + b"\nlast\n")
    again = CappedOutput.from_json(output.to_json())
    assert (again.head, again.tail, again.total, again.cut) == (output.head, output.tail, output.total, output.cut)


def test_a_node_process_printing_without_end_is_kept_within_the_cap_and_stays_small():
    """Node printing 1.5 MB lines in a loop it never leaves, into an
    OutputPipe: the pipe keeps the head and the tail and counts the rest, and
    the process, whose writes block on the full pipe, keeps nothing queued:
    its own peak memory stays far below what it printed."""
    code = f"""import {{ blockOnFullPipes }} from {BLOCKING!r};
blockOnFullPipes(process.stdout, process.stderr);
console.log("the first line");
const line = "x".repeat(1_500_000);
for (let i = 0; ; i++) {{ console.error(line); if (i % 2 === 0) process.stdout.write("tail " + i + "\\n"); }}
"""
    pipe = OutputPipe()
    proc = subprocess.Popen(node(code), stdout=pipe.write_fd, stderr=pipe.write_fd)
    pipe.close_writer()
    with ProcessWatch(proc) as watch:
        while pipe.snapshot().total < 1024 * MIB:  # printed a gigabyte: far more than Node's heap holds
            assert proc.poll() is None, pipe.snapshot().text()
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    output = pipe.wait()
    assert output.total >= 1024 * MIB
    assert len(output.head) == HEAD_BYTES and len(output.tail) == TAIL_BYTES
    assert output.head.startswith(b"the first line\nxxx")
    assert set(re.sub(rb"tail \d+\n", b"", bytes(output.tail))) <= set(b"x\n")  # the stream's own end
    assert watch.root.peak_kib * 1024 < 256 * MIB, f"Node peaked at {watch.root.peak_kib} KiB"


def test_without_blocking_node_queues_what_a_full_pipe_does_not_take():
    """The reason for blocking_output.mjs: the same loop, its streams left as
    Node makes them, holds what it printed in its own memory."""
    code = """console.log("the first line");
const line = "x".repeat(1_500_000);
for (let i = 0; i < 400; i++) console.error(line);  // (queued; written once the loop has ended)
"""
    pipe = OutputPipe()
    proc = subprocess.Popen(node(code), stdout=pipe.write_fd, stderr=pipe.write_fd)
    pipe.close_writer()
    with ProcessWatch(proc) as watch:
        proc.wait()
    assert pipe.wait().total == len("the first line\n") + 400 * 1_500_001
    assert watch.root.peak_kib * 1024 > 400 * MIB  # 600 MB queued, most of it at once


def test_a_snapshot_holds_what_an_exited_process_wrote_while_another_holds_the_pipe():
    """The last words of a worker that has exited are in its log's excerpt
    at once, though its companion (a tool executor) still has the pipe open
    (and, its writes blocking, even a large write just before process.exit
    is all there)."""
    pipe = OutputPipe()
    holder = subprocess.Popen(node("setInterval(() => {}, 1000)"), stdout=pipe.write_fd, stderr=pipe.write_fd)
    speaker = subprocess.Popen(
        node(
            f"import {{ blockOnFullPipes }} from {BLOCKING!r}; blockOnFullPipes(process.stdout, process.stderr);"
            "process.stderr.write('x'.repeat(100000) + '\\nlast words before exit 3\\n'); process.exit(3)"
        ),
        stdout=pipe.write_fd,
        stderr=pipe.write_fd,
    )
    pipe.close_writer()
    try:
        assert speaker.wait() == 3
        snapshot = pipe.snapshot()
        assert snapshot.total == 100_001 + len("last words before exit 3\n")
        assert snapshot.excerpt().endswith("\nlast words before exit 3")
    finally:
        holder.kill()
        holder.wait()
    assert pipe.wait().total == 100_001 + len("last words before exit 3\n")


def test_run_capped_gives_the_exit_code_and_both_streams_within_the_cap():
    code, output = run_capped(
        node(
            "process.stdout.write('out\\n'); process.stderr.write('e'.repeat(200000) + '\\nerr\\n'); process.exitCode = 4"
        )
    )
    assert code == 4
    assert output.total == 4 + 200_001 + 4
    assert output.cut == output.total - HEAD_BYTES - TAIL_BYTES
    assert output.text().endswith("e\nerr\n")


def test_read_capped_reads_a_stream_to_its_end():
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'a' * 5_000_000 + b'end')"], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    output = read_capped(proc.stdout)
    proc.wait()
    assert output.total == 5_000_003 and output.tail.endswith(b"aend") and len(output.tail) == TAIL_BYTES
