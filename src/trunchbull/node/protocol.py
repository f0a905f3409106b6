"""The one protocol between this process and the Node processes it starts
(docs/architecture.md, "The Node protocol").

Framing, on every channel: newline-terminated lines, each one message,
`TAG` or `TAG<TAB>field<TAB>...`; a tag has a fixed number of fields, the
last of which may be JSON (it never holds a newline: JSON escapes them). A
message may announce raw data lines that follow it (a transformer's case
lines: their count is in its `response`). Error shape: `fatal<TAB>{"message":
text}`, a process that cannot do what it was started for.

Every byte from Node is read as hostile: a Node process that ran user code
may have had its channel written to, and even a trusted one may be broken. A
line longer than its channel's bound, a tag the channel does not know, a
field that is not what its tag says, JSON that does not parse: ProtocolError,
one clear sentence naming the process, for the caller to turn into its own
diagnostic (a replaced worker, an error result); never an exception from
deeper down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Iterator, Mapping

import orjson

from trunchbull.common.jsonl import MAX_LINE_BYTES

FATAL = b"fatal"


class ProtocolError(Exception):
    """A Node process sent something that is not a message of its channel."""


@dataclass(frozen=True)
class Channel:
    """What one kind of Node process may send: `tags` maps each tag to its
    number of fields; `max_line`: the longest line, in bytes, newline
    excluded."""

    process: str  # "the run worker", for messages
    tags: Mapping[bytes, int]
    max_line: int

    def frame(self, line: bytes) -> tuple[bytes, list[bytes]]:
        """The message's tag and fields (a line without its newline)."""
        tag, tab, rest = line.partition(b"\t")
        arity = self.tags.get(tag)
        if arity is None:
            raise ProtocolError(f"{self.process} sent a line that is not a message ({_shown(line)})")
        fields = rest.split(b"\t", arity - 1) if arity else []
        if len(fields) != arity or (not arity and tab):
            raise ProtocolError(f"{self.process} sent a {_word(tag)} message with the wrong number of fields")
        return tag, fields

    def json(self, field: bytes, what: str) -> object:
        """A field's JSON value."""
        try:
            return orjson.loads(field)
        except orjson.JSONDecodeError as err:
            raise ProtocolError(f"{self.process} sent {what} that is not valid JSON ({err})") from None

    def number(self, field: bytes, what: str) -> int:
        if not field.isdigit() or len(field) > 18:
            raise ProtocolError(f"{self.process} sent {what} that is not a number ({_shown(field)})")
        return int(field)

    def fatal(self, fields: list[bytes]) -> str:
        """The message of a `fatal` frame."""
        value = self.json(fields[0], "an error")
        if type(value) is not dict or type(value.get("message")) is not str:
            raise ProtocolError(f"{self.process} sent an error without a message")
        return value["message"]

    def single(self, output: bytes, tag: bytes = b"ok") -> object:
        """The JSON of the one message of a process that answers once (its whole stdout);
        a `fatal` frame becomes a ProtocolError holding its message."""
        if len(output) > self.max_line + 1:
            raise ProtocolError(f"{self.process} sent more than {self.max_line} bytes")
        line = output[:-1] if output.endswith(b"\n") else output
        got, fields = self.frame(line)
        if got == FATAL:
            raise ProtocolError(f"{self.process} failed: {self.fatal(fields)}")
        if got != tag:
            raise ProtocolError(f"{self.process} sent a {_word(got)} message where {_word(tag)} was expected")
        return self.json(fields[0], "an answer")


class LineBuffer:
    """The lines of a byte stream read in chunks (os.read of a pipe), holding
    at most the channel's bound of an unfinished line."""

    def __init__(self, channel: Channel):
        self.channel = channel
        self._partial = b""

    def feed(self, data: bytes) -> list[bytes]:
        """The lines completed by `data`, without their newlines."""
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > self.channel.max_line or any(len(line) > self.channel.max_line for line in lines):
            raise ProtocolError(f"{self.channel.process} sent a line longer than {self.channel.max_line} bytes")
        return lines

    def clear(self) -> None:
        self._partial = b""


def stream_lines(stream: IO[bytes], channel: Channel) -> Iterator[bytes]:
    """The lines of a blocking stream (a process's stdout), each at most the
    channel's bound, without their newlines; ProtocolError on a longer one."""
    limit = channel.max_line + 1
    while line := stream.readline(limit):
        if line.endswith(b"\n"):
            yield line[:-1]
        elif len(line) >= limit:
            raise ProtocolError(f"{channel.process} sent a line longer than {channel.max_line} bytes")
        else:
            yield line  # the last line, unterminated


def _word(tag: bytes) -> str:
    return "'" + tag[:20].decode("ascii", errors="replace") + "'"


def _shown(data: bytes) -> str:
    text = data[:40].decode("utf-8", errors="replace")
    return orjson.dumps(text).decode() + ("…" if len(data) > 40 else "")


# Every channel, by the script at its other end (js/…). A record is at most
# MAX_LINE_BYTES; a module's inspection, an evaluator's answer or a
# transformer's one-line response is bounded by the same figure twice over.
_REPLY = 2 * MAX_LINE_BYTES
HELPER = Channel("the Node helper", {b"ok": 1, FATAL: 1}, _REPLY)  # compile/helper.mjs
REPORT_BUNDLER = Channel("the report's bundler", {b"ok": 1, FATAL: 1}, _REPLY)  # report/bundle.mjs
INSPECTION = Channel("the module inspection", {b"module": 1, b"polluted": 0}, _REPLY)  # compile/inspect.mjs
# compile/transform.mjs: `response` (streamed header, failure or one-line result), the case
# lines it announces (raw JSON, one per line), `end` (their digest), `aborted` (a case was not
# plain data: a one-line `response` follows).
TRANSFORMER = Channel("the transformer run", {b"response": 1, b"end": 1, b"aborted": 0}, 8 * MAX_LINE_BYTES)
EVALUATOR = Channel("the evaluator worker", {b"answer": 1}, _REPLY)  # grade/evaluator_worker.mjs
# run/worker.mjs (its header describes each tag): r k kind record, b k step (a batch sample's step,
# its loop going on in the next batch), s/e k n (a tool call started, ended), c k (a provider
# request), u k (a sample given back), ready info, w warning, fatal.
RUN_WORKER = Channel(
    "the run worker",
    {b"r": 3, b"b": 2, b"s": 2, b"e": 2, b"c": 1, b"u": 1, b"ready": 1, b"w": 1, FATAL: 1},
    _REPLY + 64,
)
# run/batch.mjs, the batch caller (its header describes each tag): one answer per command
# (started, refused, status, listed, cancelled, failed; results and steps: i item, r k kind record,
# b k step … end), ready, w, fatal.
RUN_BATCH = Channel(
    "the batch caller",
    {
        b"r": 3,
        b"b": 2,
        b"ready": 1,
        b"started": 1,
        b"refused": 1,
        b"status": 1,
        b"i": 1,
        b"end": 1,
        b"listed": 1,
        b"cancelled": 1,
        b"failed": 1,
        b"w": 1,
        FATAL: 1,
    },
    _REPLY + 64,
)
