"""A transformer's sources (SPEC §3.7): 1-16 named files inside the
benchmark root, each at most 50 MiB of UTF-8, read once to hash them and
check their encoding."""

from __future__ import annotations

import codecs
import hashlib
import os
import queue
import threading
from pathlib import Path

from trunchbull.common.ids import json_type, source_name_problem
from trunchbull.common.paths import rel_posix, resolve_inside
from trunchbull.common.userfiles import FileProblem, display, open_file, os_problem, probe
from trunchbull.compile.cases.context import EvalContext
from trunchbull.compile.cases.fields import Where
from trunchbull.compile.transformer.runs import SourceFile

MIB = 1024 * 1024
MAX_SOURCES = 16
MAX_SOURCE_BYTES = 50 * MIB
MAX_TOTAL_SOURCE_BYTES = 200 * MIB  # all transformer sources of a release, each file counted once


def read_sources(compiler: EvalContext, spec: dict, where: Where) -> list[SourceFile] | None:
    if not 1 <= len(spec) <= MAX_SOURCES:
        compiler.problem(
            where,
            "transformer-sources",
            f"a transformer takes 1-{MAX_SOURCES} named sources, found {len(spec)}",
            "name each input file: sources: { questions: \"./questions.txt\" }",
        )
        return None
    sources = [_read_source(compiler, name, text, where.at(name)) for name, text in spec.items()]
    return [source for source in sources if source is not None] if None not in sources else None


def _read_source(compiler: EvalContext, name: str, text: object, here: Where) -> SourceFile | None:
    """One named source, checked (None: its problem is reported)."""
    problem = source_name_problem(name)
    if problem:
        compiler.problem(here, "transformer-source-name", problem, None)
        return None
    if not isinstance(text, str):
        compiler.problem(
            here, "transformer-source-path", f"a source must be a file path, found {json_type(text)}", None
        )
        return None
    path, problem = resolve_inside(compiler.module_file.parent, text, compiler.root)
    if problem:
        compiler.problem(
            here,
            "transformer-source-path",
            f"source {problem}",
            "source paths are relative to the eval module and must stay inside the benchmark root",
        )
        return None
    assert path is not None
    info, unusable = probe(path)
    if unusable:
        _unreadable_source(compiler, here, text, unusable)
        return None
    assert info is not None  # probe gives the stat result when it finds no problem
    rel = rel_posix(path, compiler.root)
    size = info.st_size
    if size > MAX_SOURCE_BYTES:
        compiler.problem(
            here,
            "transformer-source-size",
            f"source {rel} is {size:,} bytes; the limit per source is 50 MiB ({MAX_SOURCE_BYTES:,} bytes)",
            "split the data, or pre-process it into a smaller file",
        )
        return None
    try:
        digest, bad_byte, identity = _hash_and_check_utf8(path)
    except FileProblem as unreadable:
        _unreadable_source(compiler, here, text, unreadable)
        return None
    if bad_byte is not None:
        with open_file(path) as f:
            line = f.read(bad_byte).count(b"\n") + 1
        compiler.diags.error(
            "transformer-source-encoding",
            f"source {rel} is not valid UTF-8 (byte {bad_byte} on line {line}; it is named {name!r} by "
            f"{compiler.report.path})",
            file=rel,
            line=line,
            hint="save the file as UTF-8",
        )
        return None
    return SourceFile(name, path, rel, digest, size, identity)


def _unreadable_source(compiler: EvalContext, here: Where, text: str, problem: FileProblem) -> None:
    compiler.file_problem(
        here,
        problem,
        f"source file {display(text)} ",
        "transformer-source-missing",
        "transformer-source-path",
        "source paths are relative to the eval module",
    )


def _hash_and_check_utf8(path: Path) -> tuple[str, int | None, tuple[int, int]]:
    """The file's sha256, the offset of its first byte that is not valid
    UTF-8 (None: all valid), and the (device, inode) that was read. Read
    once, in 1 MiB chunks (sources reach 50 MiB), which another thread hashes
    while this one checks the encoding (hashlib releases the GIL). Raises
    FileProblem."""
    digest = hashlib.sha256()
    chunks: queue.Queue = queue.Queue(maxsize=4)  # bounded: at most a few MiB in flight

    def hash_chunks() -> None:
        while (chunk := chunks.get()) is not None:
            digest.update(chunk)

    hashing = threading.Thread(target=hash_chunks, daemon=True)
    hashing.start()
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # of the next chunk
    bad = None
    identity = (0, 0)
    try:
        with open_file(path) as f:
            info = os.fstat(f.fileno())
            identity = (info.st_dev, info.st_ino)
            while chunk := f.read(1 << 20):
                chunks.put(chunk)
                pending = decoder.getstate()[0]  # an unfinished sequence from the last chunk
                if bad is None and (pending or not chunk.isascii()):  # ASCII is UTF-8: no decoding needed
                    try:
                        decoder.decode(chunk)
                    except UnicodeDecodeError as err:
                        bad = offset - len(pending) + err.start
                offset += len(chunk)
    except OSError as err:
        raise os_problem(err) from None
    finally:
        chunks.put(None)
        hashing.join()
    if bad is None:
        pending = decoder.getstate()[0]
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as err:
            bad = offset - len(pending) + err.start
    return digest.hexdigest(), bad, identity
