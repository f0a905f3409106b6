"""The pinned Node toolchain (Node 22, esbuild, parser, AI SDK) and running
Node: the trusted helper process, and sandboxed runs of user code."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import orjson

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

from trunchbull.diagnostics import UsageError

JS_DIR = Path(__file__).resolve().parent / "js"
DEFAULT_MEMORY_MB = 2048


def cache_root() -> Path:
    configured = os.environ.get("TRUNCHBULL_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "trunchbull"


def _lock_dir() -> Path:
    """Where the toolchain's package.json + package-lock.json are: the source
    checkout's third_party/npm, or the copy installed as package data."""
    checkout = Path(__file__).resolve().parents[2] / "third_party" / "npm"
    if (checkout / "package-lock.json").is_file():
        return checkout
    return Path(__file__).resolve().parent / "toolchain"  # installed: package data (see pyproject.toml)


def toolchain_dir() -> Path:
    configured = os.environ.get("TRUNCHBULL_TOOLCHAIN")
    if configured:
        path = Path(configured)
        if not (path / "node_modules" / ".bin" / "node").exists():
            raise UsageError(f"TRUNCHBULL_TOOLCHAIN={configured} holds no installed toolchain (node_modules/.bin/node)")
        return path
    lock_dir = _lock_dir()
    digest = hashlib.sha256((lock_dir / "package-lock.json").read_bytes()).hexdigest()[:16]
    target = cache_root() / "toolchain" / digest
    if not (target / "node_modules" / ".bin" / "node").exists():
        _install_toolchain(lock_dir, target)
    return target


def _install_toolchain(lock_dir: Path, target: Path) -> None:
    npm = shutil.which("npm")
    if not npm:
        raise UsageError("npm is required once, to install the pinned Node toolchain")
    print("trunchbull: installing the pinned Node toolchain (first use)", file=sys.stderr)
    staging = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(lock_dir / name, staging / name)
    result = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=staging,
                            capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise UsageError(f"installing the Node toolchain failed:\n{result.stderr.strip()}")
    try:
        staging.rename(target)
    except OSError:  # another process installed it first
        shutil.rmtree(staging, ignore_errors=True)


@dataclass(frozen=True)
class Toolchain:
    root: Path

    @property
    def node(self) -> Path:
        return (self.root / "node_modules" / ".bin" / "node").resolve()

    @property
    def ai_package(self) -> Path:
        return self.root / "node_modules" / "ai" / "dist" / "index.js"

    def base_env(self) -> dict[str, str]:
        """A minimal, deterministic environment for Node processes."""
        env = {"TRUNCHBULL_TOOLCHAIN": str(self.root), "PATH": str(self.node.parent)}
        for passthrough in ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"):
            if passthrough in os.environ:
                env[passthrough] = os.environ[passthrough]
        return env


_toolchain: Toolchain | None = None


def toolchain() -> Toolchain:
    global _toolchain
    if _toolchain is None:
        _toolchain = Toolchain(toolchain_dir())
    return _toolchain


