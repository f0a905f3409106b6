"""What a process that ran user code prints, kept within a byte cap.

Every stdout and stderr of a sandboxed process (inspection, transformers,
custom evaluators, tool executors) and every worker's log goes through one
`OutputPipe`: a pipe drained by a thread of its own, as fast as the process
writes, into a `CappedOutput` that keeps the first HEAD_BYTES and the last
TAIL_BYTES and counts the bytes between them. A process printing without end
can neither grow this process's memory or disk nor block on a full pipe; its
output costs a read and a copy per chunk. Messages show an excerpt of what
was kept (`CappedOutput.excerpt`), saying how many bytes are not shown.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading

from trunchbull.common import lifetime

HEAD_BYTES = 16 * 1024  # kept from the start of a stream: the first error, which often causes the rest
TAIL_BYTES = 48 * 1024  # kept from its end: Node's fatal error, V8's out-of-memory report, the last lines
SHOWN_HEAD_BYTES, SHOWN_HEAD_LINES = 1024, 10  # of those, shown in a message
SHOWN_TAIL_BYTES, SHOWN_TAIL_LINES = 2048, 20
READ_CHUNK = 1 << 20
_F_GETPIPE_SZ = 1032  # Linux
_PIPE_SIZE = 1 << 16  # a pipe's capacity where it cannot be asked

# Control characters (ANSI escapes, carriage returns) shown as escapes: a
# message must not let the output it quotes drive the user's terminal.
_ESCAPED = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if chr(c) not in "\n\t"}


class CappedOutput:
    """The head and tail of a byte stream, and its total size."""

    def __init__(self, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES):
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_bytes - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if len(data) >= self.tail_bytes:
            self.tail[:] = data[len(data) - self.tail_bytes :]
        elif data:
            self.tail += data
            if len(self.tail) > self.tail_bytes:
                del self.tail[: len(self.tail) - self.tail_bytes]

    def drop_ending(self, ending: bytes) -> None:
        """Forget `ending` when the stream ends with it (a line a wrapper process added)."""
        if self.tail.endswith(ending):
            del self.tail[-len(ending) :]
        elif not self.tail and self.head.endswith(ending):
            del self.head[-len(ending) :]
        else:
            return
        self.total -= len(ending)

    @property
    def cut(self) -> int:
        """Bytes between the head and the tail that were not kept."""
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """What was kept, decoded, with a line where bytes were cut (for
        looking for a known error in it)."""
        middle = f"\n[… {self.cut:,} bytes cut …]\n" if self.cut else ""
        return self.head.decode(errors="replace") + middle + self.tail.decode(errors="replace")

    def excerpt(
        self,
        head: tuple[int, int] = (SHOWN_HEAD_BYTES, SHOWN_HEAD_LINES),
        tail: tuple[int, int] = (SHOWN_TAIL_BYTES, SHOWN_TAIL_LINES),
    ) -> str:
        """At most `head` (bytes, lines) from the start and `tail` from the
        end, and how many bytes between them are not shown; "" for no output.
        A part ends (starts) at a line end where that drops little of it, else
        with "…" mid-line; control characters are escaped."""
        kept = bytes(self.head + self.tail)  # contiguous unless bytes were cut, and then the tail is full
        first = _first_lines(_until_line_end(kept[: head[0]]), head[1])
        start = max(len(first), len(kept) - tail[0])
        last = kept[start:]
        if start > len(first):  # (right after the first part, no line was cut)
            last = _from_line_start(last)
        last = _last_lines(last, tail[1])
        hidden = self.total - len(first) - len(last)
        if not hidden:
            return _shown(kept)
        first_text = _shown(first) if first.endswith(b"\n") else _shown(first) + "…"
        last_text = _shown(last) if kept[-len(last) - 1 : -len(last)] == b"\n" else "…" + _shown(last)
        return f"{first_text}\n[… {hidden:,} bytes not shown …]\n{last_text}"

    def described(self) -> str:
        """The excerpt as the end of a message: "" for no output, else a
        sentence with its size and the excerpt on the following lines."""
        if not self.total:
            return ""
        shown = self.excerpt()
        indented = "\n".join("    " + line for line in shown.split("\n"))
        return f"; its output ({self.total:,} bytes):\n{indented}"

    def to_json(self) -> dict:
        """What was kept, for a record another process reads (from_json)."""
        return {
            "head": self.head.decode(errors="replace"),
            "tail": self.tail.decode(errors="replace"),
            "total": self.total,
        }

    @classmethod
    def from_json(cls, data: dict) -> "CappedOutput":
        output = cls()
        output.head = bytearray(data["head"].encode())
        output.tail = bytearray(data["tail"].encode())
        output.total = max(int(data["total"]), len(output.head) + len(output.tail))
        return output


def _until_line_end(data: bytes) -> bytes:
    """`data` up to its last newline, unless that drops more than a quarter of it."""
    end = data.rfind(b"\n")
    return data[: end + 1] if end >= len(data) * 3 // 4 else data


def _from_line_start(data: bytes) -> bytes:
    """`data` from after its first newline, unless that drops more than a quarter of it."""
    start = data.find(b"\n", 0, len(data) - 1)  # (a final newline starts no line)
    return data[start + 1 :] if 0 <= start < len(data) // 4 else data


def _first_lines(data: bytes, count: int) -> bytes:
    end = -1
    for _ in range(count):
        end = data.find(b"\n", end + 1)
        if end < 0:
            return data
    return data[: end + 1]


def _last_lines(data: bytes, count: int) -> bytes:
    body = data.removesuffix(b"\n")
    start = len(body)
    for _ in range(count):
        start = body.rfind(b"\n", 0, start)
        if start < 0:
            return data
    return data[start + 1 :]


def _shown(data: bytes) -> str:
    """`data` as text, without its final line break."""
    return data.removesuffix(b"\n").decode(errors="replace").translate(_ESCAPED)


class OutputPipe:
    """A pipe to give child processes as their stdout and stderr (`write_fd`),
    drained by a thread into a CappedOutput until every writer has closed it.
    Call close_writer() once the children have it."""

    def __init__(self, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES):
        self.output = CappedOutput(head_bytes, tail_bytes)
        self._read_fd, self.write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self._capacity = _pipe_capacity(self._read_fd)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="trunchbull-output", daemon=True)
        self._thread.start()

    def close_writer(self) -> None:
        """Close this process's write end (idempotent): the pipe ends when its children's do."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def snapshot(self) -> CappedOutput:
        """The output so far, including what the pipe holds right now (what a
        process that has exited wrote last), without waiting for its end."""
        with self._lock:
            if self._read_fd >= 0:
                self._read(self._capacity, at_end_close=False)
            return self.output

    def wait(self) -> CappedOutput:
        """The whole output, once every writer has closed the pipe."""
        self.close_writer()
        self._thread.join()
        return self.output

    def _drain(self) -> None:
        poller = select.poll()
        poller.register(self._read_fd, select.POLLIN)
        while True:
            try:
                poller.poll()
            except InterruptedError:  # pragma: no cover - PEP 475 retries
                continue
            with self._lock:
                if not self._read(READ_CHUNK, at_end_close=True):
                    return

    def _read(self, limit: int, at_end_close: bool) -> bool:
        """Read up to `limit` bytes the pipe holds now; False at its end (its
        descriptor closed then when `at_end_close`: only the draining thread,
        which polls it, closes it)."""
        while limit > 0:
            try:
                data = os.read(self._read_fd, min(limit, READ_CHUNK))
            except BlockingIOError:
                return True
            except OSError:
                data = b""
            if not data:
                if at_end_close:
                    os.close(self._read_fd)
                    self._read_fd = -1
                return False
            self.output.feed(data)
            limit -= len(data)
        return True


def _pipe_capacity(fd: int) -> int:
    try:
        import fcntl

        return fcntl.fcntl(fd, _F_GETPIPE_SZ)
    except (ImportError, OSError):  # pragma: no cover - not Linux
        return _PIPE_SIZE


def read_capped(stream) -> CappedOutput:
    """A readable binary stream read to its end, keeping its head and tail."""
    output = CappedOutput()
    while chunk := stream.read(READ_CHUNK):
        output.feed(chunk)
    return output


def run_capped(cmd: list[str], **popen_kwargs) -> tuple[int, CappedOutput]:
    """Run `cmd` (stdin empty) to its end, like lifetime.run, with its stdout
    and stderr together kept within the cap: (exit code, output)."""
    pipe = OutputPipe()
    try:
        proc = lifetime.spawn(cmd, stdin=subprocess.DEVNULL, stdout=pipe.write_fd, stderr=pipe.write_fd, **popen_kwargs)
    finally:
        pipe.close_writer()
    try:
        code = proc.wait()
    except BaseException:
        lifetime.stop(proc)
        proc.wait()
        raise
    return code, pipe.wait()
