"""One worker unit of a run, started (SPEC §8.2): the model caller
(js/run/worker.mjs: holds the key, talks to the provider, imports no
benchmark code) and, when the release has tools, its tool executor
(js/run/tool_executor.mjs: the release's tools, sandboxed as all user code is,
no key in its environment, no network, a PID namespace of its own where the
platform allows it). The two talk over two pipes of their own; the scheduler
(run/workers.py) talks to the model caller only, and kills and replaces the
pair together."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from trunchbull.node.bounded_output import OutputPipe
from trunchbull.node.protocol import RUN_WORKER
from trunchbull.node.sandbox import sandbox_flags, sandboxed_command, spawn_sandboxed
from trunchbull.node.toolchain import JS_DIR, Toolchain
from trunchbull.node.worker_pool import WorkerProcess, start_worker

WORKER_SCRIPT = JS_DIR / "run/worker.mjs"
EXECUTOR_SCRIPT = JS_DIR / "run/tool_executor.mjs"
WORKER_MEMORY_MB = 2048
EXECUTOR_MEMORY_MB = 2048
# A fresh V8 context and module instance per sample (js/shared/fresh_module.mjs).
EXECUTOR_FLAGS = ("--experimental-vm-modules", "--experimental-import-meta-resolve")
# V8's young generation: 8 MB semi-spaces instead of 16 keep a worker ~15 MB
# smaller at full speed (25,000 echo samples: the run's tree peaks ~30 MB
# lower) for ~1.5% more time in scavenges.
SEMI_SPACE_FLAG = "--max-semi-space-size=8"


@dataclass(frozen=True)
class UnitPaths:
    model: list[Path]  # what the model caller reads (the AI SDK bundle, a local model's files)
    tools: list[Path] | None  # what the tool executor reads (the release); None: the release has no tools
    cwd: Path


def spawn_unit(tc: Toolchain, paths: UnitPaths, env: dict[str, str], node_flags: tuple[str, ...]) -> WorkerProcess:
    """Start one unit; `env` is the model caller's (the key included), `node_flags` its extra permissions."""
    log = OutputPipe()  # both processes' stdout and stderr, kept within a cap
    try:
        executor, tool_fds = _spawn_executor(tc, paths, log) if paths.tools is not None else (None, ())
    except BaseException:
        log.close_writer()
        raise
    # In the CLI's process group: a run killed as a group (SIGKILL included) takes its workers along.
    return start_worker(
        lambda fd: [
            str(tc.node),
            *sandbox_flags([*paths.model, JS_DIR, tc.root], WORKER_MEMORY_MB),
            *node_flags,
            SEMI_SPACE_FLAG,
            str(WORKER_SCRIPT),
            str(fd),
            *map(str, tool_fds),
        ],
        RUN_WORKER,
        env=env,
        cwd=paths.cwd,
        sandboxed=False,
        own_group=False,
        pass_fds=tool_fds,
        log=log,
        companions=(executor,) if executor is not None else (),
    )


def _spawn_executor(tc: Toolchain, paths: UnitPaths, log: OutputPipe) -> tuple[subprocess.Popen, tuple[int, int]]:
    """The tool executor, and the model caller's ends of its two pipes (to it, from it)."""
    assert paths.tools is not None
    to_read, to_write = os.pipe()
    from_read, from_write = os.pipe()
    try:
        executor = spawn_sandboxed(
            sandboxed_command(
                tc, EXECUTOR_SCRIPT, [str(from_write)], paths.tools, EXECUTOR_MEMORY_MB, node_flags=EXECUTOR_FLAGS
            ),
            own_group=False,
            stdin=to_read,
            stdout=log.write_fd,
            stderr=log.write_fd,
            pass_fds=(from_write,),
            env=tc.base_env(),  # the toolchain's variables only: never the provider's key
            cwd=str(paths.cwd),
        )
    except BaseException:
        for fd in (to_write, from_read):
            os.close(fd)
        raise
    finally:
        for fd in (to_read, from_write):
            os.close(fd)
    return executor, (to_write, from_read)
