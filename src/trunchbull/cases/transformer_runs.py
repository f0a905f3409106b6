"""A transformer's two runs: each in a fresh sandboxed Node process
(js/transform.mjs) whose environment differs on purpose, and the reading of
their output protocol.

Both runs start together. Run 1 streams its cases, which are parsed and
handed to the caller line by line while Node still writes them. Run 2 only
reports the sha256 of its case lines and holds them back: when the digests
agree (a deterministic transformer) that is all the comparison needs, and
otherwise run 2 is asked for its lines to find the first difference."""

from __future__ import annotations

import io
import os
import shutil
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import orjson

from trunchbull.node import JS_DIR, Running, SandboxResult, Toolchain, stream_sandboxed, toolchain

MAX_CASES = 25_000

# The two runs' deliberately different environments (reproducible-builds style).
RUNS = (
    {"dir": "1/work", "TZ": "Pacific/Kiritimati", "LANG": "en_US.UTF-8", "HOME": "/home/trunchbull-first",
     "USER": "trunchbull-first", "umask": 0o022, "clock_offset_ms": 0, "env_order": 1},
    {"dir": "2/varied/deeper/cwd", "TZ": "Etc/GMT+12", "LANG": "tr_TR.UTF-8", "HOME": "/var/empty/second-home",
     "USER": "builder2", "umask": 0o077,
     "clock_offset_ms": ((400 * 24 + 5) * 3600 + 17 * 60 + 23) * 1000 + 456, "env_order": -1},
)

OnCase = Callable[[int, object], None]


@dataclass(frozen=True)
class SourceFile:
    name: str
    file: Path
    rel: str  # root-relative path, as the transformer sees it
    sha256: str
    size: int


@dataclass(frozen=True)
class Limits:
    deadline_s: float
    memory_mb: int


@dataclass
class RunOutput:
    """One run's outcome. `response` is None when the run produced no
    complete, well-formed response (crash, deadline, exit mid-stream)."""
    sandbox: SandboxResult
    response: dict | None
    streamed: bool = False
    digest: str | None = None  # the run's sha256 over its case lines
    values: list = field(default_factory=list)  # parsed cases (a run read with on_case)
    lines: list[bytes] = field(default_factory=list)  # raw case lines (a run read without)

    def cases(self) -> list:
        """The streamed cases as JSON values."""
        return self.values if self.values or not self.lines else [orjson.loads(line) for line in self.lines]


class OutputReader:
    """Reads one run's stdout (see js/transform.mjs), a line at a time:
    either one response line, or a header, the case lines (when sent) and a
    trailer. With `on_case`, each case is parsed and handed over as it
    arrives; without, case lines are kept raw."""

    def __init__(self, on_case: OnCase | None = None):
        self.on_case = on_case
        self.response: dict | None = None
        self.trailer: dict | None = None
        self.values: list = []
        self.lines: list[bytes] = []
        self.expected = 0  # case lines still to come
        self.malformed = False

    @property
    def streamed(self) -> bool:
        return bool(self.response and "stream" in self.response)

    @property
    def holding(self) -> bool:
        """A digest-mode run that has reported its digest and holds its lines."""
        return self.streamed and self.trailer is not None and not self.values and not self.lines \
            and self.response["stream"] == "digest" and self.response["count"] > 0

    def ask_for_lines(self) -> None:
        """The caller asked a holding run for its lines: they and a second trailer follow."""
        self.expected, self.trailer = self.response["count"], None

    @property
    def complete(self) -> bool:
        """A streamed response has ended with its trailer (and, in digest
        mode, the caller has decided whether to ask for the lines)."""
        return self.streamed and self.trailer is not None and not self.expected and not self.malformed

    def feed(self, line: bytes) -> None:
        if self.malformed:
            return
        if self.response is None:
            self.response = self._object(line, "ok")
            if self.streamed:
                count = self.response.get("count")
                self.expected = count if self.response["stream"] == "lines" and isinstance(count, int) else 0
        elif self.expected:
            self.expected -= 1
            if not self.on_case:
                self.lines.append(line)
                return
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                self.malformed = True
                return
            self.on_case(len(self.values), value)
            self.values.append(value)
        elif self.streamed and self.trailer is None:
            self.trailer = self._object(line, "end")
        else:
            self.malformed = True

    def _object(self, line: bytes, required: str) -> dict | None:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            value = None
        if not isinstance(value, dict) or required not in value:
            self.malformed = True
            return None
        return value

    def output(self, sandbox: SandboxResult) -> RunOutput:
        response = self.response
        if sandbox.timed_out or (sandbox.returncode != 0 and not sandbox.complete) or self.malformed:
            response = None
        elif self.streamed:
            if self.trailer is None or self.expected or not isinstance(self.trailer.get("sha256"), str):
                response = None
            elif self.trailer.get("violation"):
                response = {"ok": False, "stage": "sandbox", "error": self.trailer["violation"], "name": response.get("name")}
        streamed = response is not None and self.streamed
        return RunOutput(sandbox, response, streamed, self.trailer["sha256"] if streamed else None,
                         self.values, self.lines)

    def read_all(self, stdout: bytes, sandbox: SandboxResult) -> RunOutput:
        """Read a finished run's whole stdout (a run made by another process)."""
        for line in io.BytesIO(stdout):
            if not line.isspace():
                self.feed(line)
        return self.output(sandbox)


