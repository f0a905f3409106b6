"""A transformer's two runs: each in a fresh sandboxed Node process
(js/compile/transform.mjs) whose environment differs on purpose.

Both runs start together. Run 1 streams its cases, which are parsed and
handed to the caller line by line while Node still writes them (and then
dropped: the compiled cases are what is kept). Run 2 only reports the sha256
of its case lines. After its trailer each run waits for the caller: when the
digests agree (a deterministic transformer) that is all the comparison needs,
and otherwise both are asked for their lines to find the first difference.
What a run writes is read by output.py."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from trunchbull.common import lifetime
from trunchbull.common.userfiles import MISSING, FileProblem, open_file
from trunchbull.compile.transformer.output import OnCase, OutputReader, RunOutput
from trunchbull.node.protocol import TRANSFORMER
from trunchbull.node.sandbox import Running, SandboxResult, stream_sandboxed
from trunchbull.node.toolchain import JS_DIR, Toolchain, toolchain
from trunchbull.release.manifest import MAX_CASES


# The two runs' deliberately different environments (reproducible-builds style).
RUNS: tuple[dict[str, Any], ...] = (
    {
        "dir": "1/work",
        "TZ": "Pacific/Kiritimati",
        "LANG": "en_US.UTF-8",
        "HOME": "/home/trunchbull-first",
        "USER": "trunchbull-first",
        "umask": 0o022,
        "clock_offset_ms": 0,
        "env_order": 1,
    },
    {
        "dir": "2/varied/deeper/cwd",
        "TZ": "Etc/GMT+12",
        "LANG": "tr_TR.UTF-8",
        "HOME": "/var/empty/second-home",
        "USER": "builder2",
        "umask": 0o077,
        "clock_offset_ms": ((400 * 24 + 5) * 3600 + 17 * 60 + 23) * 1000 + 456,
        "env_order": -1,
    },
)


@dataclass(frozen=True)
class SourceFile:
    name: str
    file: Path
    rel: str  # root-relative path, as the transformer sees it
    sha256: str
    size: int
    identity: tuple[int, int] = (0, 0)  # (device, inode) of the file that was hashed


@dataclass(frozen=True)
class Limits:
    deadline_s: float
    memory_mb: int


@dataclass(frozen=True)
class _Launch:
    args: list[str]
    read_paths: list[Path]
    env: dict[str, str]
    cwd: Path
    umask: int


def _place_source(source: SourceFile, dest: Path) -> None:
    """A hard link to the very file that was hashed (a copy of it across
    devices): the run must read those bytes, and only a regular file.
    Raises FileProblem when the source was replaced meanwhile."""
    try:
        os.link(source.file, dest)
        linked = os.lstat(dest)
        if stat.S_ISREG(linked.st_mode) and (linked.st_dev, linked.st_ino) == source.identity:
            return
        os.unlink(dest)
        raise FileProblem(MISSING, f"{source.rel} changed while the build was reading it")
    except (OSError, ValueError):
        pass
    with open_file(source.file) as src, open(dest, "wb") as out:
        if os.fstat(src.fileno()).st_ino != source.identity[1]:
            raise FileProblem(MISSING, f"{source.rel} changed while the build was reading it")
        shutil.copyfileobj(src, out, 1 << 20)


def _prepare(
    index: int,
    tmp: Path,
    bundle: Path,
    sources: list[SourceFile],
    install_dir: Path | None,
    tc: Toolchain,
    send: str = "lines",
) -> _Launch:
    """Run `index`'s sandbox directory (the bundle and hard-linked sources)
    and its varied environment."""
    variant = RUNS[index]
    sandbox = tmp / f"sandbox-{index + 1}"
    work = sandbox / variant["dir"]
    (work / "sources").mkdir(parents=True)
    shutil.copyfile(bundle, work / "transformer.mjs")
    request_sources = []
    for i, source in enumerate(sources):
        dest = work / "sources" / f"{i}-{source.name}"
        _place_source(source, dest)
        request_sources.append({"name": source.name, "file": str(dest), "path": source.rel, "sha256": source.sha256})
    request = work / "request.json"
    request.write_bytes(
        orjson.dumps(
            {
                "bundleFile": str(work / "transformer.mjs"),
                "maxCases": MAX_CASES,
                "send": send,
                "sources": request_sources,
            }
        )
    )
    env = {
        **tc.base_env(),
        "TZ": variant["TZ"],
        "LANG": variant["LANG"],
        "LC_ALL": variant["LANG"],
        "HOME": variant["HOME"],
        "USER": variant["USER"],
        "LOGNAME": variant["USER"],
        "TMPDIR": str(work),
    }
    if variant["clock_offset_ms"]:
        env["TRUNCHBULL_CLOCK_OFFSET_MS"] = str(variant["clock_offset_ms"])
    env = dict(sorted(env.items(), reverse=variant["env_order"] < 0))
    read_paths = [sandbox]
    if install_dir:
        read_paths.append(install_dir / "node_modules")
    return _Launch([str(request)], read_paths, env, work, variant["umask"])


def run_both(
    tmp: Path, bundle: Path, sources: list[SourceFile], install_dir: Path | None, limits: Limits, on_case: OnCase
) -> list[RunOutput]:
    """Both runs at once. Run 1's cases go to `on_case` as they arrive and
    are not kept; run 2 only reports the digest of its lines. After its
    trailer each run holds on until the other has reported: its lines are
    asked for (again) only when a comparison needs them."""
    both = _BothRuns(tmp, bundle, sources, install_dir, limits, on_case)
    second = threading.Thread(target=both.run, args=(1,))
    second.start()
    both.run(0)
    if both.failed:
        both.abandoned.set()
        if both.running[1] is not None:
            lifetime.stop(both.running[1].proc)
    second.join()
    if both.failed:
        raise both.failed[0]
    done = [result for result in both.results if result is not None]
    assert len(done) == 2  # both ran (or one failed, raised above)
    return [reader.output(result) for reader, result in zip(both.readers, done)]


class _BothRuns:
    """The state the two runs of run_both share, each run on its own thread."""

    def __init__(
        self,
        tmp: Path,
        bundle: Path,
        sources: list[SourceFile],
        install_dir: Path | None,
        limits: Limits,
        on_case: OnCase,
    ):
        self.setup = (tmp, bundle, sources, install_dir)
        self.limits = limits
        self.tc = toolchain()
        self.readers = [OutputReader(on_case), OutputReader()]
        self.results: list[SandboxResult | None] = [None, None]
        self.failed: list[BaseException] = []
        self.running: list[Running | None] = [None, None]
        # What each run reported: its digest (holding) or, once ended, its output.
        self.reports: list[str | RunOutput | None] = [None, None]
        self.reported = [threading.Event(), threading.Event()]
        self.abandoned = threading.Event()  # run 1 fails (an interrupt, above all): run 2 is not wanted any more

    def needs_lines(self, index: int) -> bool:
        """Whether run `index`'s lines are needed to compare it with the other run."""
        other = self.reports[1 - index]
        if isinstance(other, str):
            trailer = self.readers[index].trailer
            return trailer is None or other != trailer["sha256"]
        return other is not None and other.response is not None and other.response.get("ok") is True

    # The deadline is for the transformer's own work: time spent waiting on
    # this process (streaming at the pace of the checks, waiting for the other
    # run) restarts it rather than counting against it.
    def on_line(self, index: int, line: bytes) -> bool:
        reader = self.readers[index]
        handle = self.running[index]
        assert handle is not None, "a line before the process was spawned"
        before = reader.response
        if reader.feed(line):
            return False
        if before is None and reader.streamed:
            handle.start_deadline()
        if not reader.holding:
            return reader.complete
        self.hold(index, handle)
        return reader.complete

    def hold(self, index: int, handle: Running) -> None:
        """Run `index` has sent its trailer: report its digest, wait for the
        other's, then ask for its lines or let it go."""
        reader = self.readers[index]
        assert reader.trailer is not None  # holding
        handle.stop_deadline()
        self.reports[index] = reader.trailer["sha256"]
        self.reported[index].set()
        self.reported[1 - index].wait()
        handle.start_deadline()
        ask = self.needs_lines(index)
        if ask:
            reader.ask_for_lines()
        else:
            reader.let_go()
        stdin = handle.proc.stdin
        assert stdin is not None  # started with stdin_pipe=True
        try:
            if ask:
                stdin.write(b"lines\n")
                stdin.flush()
            stdin.close()
        except OSError:  # it ended meanwhile; its output says how
            pass

    def spawned(self, index: int, handle: Running) -> None:
        self.running[index] = handle
        if self.abandoned.is_set():
            lifetime.stop(handle.proc)

    def run(self, index: int) -> None:
        try:
            launch = _prepare(index, *self.setup, self.tc, "lines" if index == 0 else "digest")
            self.results[index] = result = stream_sandboxed(
                JS_DIR / "compile/transform.mjs",
                launch.args,
                lambda line: self.on_line(index, line),
                channel=TRANSFORMER,
                read_paths=launch.read_paths,
                timeout=self.limits.deadline_s,
                tc=self.tc,
                env=launch.env,
                cwd=launch.cwd,
                memory_mb=self.limits.memory_mb,
                umask=launch.umask,
                stdin_pipe=True,
                on_spawn=lambda handle: self.spawned(index, handle),
            )
            if self.reports[index] is None:
                self.reports[index] = self.readers[index].output(result)
        except BaseException as err:  # re-raised in the calling thread
            self.failed.append(err)
        finally:
            self.reported[index].set()


def run_one(
    index: int, tmp: Path, bundle: Path, sources: list[SourceFile], install_dir: Path | None, limits: Limits
) -> SandboxResult:
    """Run `index` alone, its whole output collected (for a separate expand
    step); like run_both, it is over once its response is complete."""
    tc = toolchain()
    launch = _prepare(index, tmp, bundle, sources, install_dir, tc)
    reader = OutputReader()  # only to know when the response is complete: lines are neither parsed nor kept
    lines: list[bytes] = []

    def on_line(line: bytes) -> bool:
        lines.append(line)
        reader.feed(line)
        if reader.holding:  # it reads end of input next (stdin is empty) and exits
            reader.let_go()
        return reader.complete

    result = stream_sandboxed(
        JS_DIR / "compile/transform.mjs",
        launch.args,
        on_line,
        channel=TRANSFORMER,
        read_paths=launch.read_paths,
        timeout=limits.deadline_s,
        tc=tc,
        env=launch.env,
        cwd=launch.cwd,
        memory_mb=limits.memory_mb,
        umask=launch.umask,
    )
    return replace(result, stdout=b"".join(line + b"\n" for line in lines))