class NodeHelper:
    """The trusted helper (js/helper.mjs): config reading and esbuild bundling.
    One long-lived process per compile, answering one JSON line per request."""

    def __init__(self, tc: Toolchain):
        # V8's code cache for esbuild's and Babel's JavaScript: ~20 ms less
        # start-up (trusted code only; sandboxed processes may not write it).
        env = {**tc.base_env(), "NODE_COMPILE_CACHE": str(cache_root() / "node-compile-cache")}
        self._proc = subprocess.Popen(
            [str(tc.node), str(JS_DIR / "helper.mjs")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        self._lock = threading.Lock()

    def request(self, payload: dict) -> dict:
        with self._lock:
            assert self._proc.stdin and self._proc.stdout
            self._proc.stdin.write(orjson.dumps(payload) + b"\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
            raise UsageError(f"the Node helper stopped unexpectedly: {err.strip()[-2000:]}")
        response = orjson.loads(line)
        if "fatal" in response:
            raise UsageError(f"the Node helper failed: {response['fatal']}")
        return response

    def close(self) -> None:
        """End of input stops the helper. Its exit (esbuild's service too) is
        waited for in the background: every answer is already in."""
        if self._proc.poll() is None:
            assert self._proc.stdin
            self._proc.stdin.close()
            threading.Thread(target=_reap, args=(self._proc, 10), daemon=True).start()

    def __enter__(self) -> "NodeHelper":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class SandboxResult:
    returncode: int | None  # None: killed at the deadline, or stopped once its response was complete
    stdout: bytes
    stderr: str
    timed_out: bool
    complete: bool = False  # the caller had the whole response and stopped the process without waiting for its exit


def sandbox_flags(read_paths: list[Path], memory_mb: int = DEFAULT_MEMORY_MB) -> list[str]:
    """Node's permission model: reads only where listed; no writes, child
    processes, workers or native addons."""
    flags = ["--permission", f"--max-old-space-size={memory_mb}", "--disable-warning=ExperimentalWarning"]
    # Node checks real paths: a read path reached through a symlink (a Pants
    # immutable input, a linked node_modules) is allowed by its target too.
    for path in sorted({str(p) for p in read_paths} | {str(Path(p).resolve()) for p in read_paths}):
        flags.append(f"--allow-fs-read={path}")
    return flags


_no_network: list[str] | None = None


def no_network_prefix() -> list[str]:
    """`unshare -n` (a fresh network namespace: no interfaces but a down
    loopback) when the platform allows it, i.e. running as root on Linux with
    unshare available; else [] and user code keeps the host's network."""
    global _no_network
    if _no_network is None:
        unshare = shutil.which("unshare")
        _no_network = []
        if unshare and hasattr(os, "geteuid") and os.geteuid() == 0 and not os.environ.get("TRUNCHBULL_NO_UNSHARE"):
            probe = subprocess.run([unshare, "-n", "true"], capture_output=True)
            if probe.returncode == 0:
                _no_network = [unshare, "-n", "--"]
    return _no_network


def _sandboxed_command(script: Path, args: list[str], read_paths: list[Path], tc: Toolchain, memory_mb: int) -> list[str]:
    return [*no_network_prefix(), str(tc.node), *sandbox_flags([*read_paths, JS_DIR, tc.root], memory_mb), str(script), *args]


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


def stream_sandboxed(script: Path, args: list[str], on_line, *, read_paths: list[Path], timeout: float,
                     tc: Toolchain, env: dict[str, str] | None = None, cwd: Path | None = None,
                     memory_mb: int = DEFAULT_MEMORY_MB, umask: int = -1, stdin_pipe: bool = False,
                     on_spawn: Callable[[Running], None] | None = None) -> SandboxResult:
    """Runs `script` under the sandbox (sandbox_flags, no network where
    possible, its own process group, a deadline) and hands each non-blank
    stdout line to `on_line` as soon as Node writes it, so the caller can work
    while Node goes on.
    When `on_line` returns True the response is complete: the process is
    killed and reaped in the background, since tearing down a large Node heap
    takes tens of milliseconds nobody needs to wait for (stderr is then not
    collected). `on_spawn` gets a handle on the process (its deadline; with
    `stdin_pipe`, its stdin to answer it); otherwise stdin is empty."""
    cmd = _sandboxed_command(script, args, read_paths, tc, memory_mb)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env if env is not None else tc.base_env(), cwd=cwd,
                            start_new_session=True, umask=umask, bufsize=STREAM_BUFFER)
    if fcntl is not None:
        try:
            fcntl.fcntl(proc.stdout.fileno(), _F_SETPIPE_SZ, STREAM_BUFFER)
        except OSError:
            pass
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        _kill_group(proc)

    stderr_chunks: list[bytes] = []
    drain = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()), daemon=True)
    drain.start()
    running = Running(proc, timeout, expire)
    running.start_deadline()
    if on_spawn:
        on_spawn(running)
    complete = False
    try:
        for line in proc.stdout:
            if not line.isspace() and on_line(line):
                complete = True
                break
        if not complete:
            proc.wait()
    finally:
        running.stop_deadline()
        if proc.stdin:
            try:
                proc.stdin.close()
            except OSError:  # the process is gone
                pass
        if proc.poll() is None:
            _kill_group(proc)
            if complete:
                threading.Thread(target=proc.wait, daemon=True).start()
            else:
                proc.wait()
        if not complete:
            drain.join()
    if complete:
        return SandboxResult(None, b"", "", False, complete=True)
    stderr = b"".join(stderr_chunks).decode(errors="replace")
    return SandboxResult(None if timed_out.is_set() else proc.returncode, b"", stderr, timed_out.is_set())


def _reap(proc: subprocess.Popen, timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass
