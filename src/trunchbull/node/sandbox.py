"""Running Node: the trusted helper process (config reading, bundling), and
sandboxed runs of user code. The toolchain itself is in toolchain.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import UsageError
from trunchbull.node.bounded_output import CappedOutput, OutputPipe, read_capped
from trunchbull.node.protocol import HELPER, Channel, ProtocolError, stream_lines
from trunchbull.node.toolchain import JS_DIR, Toolchain, start_helper

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

DEFAULT_MEMORY_MB = 2048


class HelperTimeout(Exception):
    """The helper did not answer within the deadline (and was stopped)."""


class NodeHelper:
    """The trusted helper (js/compile/helper.mjs): config reading and esbuild bundling.
    One long-lived process per compile, answering one JSON line per request."""

    def __init__(self, tc: Toolchain, started: subprocess.Popen | None = None):
        """`started`: the helper process, when it was started early (toolchain.start_helper_early)."""
        self._proc = started or start_helper(tc)
        self._lock = threading.Lock()

    def request(self, payload: dict, timeout: float | None = None) -> dict:
        """The helper's answer; with `timeout`, HelperTimeout when it takes
        longer (the helper is then stopped: esbuild may be blocked on a file)."""
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            lifetime.stop(self._proc)

        timer = threading.Timer(timeout, expire) if timeout else None
        with self._lock:
            assert self._proc.stdin and self._proc.stdout
            try:
                if timer:
                    timer.start()
                self._proc.stdin.write(orjson.dumps(payload) + b"\n")
                self._proc.stdin.flush()
                line = self._proc.stdout.readline(HELPER.max_line + 1)
            except OSError:  # the helper is gone
                line = b""
            finally:
                if timer:
                    timer.cancel()
        if expired.is_set():
            raise HelperTimeout(f"the Node helper did not answer within {timeout:g} s")
        if not line:
            err = read_capped(self._proc.stderr).excerpt() if self._proc.stderr else ""
            raise UsageError(f"the Node helper stopped unexpectedly: {err.strip()}")
        try:
            response = HELPER.single(line)
        except ProtocolError as err:
            raise UsageError(str(err)) from None
        if type(response) is not dict:
            raise UsageError("the Node helper answered with something other than an object")
        return response

    def close(self) -> None:
        """End of input stops the helper: it stops esbuild's service, waits
        for it and exits, while the compile goes on (lifetime.shutdown()
        waits for that exit before the command returns)."""
        if self._proc.poll() is None:
            assert self._proc.stdin
            try:
                self._proc.stdin.close()
            except OSError:
                pass

    def __enter__(self) -> "NodeHelper":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


@dataclass
class SandboxResult:
    returncode: int | None  # None: killed at the deadline, or stopped once its response was complete
    stdout: bytes
    stderr: CappedOutput  # (user code's stdout goes there too)
    timed_out: bool
    complete: bool = False  # the caller had the whole response and stopped the process without waiting for its exit
    overlong: bool = False  # a line longer than its channel allows: the process was stopped there


def sandbox_flags(read_paths: list[Path], memory_mb: int = DEFAULT_MEMORY_MB) -> list[str]:
    """Node's permission model: reads only where listed; no writes, child
    processes, workers or native addons."""
    flags = ["--permission", f"--max-old-space-size={memory_mb}", "--disable-warning=ExperimentalWarning"]
    # Node checks real paths: a read path reached through a symlink (a Pants
    # immutable input, a linked node_modules) is allowed by its target too.
    for path in sorted({str(p) for p in read_paths} | {str(Path(p).resolve()) for p in read_paths}):
        flags.append(f"--allow-fs-read={path}")
    return flags


_isolation: list[str] | None = None
_isolation_lock = threading.Lock()
_limitation_said = False

# A fresh network namespace (no interfaces but a down loopback), and a PID
# namespace with its own /proc: the process cannot signal, or read the /proc
# of, any process outside it. --kill-child: a SIGKILL of `unshare` itself (a
# run killed as a group, a worker replaced) takes the namespace's process along.
# `setsid`: a session of its own, since kill(0, …) reaches the caller's whole
# process group even across PID namespaces (the CLI's, for a run's workers).
FULL_ISOLATION = ["-n", "-p", "-f", "--mount-proc", "--kill-child=SIGKILL"]
NETWORK_ONLY = ["-n"]
# What `unshare` of util-linux up to 2.38 prints when the process it waits
# for is killed with SIGKILL (lifetime.stop): not the process's output.
UNSHARE_KILLED_LINE = b"unshare: sigprocmask unblock failed: Invalid argument\n"
LIMITATION = (
    "trunchbull: note: user code (tools, evaluators, transformers) runs without {missing} of its own here "
    "(it needs root and a working `unshare` on Linux): {consequence}; see docs/running.md, \"Isolation\""
)


def isolation_prefix() -> list[str]:
    """The command prefix that runs user code in namespaces of its own: a
    network and a PID namespace where the platform allows it (root on Linux,
    a working `unshare`), a network namespace alone where only that works,
    else []. What is missing is said once per process on stderr."""
    global _isolation
    with _isolation_lock:  # the pools start their processes from several threads
        if _isolation is None:
            unshare, setsid = shutil.which("unshare"), shutil.which("setsid")
            found: list[str] = []
            if unshare and hasattr(os, "geteuid") and os.geteuid() == 0 and not os.environ.get("TRUNCHBULL_NO_UNSHARE"):
                candidates = [[unshare, *NETWORK_ONLY, "--"]]
                if setsid:  # (without -f there is no child to give a session: `setsid` would fork)
                    candidates.insert(0, [unshare, *FULL_ISOLATION, "--", setsid])
                for prefix in candidates:
                    if lifetime.run([*prefix, "true"]).returncode == 0:
                        found = prefix
                        break
            _say_limitation(found)
            _isolation = found
        return _isolation


def _say_limitation(prefix: list[str]) -> None:
    global _limitation_said
    if _limitation_said:
        return
    _limitation_said = True
    if not prefix:
        missing, consequence = (
            "a network or PID namespace",
            "it can open sockets and signal other processes of this user",
        )
    elif "-p" not in prefix:
        missing, consequence = "a PID namespace", "it can signal other processes of this user"
    else:
        return
    print(LIMITATION.format(missing=missing, consequence=consequence), file=sys.stderr)


def spawn_sandboxed(cmd: list[str], **popen_kwargs) -> subprocess.Popen:
    """lifetime.spawn for a sandboxed_command: when it starts with `unshare`,
    stopping it kills the namespace's process first (lifetime.stop)."""
    prefix = isolation_prefix()
    return lifetime.spawn(cmd, reaps_child=bool(prefix) and cmd[: len(prefix)] == prefix, **popen_kwargs)


