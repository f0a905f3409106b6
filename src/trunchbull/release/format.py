"""The release (SPEC §5): canonical bytes, digest, atomic read-only write,
deterministic tar, verification, loading and diffing."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from trunchbull.common import lifetime
from trunchbull.common.files import write_all, write_file
from trunchbull.common.userfiles import FileProblem, read_file

if TYPE_CHECKING:
    import tarfile

FORMAT = "trunchbull.release"
MANIFEST = "release.json"
CASES = "cases.jsonl"


def canonical_json(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def canonical_line(value: object) -> bytes:
    """canonical_json and a newline: one line of a JSONL file."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BackgroundSha256:
    """sha256_hex of a large byte string, computed on another thread while
    the caller goes on (hashlib releases the GIL)."""

    def __init__(self, data: bytes):
        self._digest: list[str] = []
        self._thread = threading.Thread(target=lambda: self._digest.append(sha256_hex(data)), daemon=True)
        self._thread.start()

    def hexdigest(self) -> str:
        self._thread.join()
        return self._digest[0]


def compute_digest(manifest: dict) -> str:
    """Over every payload file (name and sha256, sorted) and the manifest
    itself without its digest field, so titles and tool schemas are covered."""
    digest = hashlib.sha256()
    files = manifest.get("files") or {}
    for name in sorted(files, key=lambda n: n.encode()):
        digest.update(name.encode() + b"\0" + str(files[name]).encode() + b"\n")
    rest = {k: v for k, v in manifest.items() if k != "digest"}
    digest.update(MANIFEST.encode() + b"\0" + sha256_hex(canonical_json(rest)).encode() + b"\n")
    return "sha256:" + digest.hexdigest()


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
    def manifest(self) -> dict:
        return orjson.loads(self.files[MANIFEST])

    def write(self, out: Path) -> None:
        """Write into a temporary sibling, then rename into place: `out` holds
        either the complete previous release or the complete new one."""
        out = out.absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
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
                    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
                    os.rename(out, old / "release")
                try:
                    staging.rename(out)
                except BaseException:
                    if old is not None:
                        os.rename(old / "release", out)
                    raise
                finally:
                    if old is not None:
                        _remove_tree(old)
        except BaseException:
            _remove_tree(staging)
            raise

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


def _remove_tree(path: Path) -> None:
    def make_writable(func, target, _exc):
        os.chmod(Path(target).parent, stat.S_IRWXU)
        os.chmod(target, stat.S_IRWXU)
        func(target)

    for directory in [path, *[p for p in path.rglob("*") if p.is_dir()]] if path.is_dir() else []:
        os.chmod(directory, stat.S_IRWXU)
    if path.is_dir():
        shutil.rmtree(path, onerror=make_writable)
    elif path.exists():
        path.unlink()


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


def verify(release: ReleaseFiles) -> list[str]:
    """Problems found by recomputing every hash and the digest; [] when intact."""
    try:
        manifest = release.manifest
    except (KeyError, orjson.JSONDecodeError) as err:
        return [f"release.json is missing or not JSON ({err})"]
    problems = []
    if manifest.get("format") != FORMAT:
        problems.append(f"release.json format is {manifest.get('format')!r}, expected {FORMAT!r}")
    listed = manifest.get("files") or {}
    present = {n for n in release.files if n != MANIFEST}
    for name in sorted(present - set(listed)):
        problems.append(f"{name}: not listed in release.json")
    for name in sorted(set(listed) - present):
        problems.append(f"{name}: listed in release.json but missing")
    for name in sorted(present & set(listed)):
        actual = sha256_hex(release.files[name])
        if actual != listed[name]:
            problems.append(f"{name}: sha256 is {actual}, release.json says {listed[name]}")
    if manifest.get("digest") != compute_digest(manifest):
        problems.append(
            f"digest mismatch: release.json says {manifest.get('digest')}, its content gives {compute_digest(manifest)}"
        )
    return problems


def load_cases(release: ReleaseFiles) -> list[dict]:
    return [orjson.loads(line) for line in release.files.get(CASES, b"").splitlines() if line.strip()]


def diff(a: ReleaseFiles, b: ReleaseFiles) -> dict:
    """Cases and tools added, removed and changed (with the changed fields)."""
    cases_a = {c["id"]: c for c in load_cases(a)}
    cases_b = {c["id"]: c for c in load_cases(b)}
    tools_a = {t["name"]: t for t in a.manifest.get("tools", [])}
    tools_b = {t["name"]: t for t in b.manifest.get("tools", [])}

    def changes(old: dict, new: dict, ignore: set[str]) -> list[dict]:
        changed = []
        for key in sorted(set(old) & set(new)):
            fields = sorted(
                f for f in set(old[key]) | set(new[key]) if f not in ignore and old[key].get(f) != new[key].get(f)
            )
            if fields:
                changed.append({"id": key, "fields": fields})
        return changed

    return {
        "digest": {"a": a.manifest.get("digest"), "b": b.manifest.get("digest")},
        "cases": {
            "added": sorted(set(cases_b) - set(cases_a)),
            "removed": sorted(set(cases_a) - set(cases_b)),
            "changed": changes(cases_a, cases_b, {"source"}),
        },
        "tools": {
            "added": sorted(set(tools_b) - set(tools_a)),
            "removed": sorted(set(tools_a) - set(tools_b)),
            "changed": changes(tools_a, tools_b, {"bundle"}),
        },
    }
