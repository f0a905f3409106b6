"""Writing large byte strings to files."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

# One write() of tens of MiB into the page cache costs ~10x the CPU of the
# same bytes written 1 MiB at a time (measured on ext4: 58 MiB in 0.25 s
# against 0.025 s), so large outputs go out in chunks.
CHUNK = 1 << 20


def write_all(handle: BinaryIO, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    for start in range(0, len(view), CHUNK):
        handle.write(view[start:start + CHUNK])


def write_file(path: Path, data: bytes | bytearray | memoryview) -> None:
    with open(path, "wb") as handle:
        write_all(handle, data)