def sandboxed_command(
    tc: Toolchain,
    script: Path,
    args: list[str],
    read_paths: list[Path],
    memory_mb: int = DEFAULT_MEMORY_MB,
    node_flags: tuple[str, ...] = (),
) -> list[str]:
    """The one way user code is started: in namespaces of its own (no
    network, no other processes: isolation_prefix) and under Node's
    permission model (sandbox_flags), reading only `read_paths`, the
    scripts and the toolchain."""
    return [
        *isolation_prefix(),
        str(tc.node),
        *sandbox_flags([*read_paths, JS_DIR, tc.root], memory_mb),
        *node_flags,
        str(script),
        *args,
    ]


STREAM_BUFFER = 1 << 20
_F_SETPIPE_SZ = 1031  # Linux: grow the pipe so a streaming writer blocks less often


class Running:
    """A streaming sandboxed process, for a caller that also talks to it or
    paces it: the time the process spends waiting on the caller need not
    count against its deadline."""

    def __init__(self, proc: subprocess.Popen, timeout: float, expire: Callable[[], None]):
        self.proc = proc
        self._timeout = timeout
        self._expire = expire
        self._timer = threading.Timer(timeout, expire)
        self._lock = threading.Lock()

    def start_deadline(self) -> None:
        """(Re)start the full deadline from now."""
        with self._lock:
            self._timer.cancel()
            self._timer = threading.Timer(self._timeout, self._expire)
            self._timer.start()

    def stop_deadline(self) -> None:
        with self._lock:
            self._timer.cancel()


