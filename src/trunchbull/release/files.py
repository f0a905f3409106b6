"""A release's files (SPEC §5): assembled in memory with their manifest,
written read-only into a temporary directory renamed into place, as a
deterministic tar, and read back from a directory or a .tar."""

from __future__ import annotations

import io
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from trunchbull.common import lifetime, scratch
from trunchbull.common.files import write_all, write_file
from trunchbull.common.userfiles import FileProblem, read_file
from trunchbull.release.canonical import BackgroundSha256, canonical_json, sha256_hex
from trunchbull.release.manifest import CASES, MANIFEST, Manifest, compute_digest

if TYPE_CHECKING:
    import tarfile


@dataclass
class ReleaseFiles:
    """A release in memory: every file's name and bytes, release.json included."""

    files: dict[str, bytes]

    @classmethod
    def assemble(
        cls, manifest: dict, payload: dict[str, bytes], hashing: dict[str, BackgroundSha256] | None = None
    ) -> "ReleaseFiles":
        """`hashing`: payload files whose sha256 is already being computed."""
        hashing = hashing or {}
        hashes = {
            name: hashing[name].hexdigest() if name in hashing else sha256_hex(data) for name, data in payload.items()
        }
        manifest = dict(manifest, files=hashes)
        manifest["digest"] = compute_digest(manifest)
        return cls({**payload, MANIFEST: canonical_json(manifest) + b"\n"})

    @property
    def manifest(self) -> Manifest:
        """release.json (KeyError when there is none, orjson.JSONDecodeError when it is no JSON)."""
        return Manifest(orjson.loads(self.files[MANIFEST]))

    def write(self, out: Path) -> None:
        """Write into a temporary sibling, then rename into place: `out` holds
        either the complete previous release or the complete new one."""
        out = out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        # named with this PID and locked: a write killed by SIGKILL leaves them, the next one removes them
        stale = re.escape(f".{out.name}.") + r"(?:old\.)?"
        staging, staging_lock = scratch.make(f".{out.name}.", out.parent, stale)
        placed = False
        try:
            for name in sorted(self.files):
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                write_file(target, self.files[name])
                target.chmod(0o444)
            for directory in sorted({p for p in staging.rglob("*") if p.is_dir()}, reverse=True):
                directory.chmod(0o555)
            staging.chmod(0o555)
            with lifetime.signals_deferred():  # an interrupt leaves the old release or the new one, never neither
                old = None
                if os.path.lexists(out):
                    old = scratch.make(f".{out.name}.old.", out.parent, stale)
                    os.rename(out, old[0] / "release")
                try:
                    staging.rename(out)
                    placed = True
                except BaseException:
                    if old is not None:
                        os.rename(old[0] / "release", out)
                    raise
                finally:
                    if old is not None:
                        scratch.release(*old)
        finally:
            scratch.release(staging, staging_lock, remove=not placed)

    def tar_bytes(self) -> bytes:
        """A deterministic tar: sorted members, fixed owner, mode and mtime."""
        import tarfile  # only here and for reading a .tar: ~4 ms off every build's start-up

        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            directories = sorted({str(Path(n).parent) for n in self.files if "/" in n})
            for directory in directories:
                info = tarfile.TarInfo(f"release/{directory}")
                _fix_info(info, tarfile.DIRTYPE, 0o555)
                tar.addfile(info)
            for name in sorted(self.files, key=lambda n: n.encode()):
                info = tarfile.TarInfo(f"release/{name}")
                _fix_info(info, tarfile.REGTYPE, 0o444)
                info.size = len(self.files[name])
                tar.addfile(info, io.BytesIO(self.files[name]))
        return buffer.getvalue()

    def write_tar(self, path: Path) -> None:
        path = path.absolute()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                write_all(handle, self.tar_bytes())
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except BaseException:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise


def _fix_info(info: tarfile.TarInfo, kind: bytes, mode: int) -> None:
    info.type = kind
    info.mode = mode
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""


class ReleaseError(Exception):
    """A release that cannot be read or does not verify."""


def read_release(path: Path) -> ReleaseFiles:
    """Load a release directory or .tar into memory."""
    import tarfile

    if path.is_file() and tarfile.is_tarfile(path):
        files = {}
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    name = member.name.split("/", 1)[1] if "/" in member.name else member.name
                    data = tar.extractfile(member)
                    assert data is not None  # a regular file
                    files[name] = data.read()
        return ReleaseFiles(files)
    if not (path / MANIFEST).is_file():
        raise ReleaseError(f"{path} is not a release (no {MANIFEST})")
    files = {}
    for p in sorted(path.rglob("*")):
        if p.is_file():  # regular files only (stat): a named pipe or device in it is not a release file
            name = p.relative_to(path).as_posix()
            try:
                files[name] = read_file(p)
            except FileProblem as problem:
                raise ReleaseError(f"{path}: {name} {problem}") from None
    return ReleaseFiles(files)


def load_cases(release: ReleaseFiles) -> list[dict]:
    return [orjson.loads(line) for line in release.files.get(CASES, b"").splitlines() if line.strip()]
