"""What a transformer run writes (js/compile/transform.mjs, node/protocol.py's
TRANSFORMER channel), read a line at a time as it comes: a response, or a
streamed header, the case lines and their digest."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Callable, TypeGuard

import orjson

from trunchbull.node.protocol import TRANSFORMER, ProtocolError
from trunchbull.node.replies import trailer_ok, transform_response_ok
from trunchbull.node.sandbox import SandboxResult

OnCase = Callable[[int, object], None]


@dataclass
class RunOutput:
    """One run's outcome. `response` is None when the run produced no
    complete, well-formed response (crash, deadline, exit mid-stream)."""

    sandbox: SandboxResult
    response: dict | None
    streamed: bool = False
    digest: str | None = None  # the run's sha256 over its case lines
    lines: list[bytes] = field(default_factory=list)  # raw case lines, when kept

    def cases(self) -> list:
        """The streamed cases as JSON values (from the kept lines)."""
        return [orjson.loads(line) for line in self.lines]


class OutputReader:
    """Reads one run's stdout (see js/compile/transform.mjs), a line at a time:
    either one response line, or a header, the case lines (when sent) and a
    trailer, after which the run holds on until the caller decides whether it
    needs the lines (again). With `on_case`, each case of the first round is
    parsed and handed over as it arrives; with `keep_lines`, case lines are
    kept raw (always once asked for again). A line "aborted" in place of a case
    line (a case was not plain JSON data) ends the stream: the one-line
    response follows, as if nothing had been streamed."""

    def __init__(self, on_case: OnCase | None = None, keep_lines: bool = False):
        self.on_case = on_case
        self.keep_lines = keep_lines
        self.response: dict | None = None
        self.trailer: dict | None = None
        self.cases_seen = 0
        self.lines: list[bytes] = []
        self.expected = 0  # case lines still to come
        self.malformed = False
        self.decided = False  # the caller asked for the lines, or let the run go

    @property
    def streamed(self) -> bool:
        return bool(self.response and "stream" in self.response)

    def _trailed_count(self) -> int | None:
        """The case count of a streamed response whose trailer has arrived, else None."""
        response = self.response
        if response is None or "stream" not in response or self.trailer is None:
            return None
        return response["count"]

    @property
    def holding(self) -> bool:
        """The run has reported its digest and waits for the caller's decision."""
        count = self._trailed_count()
        return count is not None and not self.decided and count > 0

    def ask_for_lines(self) -> None:
        """The caller asked a holding run for its lines: they (kept raw) and a second trailer follow."""
        assert self.response is not None, "only a holding run is asked for its lines"
        self.decided, self.keep_lines, self.on_case = True, True, None
        self.lines = []
        self.expected, self.trailer = self.response["count"], None

    def let_go(self) -> None:
        """The caller needs nothing more from a holding run."""
        self.decided = True

    @property
    def complete(self) -> bool:
        """A streamed response has ended with its trailer and the caller's decision."""
        count = self._trailed_count()
        return count is not None and not self.expected and not self.malformed and (self.decided or count == 0)

    def feed(self, line: bytes) -> bool:
        """Take the next line; True when it was a case line (more lines or a
        trailer follow), the common case, which needs no further look."""
        if self.malformed:
            return False
        if self.expected:
            if line == b"aborted":  # a case was not plain JSON data; the one-line response follows
                self.response, self.trailer, self.expected, self.lines = None, None, 0, []
                return False
            self.expected -= 1
            if self.keep_lines:
                self.lines.append(line)
            if self.on_case:
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError:
                    self.malformed = True
                    return False
                self.on_case(self.cases_seen, value)
                self.cases_seen += 1
            return True
        if self.response is None:
            self.response = response = self._object(line, b"response", transform_response_ok)
            if response is not None and self.streamed:
                self.expected = response["count"] if response["stream"] == "lines" else 0
        elif self.streamed and self.trailer is None:
            self.trailer = self._object(line, b"end", trailer_ok)
        else:
            self.malformed = True
        return False

    def _object(self, line: bytes, tag: bytes, well_formed: Callable[[object], TypeGuard[dict]]) -> dict | None:
        """The line as a `tag` message of the expected shape (node/protocol.py,
        node/replies.py), else None and malformed."""
        try:
            got, (field,) = TRANSFORMER.frame(line)
            value = TRANSFORMER.json(field, "a response") if got == tag else None
        except (ProtocolError, ValueError):
            value = None
        if not well_formed(value):
            self.malformed = True
            return None
        return value

    def output(self, sandbox: SandboxResult) -> RunOutput:
        response, trailer = self.response, self.trailer
        if (
            sandbox.timed_out
            or (sandbox.returncode != 0 and not sandbox.complete)
            or self.malformed
            or sandbox.overlong
        ):
            response = None
        elif response is not None and "stream" in response:
            if trailer is None or self.expected or not isinstance(trailer.get("sha256"), str):
                response = None
            elif trailer.get("violation"):
                response = {
                    "ok": False,
                    "stage": "sandbox",
                    "error": trailer["violation"],
                    "name": response.get("name"),
                }
        streamed = response is not None and self.streamed and trailer is not None
        return RunOutput(sandbox, response, streamed, trailer["sha256"] if streamed and trailer else None, self.lines)

    def read_all(self, stdout: bytes, sandbox: SandboxResult) -> RunOutput:
        """Read a finished run's whole stdout (a run made by another process)."""
        for line in io.BytesIO(stdout):
            if not line.isspace():
                self.feed(line.removesuffix(b"\n"))
        self.decided = True
        return self.output(sandbox)