def stream_sandboxed(
    script: Path,
    args: list[str],
    on_line,
    *,
    channel: Channel,
    read_paths: list[Path],
    timeout: float,
    tc: Toolchain,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    umask: int = -1,
    stdin_pipe: bool = False,
    on_spawn: Callable[[Running], None] | None = None,
) -> SandboxResult:
    """Runs `script` under the sandbox (sandbox_flags, no network where
    possible, its own process group, a deadline) and hands each non-blank
    stdout line (without its newline, at most the `channel`'s bound: a longer
    one stops the process, `SandboxResult.overlong`) to `on_line` as soon as
    Node writes it, so the caller can work while Node goes on.
    When `on_line` returns True the response is complete: the process is
    killed and reaped in the background, since tearing down a large Node heap
    takes tens of milliseconds nobody needs to wait for (stderr is then not
    collected). Its stderr is kept within a cap (bounded_output.py) and drained
    as fast as it is written. `on_spawn` gets a handle on the process (its
    deadline; with `stdin_pipe`, its stdin to answer it); otherwise stdin is
    empty."""
    cmd = sandboxed_command(tc, script, args, read_paths, memory_mb)
    err_pipe = OutputPipe()
    try:
        proc = spawn_sandboxed(
            cmd,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err_pipe.write_fd,
            env=env if env is not None else tc.base_env(),
            cwd=cwd,
            umask=umask,
            bufsize=STREAM_BUFFER,
        )
    finally:
        err_pipe.close_writer()
    assert proc.stdout is not None  # piped
    if fcntl is not None:
        try:
            fcntl.fcntl(proc.stdout.fileno(), _F_SETPIPE_SZ, STREAM_BUFFER)
        except OSError:
            pass
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        lifetime.stop(proc)

    running = Running(proc, timeout, expire)
    running.start_deadline()
    if on_spawn:
        on_spawn(running)
    complete = False
    try:
        complete, overlong = _hand_lines(proc, channel, on_line)
    finally:
        _end_streaming(proc, running, complete)
    if complete:
        return SandboxResult(None, b"", CappedOutput(), False, complete=True)
    stderr = err_pipe.wait()
    if timed_out.is_set() or overlong:
        stderr.drop_ending(UNSHARE_KILLED_LINE)
    return SandboxResult(
        None if timed_out.is_set() else proc.returncode, b"", stderr, timed_out.is_set(), overlong=overlong
    )


def _hand_lines(proc: subprocess.Popen, channel: Channel, on_line) -> tuple[bool, bool]:
    """(complete, overlong): each non-blank stdout line handed to `on_line`
    until it says the response is complete, or the process ends (waited
    for), or sends a line longer than the channel's bound (then stopped)."""
    assert proc.stdout is not None  # piped
    try:
        for line in stream_lines(proc.stdout, channel):
            if line and not line.isspace() and on_line(line):
                return True, False
    except ProtocolError:
        lifetime.stop(proc)
        proc.wait()
        return False, True
    proc.wait()
    return False, False


def _end_streaming(proc: subprocess.Popen, running: Running, complete: bool) -> None:
    """The deadline cancelled, stdin closed, and a process still running
    stopped: reaped in the background once its response is complete, else
    waited for."""
    running.stop_deadline()
    if proc.stdin:
        try:
            proc.stdin.close()
        except OSError:  # the process is gone
            pass
    if proc.poll() is None:
        lifetime.stop(proc)
        if complete:
            lifetime.reap_in_background(proc)
        else:
            proc.wait()
