"""Progress on a terminal: one line, rewritten in place, that says where a
command is (compile stages; a run's done/total, rate, errors and ETA).
Silent in CI and when stderr is not a terminal."""

from __future__ import annotations

import os
import sys
import time

REFRESH_S = 0.2  # a run's progress line is redrawn at most this often


def on_a_terminal() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


class _Line:
    """The one status line on stderr."""

    def __init__(self, enabled: bool | None):
        self.enabled = on_a_terminal() if enabled is None else enabled
        self._width = 0

    def show(self, text: str) -> None:
        sys.stderr.write("\r" + text.ljust(self._width))
        sys.stderr.flush()
        self._width = len(text)

    def clear(self) -> None:
        if self.enabled and self._width:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()
            self._width = 0


class Status(_Line):
    """The stage a compile is in: `status("bundling 3 modules")`."""

    def __init__(self, enabled: bool | None = None):
        super().__init__(enabled)
        self.started = time.monotonic()

    def __call__(self, message: str) -> None:
        if self.enabled:
            self.show(f"[{time.monotonic() - self.started:5.1f}s] {message}…")

    def done(self) -> None:
        self.clear()


def duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class SampleProgress(_Line):
    """A run's samples: done/total, rate, errors, ETA."""

    def __init__(self, total: int, done: int = 0, errors: int = 0, enabled: bool | None = None):
        super().__init__(enabled)
        self.total = total
        self.done = done
        self.errors = errors
        self._base = done  # samples already recorded before this run started
        self._started = time.monotonic()
        self._shown = 0.0

    def sample_done(self, error: bool) -> None:
        self.done += 1
        self.errors += error
        if self.enabled:
            now = time.monotonic()
            if now - self._shown >= REFRESH_S or self.done == self.total:
                self._shown = now
                self._show(now)

    def _show(self, now: float) -> None:
        elapsed = max(now - self._started, 1e-9)
        rate = (self.done - self._base) / elapsed
        left = self.total - self.done
        eta = f"ETA {duration(left / rate)}" if rate > 0 and left else ""
        errors = f"{self.errors:,} error{'s' * (self.errors != 1)}" if self.errors else "no errors"
        self.show(f"{self.done:,}/{self.total:,} samples · {rate:,.1f}/s · {errors}" + (f" · {eta}" if eta else ""))

    def finish(self) -> None:
        self.clear()
