"""The one worker pool (node/worker_pool.py) with real Node workers, sandboxed
and not: requests on stdin, messages on a private pipe, kill and replace, and
a log (stdout and stderr) kept within its cap in memory, however much a
worker prints, with no file on disk."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time
from pathlib import Path

import pytest

from trunchbull.common import lifetime
from trunchbull.node.bounded_output import HEAD_BYTES, TAIL_BYTES
from trunchbull.node.protocol import Channel
from trunchbull.node.sandbox import sandboxed_command
from trunchbull.node.toolchain import JS_DIR, toolchain
from trunchbull.node.worker_pool import ProcessPool, WorkerProcess, start_worker

from tests.support.process_watch import ProcessWatch

MIB = 1 << 20
CHANNEL = Channel("the test worker", {b"answer": 1}, 256)

# A worker: each stdin line is a command; each gets an answer on the message pipe (argv[2]).
WORKER = f"""import {{ writeSync }} from "node:fs";
import {{ createInterface }} from "node:readline";
import {{ blockOnFullPipes }} from {(JS_DIR / "shared/blocking_output.mjs").as_uri()!r};
blockOnFullPipes(process.stdout, process.stderr);
const out = Number(process.argv[2]);
const answer = (text) => writeSync(out, "answer\\t" + JSON.stringify(text) + "\\n");
const big = "z".repeat(1_500_000);
console.log("worker " + process.pid + " started");
createInterface({{ input: process.stdin }}).on("line", (line) => {{
  const [command, arg] = line.split(" ");
  if (command === "echo") answer(arg);
  else if (command === "print") {{ process.stdout.write("o".repeat(Number(arg)) + "\\n"); answer("printed"); }}
  else if (command === "spam") {{ setInterval(() => console.error(big), 0); answer("spamming"); }}
  else if (command === "exit") {{ console.error("last words before exit " + arg); process.exit(Number(arg)); }}
  else if (command === "garble") writeSync(out, "x".repeat(300) + "\\n");
}});
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "worker.mjs"
    path.write_text(WORKER)
    return path


def start(script: Path, sandboxed: bool, companions: tuple[subprocess.Popen, ...] = ()) -> WorkerProcess:
    tc = toolchain()
    if sandboxed:
        cmd_for = lambda fd: sandboxed_command(tc, script, [str(fd)], [script.parent])  # noqa: E731
    else:
        cmd_for = lambda fd: [str(tc.node), str(script), str(fd)]  # noqa: E731
    return start_worker(
        cmd_for, CHANNEL, env=tc.base_env(), cwd=script.parent, sandboxed=sandboxed, companions=companions
    )


