"""The one Node protocol (node/protocol.py): every channel's messages are
read as hostile input, and what each script sends is what its channel knows."""

from __future__ import annotations

import re
import subprocess

import pytest

from trunchbull.node import protocol
from trunchbull.node.protocol import Channel, LineBuffer, ProtocolError, stream_lines
from trunchbull.node.toolchain import JS_DIR, toolchain

SMALL = Channel("the test process", {b"r": 3, b"c": 1, b"ready": 1, b"done": 0, b"fatal": 1}, 64)


def test_a_message_is_split_into_its_fields():
    assert SMALL.frame(b"r\t12\t-\t{\"a\":\"x\\ty\"}") == (b"r", [b"12", b"-", b'{"a":"x\\ty"}'])
    assert SMALL.frame(b"done") == (b"done", [])
    # the last field keeps any further tab (JSON escapes its own, but user text need not be JSON)
    assert SMALL.frame(b"c\ta\tb") == (b"c", [b"a\tb"])


@pytest.mark.parametrize(
    "line, says",
    [
        (b"hello world", "sent a line that is not a message"),
        (b'{"ok": true}', "sent a line that is not a message"),
        (b"r\t12", "sent a 'r' message with the wrong number of fields"),
        (b"done\textra", "sent a 'done' message with the wrong number of fields"),
        (b"", "sent a line that is not a message"),
    ],
)
def test_what_is_not_a_message_of_the_channel_is_a_protocol_error(line, says):
    with pytest.raises(ProtocolError) as raised:
        SMALL.frame(line)
    assert str(raised.value).startswith("the test process " + says)


def test_fields_are_checked_before_use():
    with pytest.raises(ProtocolError, match="sent its description that is not valid JSON"):
        SMALL.json(b"{not json", "its description")
    with pytest.raises(ProtocolError, match="sent a sample number that is not a number"):
        SMALL.number(b"-1", "a sample number")
    with pytest.raises(ProtocolError, match="not a number"):
        SMALL.number(b"9" * 40, "a sample number")
    assert SMALL.number(b"42", "a sample number") == 42


def test_the_one_error_shape():
    assert SMALL.fatal([b'{"message": "no model"}']) == "no model"
    with pytest.raises(ProtocolError, match="an error without a message"):
        SMALL.fatal([b'"no model"'])
    with pytest.raises(ProtocolError, match="the test process failed: the key is missing"):
        SMALL.single(b'fatal\t{"message": "the key is missing"}\n', tag=b"ready")
    assert SMALL.single(b'ready\t{"model": null}\n', tag=b"ready") == {"model": None}
    with pytest.raises(ProtocolError, match="sent a 'c' message where 'ready' was expected"):
        SMALL.single(b"c\t1\n", tag=b"ready")


def test_a_line_buffer_holds_at_most_the_channel_bound():
    buffer = LineBuffer(SMALL)
    assert buffer.feed(b"c\t1\nc\t") == [b"c\t1"]
    assert buffer.feed(b"2\n") == [b"c\t2"]
    buffer.feed(b"x" * 64)  # an unfinished line at the bound is still a line
    with pytest.raises(ProtocolError, match="sent a line longer than 64 bytes"):
        buffer.feed(b"x")
    with pytest.raises(ProtocolError, match="longer than 64 bytes"):
        LineBuffer(SMALL).feed(b"y" * 65 + b"\nc\t1\n")


def _node_printing(script: str) -> subprocess.Popen:
    tc = toolchain()
    return subprocess.Popen([str(tc.node), "-e", script], stdout=subprocess.PIPE, env=tc.base_env())


def test_a_stream_from_a_real_node_process_is_read_within_the_bound():
    proc = _node_printing('process.stdout.write("c\\t1\\n" + "z".repeat(1 << 20))')
    assert proc.stdout is not None
    lines = stream_lines(proc.stdout, SMALL)
    assert next(lines) == b"c\t1"
    with pytest.raises(ProtocolError, match="longer than 64 bytes"):
        next(lines)
    proc.kill()
    proc.wait()


def test_a_last_unterminated_line_is_still_read():
    proc = _node_printing('process.stdout.write("c\\t1\\ndone")')
    assert proc.stdout is not None
    assert list(stream_lines(proc.stdout, SMALL)) == [b"c\t1", b"done"]
    proc.wait()


# What each script writes, found in its source: every tag it sends is one its channel knows, and
# every tag the channel knows is sent.
SENT = {
    "compile/helper.mjs": (protocol.HELPER, r"`(ok|fatal)\\t"),
    "report/bundle.mjs": (protocol.REPORT_BUNDLER, r"`(ok|fatal)\\t"),
    "compile/inspect.mjs": (protocol.INSPECTION, r'"(module)\\t|"(polluted)\\n"'),
    "compile/transform.mjs": (protocol.TRANSFORMER, r'"\\n(response)\\t|"(end)\\t|"(aborted)\\n"'),
    "grade/evaluator_worker.mjs": (protocol.EVALUATOR, r'"(answer)\\t'),
    "run/worker.mjs": (protocol.RUN_WORKER, r"send(?:Soon)?\(`(\w+)\\t"),
    "run/batch.mjs": (protocol.RUN_BATCH, r"send\(`(\w+)\\t"),  # (its `r`, `b`: below)
}


@pytest.mark.parametrize("script", sorted(SENT))
def test_each_script_sends_the_tags_of_its_channel(script):
    channel, pattern = SENT[script]
    source = (JS_DIR / script).read_text()
    sent = {tag for match in re.finditer(pattern, source) for tag in match.groups() if tag}
    assert {tag.encode() for tag in sent} == set(channel.tags), (script, sent)
