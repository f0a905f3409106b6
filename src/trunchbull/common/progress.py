"""Status lines on a terminal; silence in CI and pipes."""

from __future__ import annotations

import os
import sys
import time


class Status:
    def __init__(self, enabled: bool | None = None):
        if enabled is None:
            enabled = sys.stderr.isatty() and not os.environ.get("CI")
        self.enabled = enabled
        self.started = time.monotonic()
        self._width = 0

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        text = f"[{time.monotonic() - self.started:5.1f}s] {message}…"
        sys.stderr.write("\r" + text.ljust(self._width))
        sys.stderr.flush()
        self._width = len(text)

    def done(self) -> None:
        if self.enabled and self._width:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()
            self._width = 0