@dataclass(frozen=True)
class _Launch:
    args: list[str]
    read_paths: list[Path]
    env: dict[str, str]
    cwd: Path
    umask: int


def _prepare(index: int, tmp: Path, bundle: Path, sources: list[SourceFile], install_dir: Path | None,
             tc: Toolchain, send: str = "lines") -> _Launch:
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
        try:
            os.link(source.file, dest)
        except OSError:
            shutil.copyfile(source.file, dest)
        request_sources.append({"name": source.name, "file": str(dest), "path": source.rel, "sha256": source.sha256})
    request = work / "request.json"
    request.write_bytes(orjson.dumps({"bundleFile": str(work / "transformer.mjs"), "maxCases": MAX_CASES,
                                      "send": send, "sources": request_sources}))
    env = {**tc.base_env(), "TZ": variant["TZ"], "LANG": variant["LANG"], "LC_ALL": variant["LANG"],
           "HOME": variant["HOME"], "USER": variant["USER"], "LOGNAME": variant["USER"], "TMPDIR": str(work)}
    if variant["clock_offset_ms"]:
        env["TRUNCHBULL_CLOCK_OFFSET_MS"] = str(variant["clock_offset_ms"])
    env = dict(sorted(env.items(), reverse=variant["env_order"] < 0))
    read_paths = [sandbox]
    if install_dir:
        read_paths.append(install_dir / "node_modules")
    return _Launch([str(request)], read_paths, env, work, variant["umask"])


def run_both(tmp: Path, bundle: Path, sources: list[SourceFile], install_dir: Path | None, limits: Limits,
             on_case: OnCase) -> list[RunOutput]:
    """Both runs at once; run 1's cases go to `on_case` as they arrive, and
    run 2 sends its own only when its digest differs from run 1's."""
    tc = toolchain()
    readers = [OutputReader(on_case), OutputReader()]
    results: list[SandboxResult | None] = [None, None]
    failed: list[BaseException] = []
    first_done = threading.Event()
    first: list[RunOutput] = []
    running: list[Running | None] = [None, None]

    # The deadline is for the transformer's own work: time spent waiting on
    # this process (run 1 streaming at the pace of the checks, run 2 waiting
    # for run 1) restarts it rather than counting against it.
    def on_first_line(line: bytes) -> bool:
        reader = readers[0]
        before = reader.response
        reader.feed(line)
        if before is None and reader.streamed:
            running[0].start_deadline()
        return reader.complete

    def on_second_line(line: bytes) -> bool:
        reader = readers[1]
        reader.feed(line)
        if not reader.holding:
            return reader.complete
        running[1].stop_deadline()
        first_done.wait()  # run 2 usually reports first: run 1 streams to a busier reader
        one = first[0] if first else None
        running[1].start_deadline()
        stdin = running[1].proc.stdin
        try:
            if one and one.response and one.response.get("ok") and not (one.streamed and one.digest == reader.trailer["sha256"]):
                reader.ask_for_lines()
                stdin.write(b"lines\n")
                stdin.flush()
            stdin.close()
        except OSError:  # it ended meanwhile; its output says how
            pass
        return reader.complete

    def run(index: int) -> None:
        try:
            launch = _prepare(index, tmp, bundle, sources, install_dir, tc, "lines" if index == 0 else "digest")
            results[index] = stream_sandboxed(
                JS_DIR / "transform.mjs", launch.args, on_second_line if index else on_first_line,
                read_paths=launch.read_paths, timeout=limits.deadline_s, tc=tc, env=launch.env, cwd=launch.cwd,
                memory_mb=limits.memory_mb, umask=launch.umask, stdin_pipe=index == 1,
                on_spawn=lambda handle: running.__setitem__(index, handle))
        except BaseException as err:  # re-raised in the calling thread
            failed.append(err)

    second = threading.Thread(target=run, args=(1,))
    second.start()
    try:
        run(0)
        if results[0] is not None:
            first.append(readers[0].output(results[0]))
    finally:
        first_done.set()
    second.join()
    if failed:
        raise failed[0]
    return [first[0], readers[1].output(results[1])]


def run_one(index: int, tmp: Path, bundle: Path, sources: list[SourceFile], install_dir: Path | None,
            limits: Limits) -> SandboxResult:
    """Run `index` alone, its whole output collected (for a separate expand
    step); like run_both, it is over once its response is complete."""
    tc = toolchain()
    launch = _prepare(index, tmp, bundle, sources, install_dir, tc)
    reader = OutputReader(on_case=lambda index, value: None)  # only to know when the response is complete
    lines: list[bytes] = []

    def on_line(line: bytes) -> bool:
        lines.append(line)
        reader.feed(line)
        return reader.complete

    result = stream_sandboxed(JS_DIR / "transform.mjs", launch.args, on_line, read_paths=launch.read_paths,
                              timeout=limits.deadline_s, tc=tc, env=launch.env, cwd=launch.cwd,
                              memory_mb=limits.memory_mb, umask=launch.umask)
    return replace(result, stdout=b"".join(lines))
