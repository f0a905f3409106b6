"""The local model runtime of `--model llamacpp:PATH.gguf`: node-llama-cpp
and its prebuilt CPU binary, installed on first use from its own pinned
lockfile (third_party/npm-llamacpp) into a content-addressed cache directory,
so that a user who never runs a local model never downloads it.

Only the binary this platform needs is installed (`npm ci --omit=optional`:
none of node-llama-cpp's ~730 MB of optional GPU and other-platform builds),
and nothing is compiled (`--ignore-scripts`: its postinstall would offer to
build llama.cpp from source).

node-llama-cpp tests a prebuilt binary before loading it by forking a child
process, which the run workers' permission model forbids. So the install runs that test once, unsandboxed, and then
records the tested binary as node-llama-cpp's "last build" (the layout its own
`source build` command writes), which `getLlama("lastBuild")` loads without a
test process. The install ends by loading it exactly as a worker will, under
the permission model with native addons allowed.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from trunchbull.common.diagnostics import UsageError
from trunchbull.node.bounded_output import run_capped
from trunchbull.node.installer import (
    InstallFailed,
    install_into,
    is_installed,
    lock_key,
    pinned_lock,
    with_node_on_path,
)
from trunchbull.node.sandbox import sandbox_flags
from trunchbull.node.toolchain import JS_DIR, Toolchain, cache_root

SUPPORTED = "Linux on x86-64 with glibc"
BINARY_PACKAGE = "@node-llama-cpp/linux-x64"
BUILD_FOLDER = "linux-x64"  # node-llama-cpp's name for a CPU-only build for this platform
CHECK_SCRIPT = JS_DIR / "run/llamacpp_check.mjs"
NODE_FLAGS = ("--allow-addons", "--disable-warning=SecurityWarning")
INSTALL_COMMAND = ["ci", "--omit=optional", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]


def check_platform() -> None:
    """A usage error on a platform without a prebuilt binary in the lockfile."""
    machine = platform.machine().lower()
    if sys.platform != "linux" or machine not in ("x86_64", "amd64"):
        raise UsageError(
            f"--model llamacpp: local GGUF models run on {SUPPORTED} only (this is {sys.platform} on "
            f"{platform.machine() or 'an unknown CPU'}); run the model in a server and use "
            "--model openai-compatible:MODEL --base-url URL instead"
        )
    libc, _ = platform.libc_ver()
    if libc and libc != "glibc":
        raise UsageError(
            f"--model llamacpp: local GGUF models run on {SUPPORTED} only (this Linux uses {libc}); run "
            "the model in a server and use --model openai-compatible:MODEL --base-url URL instead"
        )


DEFAULT_CONTEXT = 8192
CONTEXT_ENV = "TRUNCHBULL_LLAMACPP_CONTEXT"
THREADS_ENV = "TRUNCHBULL_LLAMACPP_THREADS"


def _positive(name: str, minimum: int, what: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < minimum:
        raise UsageError(f"{name}={text!r}: give {what} as an integer ≥ {minimum}")
    return int(text)


def context_size() -> int:
    """The context (tokens) of each worker's model: TRUNCHBULL_LLAMACPP_CONTEXT,
    else 8192, and never more than the model was trained for."""
    return _positive(CONTEXT_ENV, 64, "the local model's context size in tokens") or DEFAULT_CONTEXT


def thread_count(planned: int) -> int:
    """The threads of each worker's model: TRUNCHBULL_LLAMACPP_THREADS, else
    the plan's share of the cores."""
    return _positive(THREADS_ENV, 1, "the local model's threads per worker") or planned


def _lock() -> dict[str, bytes]:
    return pinned_lock("npm-llamacpp", "npm_llamacpp")


@dataclass(frozen=True)
class LocalRuntime:
    """An installed runtime: the directory holding its node_modules."""

    root: Path

    @property
    def package(self) -> Path:
        return self.root / "node_modules" / "node-llama-cpp"

    def read_paths(self) -> list[Path]:
        return [self.root]

    @property
    def node_flags(self) -> tuple[str, ...]:
        return NODE_FLAGS


def installed_runtime() -> LocalRuntime | None:
    target = cache_root() / "llamacpp" / lock_key(_lock())
    return LocalRuntime(target) if is_installed(target) else None


def local_runtime(tc: Toolchain) -> LocalRuntime:
    """The runtime, installed on first use."""
    check_platform()
    found = installed_runtime()
    if found is not None:
        return found
    target = cache_root() / "llamacpp" / lock_key(_lock())
    npm = shutil.which("npm")
    if not npm:
        raise UsageError("--model llamacpp: npm is required once, to install node-llama-cpp (the local model runtime)")
    print("trunchbull: installing node-llama-cpp, the local model runtime (first use; about 85 MB)", file=sys.stderr)
    try:
        install_into(
            target,
            _lock(),
            [npm, *INSTALL_COMMAND],
            env=with_node_on_path(tc.node),
            check=lambda staged: _check_staged(tc, staged),
        )
    except InstallFailed as failed:
        raise UsageError(
            f"--model llamacpp: installing node-llama-cpp failed (npm {' '.join(INSTALL_COMMAND)}):\n{failed.output}"
        ) from None
    return LocalRuntime(target)


def _check_staged(tc: Toolchain, staging: Path) -> None:
    """The installed binary runs here, and loads as a run worker loads it."""
    runtime = LocalRuntime(staging)
    # node-llama-cpp's own test of its prebuilt binary on this machine (it forks a test process)
    _check(
        tc,
        [str(tc.node), str(CHECK_SCRIPT), "test", str(runtime.package)],
        staging,
        "the prebuilt llama.cpp binary does not run on this machine",
    )
    _record_last_build(runtime)
    # ... and the load a run worker makes: under the permission model, addons allowed, no test process
    _check(
        tc,
        [str(tc.node), *sandbox_flags([staging, JS_DIR]), *NODE_FLAGS, str(CHECK_SCRIPT), "load", str(runtime.package)],
        staging,
        "the tested llama.cpp binary cannot be loaded by a run worker",
    )


def _record_last_build(runtime: LocalRuntime) -> None:
    """The tested prebuilt binary as node-llama-cpp's last local build."""
    binaries = runtime.root / "node_modules" / BINARY_PACKAGE / "bins" / BUILD_FOLDER
    if not (binaries / "llama-addon.node").is_file():
        raise UsageError(f"--model llamacpp: {BINARY_PACKAGE} holds no llama-addon.node for {BUILD_FOLDER}")
    llama = runtime.package / "llama"
    build = llama / "localBuilds" / BUILD_FOLDER
    build.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(binaries, build), build / "Release")
    (build / "buildDone.status").write_text("")
    (llama / "lastBuild.json").write_text('{"folderName": "%s"}\n' % BUILD_FOLDER)


def _check(tc: Toolchain, cmd: list[str], cwd: Path, what: str) -> None:
    code, output = run_capped(cmd, cwd=cwd, env=tc.base_env())
    if code != 0:
        raise UsageError(f"--model llamacpp: {what}:\n{output.excerpt()}")
