"""The cyclic garbage collector paused for a command.

grade, run, report, compare and export hold hundreds of thousands of
long-lived containers (cases, records, result rows) and make no reference
cycles, so the collector would only rescan them over and over (about 40% of
the time of a 25,000-case grade). It is restored when the command ends."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