def answers(pool: ProcessPool, index: int, count: int, timeout_s: float = 60) -> list[bytes]:
    """The next `count` messages of slot `index` (each event's lines in order)."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count:
        assert time.monotonic() < deadline, f"only {got} of {count} answers"
        for event in pool.poll(0.5):
            assert event.index == index and event.garbled is None and not event.ended, event
            got += event.lines
    return got


def node_pid(worker: WorkerProcess, script: Path) -> int:
    """The Node process of the worker (inside its unshare wrapper when sandboxed)."""
    pids = [worker.proc.pid]
    while pids:
        pid = pids.pop()
        if (
            str(script).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
            and b"unshare" not in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        ):
            return pid
        for task in Path(f"/proc/{pid}/task").iterdir():
            pids += [int(p) for p in (task / "children").read_text().split()]
    raise AssertionError("no Node process under the worker")


@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandboxed"])
def test_messages_come_in_order_and_the_log_is_a_pipe_kept_in_memory(script, sandboxed):
    pool = ProcessPool(lambda _i: start(script, sandboxed), 1)
    try:
        pool.send(0, b"echo a\nprint 100000\necho b\n")
        assert answers(pool, 0, 3) == [b'answer\t"a"', b'answer\t"printed"', b'answer\t"b"']
        worker = pool.current(0)
        assert worker is not None
        pid = node_pid(worker, script)
        for fd in (1, 2):  # what it prints goes to a pipe: no log file grows on disk
            assert stat.S_ISFIFO(os.stat(f"/proc/{pid}/fd/{fd}").st_mode)
        log = worker.log.snapshot()
        first_line = bytes(log.head).split(b"\n")[0]
        assert re.fullmatch(rb"worker \d+ started", first_line)
        assert log.total == len(first_line) + 1 + 100_001 and log.cut == log.total - HEAD_BYTES - TAIL_BYTES
        excerpt = worker.log_excerpt()
        assert excerpt.startswith(first_line.decode() + "\n")
        assert re.search(r"\n\[… [\d,]+ bytes not shown …\]\n", excerpt) and excerpt.endswith("oooo")
    finally:
        pool.close()


def test_a_worker_printing_without_end_still_answers_and_its_log_stays_within_the_cap(script):
    """A worker that prints 1.5 MB lines from a timer forever, between and
    during its requests: every request is still answered, in order, while its
    log, read at its pace, keeps no more than its head and tail, and the
    worker, blocking on the pipe, queues nothing in its own memory."""
    pool = ProcessPool(lambda _i: start(script, sandboxed=True), 1)
    try:
        pool.send(0, b"spam\n")
        assert answers(pool, 0, 1) == [b'answer\t"spamming"']
        worker = pool.current(0)
        assert worker is not None
        watch = ProcessWatch(worker.proc).__enter__()
        sent = 0
        while worker.log.snapshot().total < 512 * MIB:
            sent += 1
            pool.send(0, f"echo {sent}\n".encode())
            assert answers(pool, 0, 1) == [f'answer\t"{sent}"'.encode()]
        watch.__exit__()
        log = worker.log.snapshot()
        assert len(log.head) == HEAD_BYTES and len(log.tail) == TAIL_BYTES and log.cut > 0
        assert log.head.startswith(b"worker ") and set(bytes(log.tail)) <= set(b"z\n")
        node = [s for s in watch.seen.values() if "worker.mjs" in s.cmdline and "unshare" not in s.cmdline.split()[0]]
        assert node and max(s.peak_kib for s in node) * 1024 < 256 * MIB
        assert all(s.outputs <= {"pipe"} for s in node)  # nothing written to a file
    finally:
        pool.kill_all()


def test_a_worker_that_exits_leaves_its_last_words_in_the_excerpt_at_once(script, tmp_path):
    """It exits while a companion (started for it, as a run's tool executor)
    still holds the log open: the excerpt already has what it printed last."""
    tc = toolchain()
    companion_log_holder = tmp_path / "companion.mjs"
    companion_log_holder.write_text("setInterval(() => {}, 1000)\n")
    pool = ProcessPool(lambda _i: _with_companion(script, companion_log_holder, tc), 1)
    try:
        pool.send(0, b"print 200000\nexit 3\n")
        assert answers(pool, 0, 1) == [b'answer\t"printed"']
        ended = []
        while not ended:
            ended = [e for e in pool.poll(1.0) if e.ended]
        worker = pool.current(0)
        assert worker is not None
        assert worker.exit_description() == "exited with code 3"
        assert worker.companions[0].poll() is None  # still holding the log open
        excerpt = worker.log_excerpt()
        assert excerpt.endswith("oooo\nlast words before exit 3")
        assert "bytes not shown" in excerpt
        replaced = pool.replace(0)  # the companion goes with it; the new worker has a log of its own
        assert worker.companions[0].poll() is not None and pool.replaced == 1
        pool.send(0, b"echo again\n")
        assert answers(pool, 0, 1) == [b'answer\t"again"']
        assert "last words" not in replaced.log_excerpt()
    finally:
        pool.kill_all()


def _with_companion(script: Path, holder: Path, tc) -> WorkerProcess:
    from trunchbull.node.bounded_output import OutputPipe

    log = OutputPipe()
    companion = lifetime.spawn(
        [str(tc.node), str(holder)], stdin=subprocess.DEVNULL, stdout=log.write_fd, stderr=log.write_fd
    )
    return start_worker(
        lambda fd: [str(tc.node), str(script), str(fd)],
        CHANNEL,
        env=tc.base_env(),
        cwd=script.parent,
        sandboxed=False,
        log=log,
        companions=(companion,),
    )


def test_a_line_past_the_channels_bound_is_reported_as_garbled(script):
    pool = ProcessPool(lambda _i: start(script, sandboxed=False), 1)
    try:
        pool.send(0, b"garble\n")
        events = []
        while not events:
            events = pool.poll(1.0)
        (event,) = events
        assert event.garbled == "the test worker sent a line longer than 256 bytes" and event.lines == []
    finally:
        pool.kill_all()


def test_closing_the_pool_ends_every_worker(script):
    pool = ProcessPool(lambda _i: start(script, sandboxed=True), 2)
    pool.send(0, b"echo x\n")
    pool.send(1, b"echo y\n")
    workers = [pool.current(0), pool.current(1)]
    pool.close(timeout_s=30)
    for worker in workers:
        assert worker is not None and worker.proc.poll() is not None
        assert worker.log.wait().total > 0  # its log ended with it
