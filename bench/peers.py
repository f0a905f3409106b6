#!/usr/bin/env python3
"""Peers of `trunchbull run`: promptfoo and Inspect AI doing the same work on this machine.

The run benchmark (bench/run.py) puts Trunchbull's figures next to these, measured in
the same run. Each peer is installed by this module, on first use, into a cache outside
the repository, at a pinned version; it is never a dependency of the product.

    .venv/bin/python bench/peers.py --cases 2000 [--server-url URL --model NAME] [--repeat 2]

prints a table (wall seconds, samples/s, peak RSS of the process tree, passed) for each
peer and workload. Installation is timed separately and reported above the table.

Importable API
--------------
Versions: ``PROMPTFOO_VERSION``, ``PROMPTFOO_NODE_VERSION``, ``INSPECT_VERSION``,
``INSPECT_OPENAI_VERSION``. Cache: ``$TRUNCHBULL_BENCH_CACHE/peers`` (default
``~/.cache/trunchbull-bench/peers``).

``ensure_promptfoo() -> Path``
    The promptfoo install directory (npm install of ``promptfoo`` and of ``node``, the
    Node that promptfoo >= 0.123 needs (>= 22.22), the same release as Trunchbull's
    toolchain). ``promptfoo_command(root)`` gives the argv prefix that runs its CLI.
``ensure_inspect() -> Path``
    A Python 3.11 venv with ``inspect-ai`` (and ``openai``, for its OpenAI-compatible
    provider); its CLI is ``root / "bin" / "inspect"``.
``install_peers(peers=("promptfoo", "inspect")) -> dict[str, float | None]``
    Runs the ensures; seconds each install took, None where it was already installed
    (a stamp file holding the pinned versions makes installation idempotent).

``run_promptfoo_echo(cases, *, concurrency=16, ...) -> PeerResult``
``run_inspect_echo(cases, *, concurrency=16, ...) -> PeerResult``
    Echo workload: every case's prompt is the model's output (promptfoo's ``echo``
    provider; Inspect's ``mockllm/model`` with a custom-outputs callable that returns the
    last user message), then one substring check of ``expected`` (promptfoo ``contains``,
    Inspect ``includes()``). ``cases``: a sequence of ``{"id", "prompt", "expected"}``
    with ``expected`` a substring of ``prompt``, so every sample passes; a run where not
    all passed raises ``PeerError`` (the work directory is then kept, for the peer's
    logs). Prompts go through promptfoo's Nunjucks templating as every promptfoo var
    does, so they must not contain ``{{`` or ``{%``.
``run_promptfoo_server(cases, base_url, model, *, concurrency=32, ...) -> PeerResult``
``run_inspect_server(cases, base_url, model, *, concurrency=32, ...) -> PeerResult``
    Server workload: the same cases sent to an OpenAI-compatible chat-completions server
    (``base_url`` as the OpenAI SDKs take it, ending in ``/v1``; non-streaming), then the
    same substring check. promptfoo: provider ``openai:chat:MODEL`` with ``apiBaseUrl``;
    Inspect: ``openai-api/bench/MODEL`` with ``BENCH_BASE_URL`` (``stream=false``). A
    dummy API key is passed through the environment.

Every ``run_*`` takes ``workdir=None`` (a temporary directory, removed afterwards
unless ``keep=True``) and ``timeout=None`` (seconds). It writes the inputs, runs the
peer as one fresh process (its own session) and measures it with ``run_measured``:
wall seconds from start to exit (installation and input writing excluded), peak RSS of
the whole process tree, and then checks the peer's own output file for how many passed.

``run_measured(argv, *, env=None, cwd=None, stdout=None, stderr=None, interval=0.02,
timeout=None) -> Measured``
    Runs a command in a new session and samples its process tree's RSS every
    ``interval`` s with a ``TreeRssSampler`` (reusable for any process, e.g.
    ``trunchbull run``). ``Measured``: ``wall_s``, ``cpu_s`` (user + system of the
    process and the descendants it reaped, from ``wait4``), ``peak_rss_bytes``,
    ``returncode``, ``max_processes``. A timeout kills the session and raises
    ``subprocess.TimeoutExpired``.
``TreeRssSampler(pid, interval=0.02)``
    A thread that sums ``/proc/PID/statm`` resident pages over ``pid`` and all its
    descendants (found through ``/proc/*/task/*/children``) every interval and keeps
    the peak; ``start()``, ``stop() -> int`` (bytes), or use it as a context manager and
    read ``.peak_bytes``. Pages shared between processes count once per process (a sum
    of RSS, as ``ps`` shows it), which over-counts a tree of forks a little.

``make_cases(n, seed=0)``
    Cases of the shape above (prompts 100-300 characters), for trying this module alone.

Settings (lean, and the same work per sample for both peers)
------------------------------------------------------------
promptfoo: ``promptfoo eval -c CONFIG --no-cache --no-share --no-table --no-progress-bar
-j C -o results.json --no-write``; tests from a JSONL file (one ``{"vars": {"prompt"},
"assert": [{"type": "contains", "value"}]}`` per line, the normal way for large suites);
prompt ``{{prompt}}``; environment ``PROMPTFOO_DISABLE_TELEMETRY``, ``_UPDATE``,
``_SHARING``, ``_REMOTE_GENERATION``, ``_DEBUG_LOG`` set, cache disabled,
``PROMPTFOO_CONFIG_DIR`` in the work directory. ``--no-write`` skips promptfoo's SQLite
store (results are still complete in ``results.json``); ``write_db=True`` keeps it
(promptfoo's default), which costs 1.5-2x more at 2,000 cases.
Inspect: ``inspect eval task.py --display none --log-level warning --max-connections C
--log-dir DIR --no-log-realtime`` (samples stay in the log, the default ``.eval``
format); the dataset is a JSONL file read with ``json_dataset`` (``FieldSpec``: input
``prompt``, target ``expected``, id ``id``); ``max_samples`` follows
``--max-connections``, as Inspect does by default. ``--no-log-realtime`` only drops the
live buffer that ``inspect view`` reads during a run (the final log is the same);
``realtime=True`` keeps it (Inspect's default). The echo model sets ``usage`` itself
(characters / 4, as Trunchbull's ``echo``): mockllm otherwise counts tokens with
tiktoken, which downloads its encoding at first use.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

PROMPTFOO_VERSION = "0.123.1"
PROMPTFOO_NODE_VERSION = "22.23.3"  # promptfoo 0.123 requires Node >= 22.22; Trunchbull's toolchain pins the same
INSPECT_VERSION = "0.3.285"
INSPECT_OPENAI_VERSION = "3.57.0"  # the `openai` package, needed by Inspect's openai-api provider

CACHE = Path(os.environ.get("TRUNCHBULL_BENCH_CACHE", Path.home() / ".cache" / "trunchbull-bench")) / "peers"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
DUMMY_KEY = "sk-bench-dummy"
PROMPTFOO_ROOT = CACHE / f"promptfoo-{PROMPTFOO_VERSION}"
PROMPTFOO_STAMP = f"promptfoo@{PROMPTFOO_VERSION} node@{PROMPTFOO_NODE_VERSION}\n"
INSPECT_ROOT = CACHE / f"inspect-{INSPECT_VERSION}"
INSPECT_STAMP = f"inspect-ai=={INSPECT_VERSION} openai=={INSPECT_OPENAI_VERSION}\n"


class PeerError(RuntimeError):
    pass


# ---------------------------------------------------------------------------
# Process-tree RSS


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss(pid: int) -> tuple[int, int]:
    """(sum of RSS in bytes, number of processes) of ``pid`` and all its descendants, now."""
    total, count, stack, seen = 0, 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        rss = _rss_bytes(p)
        if rss:
            total += rss
            count += 1
        stack.extend(_children(p))
    return total, count


class TreeRssSampler:
    """Samples the RSS of a process tree every ``interval`` seconds on a thread; keeps the peak."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_bytes = 0
        self.max_processes = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"rss-{pid}", daemon=True)

    def _run(self) -> None:
        while True:
            total, count = tree_rss(self.pid)
            self.samples += 1
            if total > self.peak_bytes:
                self.peak_bytes = total
            if count > self.max_processes:
                self.max_processes = count
            if self._stop.wait(self.interval):
                return

    def start(self) -> "TreeRssSampler":
        self._thread.start()
        return self

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_bytes

    def __enter__(self) -> "TreeRssSampler":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Measured:
    wall_s: float
    cpu_s: float  # user + system CPU of the process and every descendant it reaped
    peak_rss_bytes: int
    returncode: int
    max_processes: int


def run_measured(
    argv: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    stdout: Any = None,
    stderr: Any = None,
    stdin: Any = subprocess.DEVNULL,
    interval: float = 0.02,
    timeout: float | None = None,
) -> Measured:
    """Run ``argv`` in a new session; wall time from start to exit, CPU time, peak RSS of its process tree.

    On timeout (or any exception) the whole session is killed and the exception raised
    (``subprocess.TimeoutExpired`` for a timeout).
    """
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), env=env, cwd=cwd, stdout=stdout, stderr=stderr, stdin=stdin, start_new_session=True
    )
    sampler = TreeRssSampler(proc.pid, interval).start()
    expired = threading.Event()

    def kill() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the session this function started
        except ProcessLookupError:
            pass

    def on_timeout() -> None:
        expired.set()
        kill()

    timer = threading.Timer(timeout, on_timeout) if timeout else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        kill()
        proc.wait()
        sampler.stop()
        raise
    finally:
        if timer:
            timer.cancel()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.stop()
    if expired.is_set():
        raise subprocess.TimeoutExpired(list(argv), timeout or 0)
    return Measured(wall, usage.ru_utime + usage.ru_stime, sampler.peak_bytes, proc.returncode, sampler.max_processes)


# ---------------------------------------------------------------------------
# Installation


def _stamp_ok(root: Path, want: str) -> bool:
    try:
        return (root / ".bench-stamp").read_text() == want
    except OSError:
        return False


def _log(msg: str) -> None:
    print(f"peers: {msg}", file=sys.stderr, flush=True)


def _ca_env(env: dict[str, str]) -> dict[str, str]:
    if os.path.exists(CA_BUNDLE):
        env.setdefault("NODE_EXTRA_CA_CERTS", CA_BUNDLE)
        env.setdefault("SSL_CERT_FILE", CA_BUNDLE)
    return env


def _install_step(argv: list[str], root: Path, **kw: Any) -> None:
    with open(root.parent / f"{root.name}.install.log", "ab") as log:
        done = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, **kw)
    if done.returncode != 0:
        tail = (root.parent / f"{root.name}.install.log").read_text(errors="replace")[-3000:]
        raise PeerError(f"{' '.join(argv[:3])} … failed ({done.returncode}):\n{tail}")


def ensure_promptfoo() -> Path:
    """Install promptfoo (and the Node it needs) on first use; return the install directory."""
    root, want = PROMPTFOO_ROOT, PROMPTFOO_STAMP
    if _stamp_ok(root, want):
        return root
    npm = shutil.which("npm")
    if not npm:
        raise PeerError("npm is needed to install promptfoo")
    _log(f"installing promptfoo {PROMPTFOO_VERSION} (Node {PROMPTFOO_NODE_VERSION}) into {root}")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / "package.json").write_text(
        json.dumps(
            {
                "name": "trunchbull-bench-promptfoo",
                "private": True,
                "dependencies": {"promptfoo": PROMPTFOO_VERSION, "node": PROMPTFOO_NODE_VERSION},
            },
            indent=2,
        )
        + "\n"
    )
    _install_step(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], root, cwd=root, env=_ca_env(dict(os.environ))
    )
    node = root / "node_modules" / ".bin" / "node"
    got = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if got != f"v{PROMPTFOO_NODE_VERSION}":
        raise PeerError(f"installed Node is {got}, expected v{PROMPTFOO_NODE_VERSION}")
    (root / ".bench-stamp").write_text(want)
    return root


def promptfoo_command(root: Path) -> list[str]:
    """The argv prefix that runs promptfoo's CLI with its pinned Node."""
    return [
        str(root / "node_modules" / ".bin" / "node"),
        str(root / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"),
    ]


def find_python311() -> str:
    """Python 3.11, looked for as tools/bootstrap.sh does."""
    candidates = [
        shutil.which("python3.11"),
        *sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.11*/bin/python3.11")),
        "/usr/bin/python3.11",
        "/usr/local/bin/python3.11",
    ]
    for c in candidates:
        if (
            c
            and os.path.exists(c)
            and subprocess.run(
                [c, "-c", "import sys; assert sys.version_info[:2] == (3, 11)"], capture_output=True
            ).returncode
            == 0
        ):
            return c
    raise PeerError("Python 3.11 is needed for the Inspect AI venv")


def ensure_inspect() -> Path:
    """Create the Inspect AI venv on first use; return it (the CLI is ``bin/inspect``)."""
    root, want = INSPECT_ROOT, INSPECT_STAMP
    if _stamp_ok(root, want):
        return root
    _log(f"installing inspect-ai {INSPECT_VERSION} into {root}")
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([find_python311(), "-m", "venv", str(root)], check=True)
    python = str(root / "bin" / "python")
    # pip reads the machine's pip configuration (index, certificates, constraints) itself.
    _install_step(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"inspect-ai=={INSPECT_VERSION}",
            f"openai=={INSPECT_OPENAI_VERSION}",
        ],
        root,
    )
    # Bytecode compiled now, as part of installing: else the first measured run pays for it.
    _install_step([python, "-m", "compileall", "-q", "-j", "0", str(root / "lib")], root)
    freeze = subprocess.run(
        [str(root / "bin" / "python"), "-m", "pip", "freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (root / "bench-freeze.txt").write_text(freeze)  # what the unpinned transitive dependencies resolved to
    (root / ".bench-stamp").write_text(want)
    return root


def install_peers(peers: Iterable[str] = ("promptfoo", "inspect")) -> dict[str, float | None]:
    """Install the peers if needed: seconds per install, None for one already installed."""
    out: dict[str, float | None] = {}
    for name in peers:
        ensure, root, want = {
            "promptfoo": (ensure_promptfoo, PROMPTFOO_ROOT, PROMPTFOO_STAMP),
            "inspect": (ensure_inspect, INSPECT_ROOT, INSPECT_STAMP),
        }[name]
        was = _stamp_ok(root, want)
        start = time.perf_counter()
        ensure()
        out[name] = None if was else time.perf_counter() - start
    return out


# ---------------------------------------------------------------------------
# Workloads


@dataclass
class PeerResult:
    peer: str  # "promptfoo" | "inspect"
    workload: str  # "echo" | "server"
    version: str
    cases: int
    passed: int
    wall_s: float
    samples_per_s: float
    cpu_s: float
    peak_rss_bytes: int
    max_processes: int
    concurrency: int
    command: list[str]
    settings: dict[str, Any] = field(default_factory=dict)
    load_before: float = 0.0  # 1-minute load average
    load_after: float = 0.0

    @property
    def peak_rss_mib(self) -> float:
        return self.peak_rss_bytes / 2**20

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["peak_rss_mib"] = round(self.peak_rss_mib, 1)
        return d


WORDS = (
    "the model answers each question with care and the grader checks a substring of the prompt "
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
    "tau upsilon phi chi psi omega"
).split()


def make_cases(n: int, seed: int = 0) -> list[dict[str, str]]:
    """n cases with prompts of 100-300 characters; ``expected`` is a substring of the prompt."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        length = rng.randint(100, 300)
        prompt = f"Case {i}: "
        while len(prompt) < length:
            prompt += rng.choice(WORDS) + " "
        prompt = prompt[:length].rstrip()
        start = rng.randint(len(f"Case {i}: "), len(prompt) - 12)
        cases.append({"id": f"case-{i}", "prompt": prompt, "expected": f"{prompt[start:start + 12]}"})
    return cases


class _Workdir:
    def __init__(self, workdir: str | Path | None, keep: bool, prefix: str) -> None:
        self.path = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix=prefix))
        self.path.mkdir(parents=True, exist_ok=True)
        self.remove = workdir is None and not keep

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self.remove and exc_type is None:  # kept after a failure, for its logs
            shutil.rmtree(self.path, ignore_errors=True)


def _measure_checked(peer: str, argv: list[str], env: dict[str, str], cwd: Path, timeout: float | None) -> Measured:
    with open(cwd / "stdout.log", "wb") as out, open(cwd / "stderr.log", "wb") as err:
        m = run_measured(argv, env=env, cwd=cwd, stdout=out, stderr=err, timeout=timeout)
    if m.returncode != 0:
        tail = (cwd / "stderr.log").read_text(errors="replace")[-3000:] or (cwd / "stdout.log").read_text(
            errors="replace"
        )[-3000:]
        raise PeerError(f"{peer} exited with {m.returncode} (work directory {cwd}):\n{tail}")
    return m


def measured_result(
    peer: str,
    workload: str,
    version: str,
    n: int,
    passed: int,
    m: Measured,
    concurrency: int,
    argv: list[str],
    settings: dict,
    load_before: float,
) -> PeerResult:
    """One measured run of n samples, every one of which must have passed."""
    if passed != n:
        raise PeerError(f"{peer} {workload}: {passed} of {n} samples passed; every case should pass")
    return PeerResult(
        peer,
        workload,
        version,
        n,
        passed,
        m.wall_s,
        n / m.wall_s,
        m.cpu_s,
        m.peak_rss_bytes,
        m.max_processes,
        concurrency,
        argv,
        settings,
        load_before,
        os.getloadavg()[0],
    )


# promptfoo -------------------------------------------------------------------


def _promptfoo_env(work: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    root = ensure_promptfoo()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTFOO_", "OPENAI_"))}
    env.update(
        {
            "PATH": f"{root / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}",
            "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_SHARING": "1",
            "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
            "PROMPTFOO_DISABLE_DEBUG_LOG": "1",  # else every run writes a debug log of ~1.3 KB per case
            "PROMPTFOO_CACHE_ENABLED": "false",
            "NO_COLOR": "1",
        }
    )
    if extra:
        env.update(extra)
    return _ca_env(env)


def _run_promptfoo(
    workload: str,
    cases: Sequence[dict],
    provider: Any,
    *,
    concurrency: int,
    write_db: bool,
    extra_env: dict[str, str] | None,
    workdir: str | Path | None,
    keep: bool,
    timeout: float | None,
    settings: dict,
) -> PeerResult:
    root = ensure_promptfoo()
    with _Workdir(workdir, keep, f"peer-promptfoo-{workload}-") as work:
        with open(work / "tests.jsonl", "w") as f:
            for c in cases:
                f.write(
                    json.dumps(
                        {
                            "description": c["id"],
                            "vars": {"prompt": c["prompt"]},
                            "assert": [{"type": "contains", "value": c["expected"]}],
                        }
                    )
                    + "\n"
                )
        config = {
            "description": f"trunchbull bench: {workload}",
            "prompts": ["{{prompt}}"],
            "providers": [provider],
            "tests": "file://tests.jsonl",
            "sharing": False,
        }
        (work / "promptfooconfig.yaml").write_text(json.dumps(config, indent=2) + "\n")  # JSON is YAML
        argv = [
            *promptfoo_command(root),
            "eval",
            "-c",
            "promptfooconfig.yaml",
            "--no-cache",
            "--no-share",
            "--no-table",
            "--no-progress-bar",
            "-j",
            str(concurrency),
            "-o",
            "results.json",
        ]
        if not write_db:
            argv.append("--no-write")
        env = _promptfoo_env(work, extra_env)
        load = os.getloadavg()[0]
        m = _measure_checked("promptfoo", argv, env, work, timeout)
        with open(work / "results.json", "rb") as f:
            out = json.load(f)["results"]
        rows = out["results"]
        passed = sum(1 for r in rows if r.get("success"))
        if len(rows) != len(cases) or out["stats"]["successes"] != passed:
            raise PeerError(f"promptfoo wrote {len(rows)} results for {len(cases)} cases")
        settings = {"write_db": write_db, **settings}
        return measured_result(
            "promptfoo", workload, PROMPTFOO_VERSION, len(cases), passed, m, concurrency, argv, settings, load
        )


def run_promptfoo_echo(
    cases: Sequence[dict],
    *,
    concurrency: int = 16,
    write_db: bool = False,
    workdir: str | Path | None = None,
    keep: bool = False,
    timeout: float | None = None,
) -> PeerResult:
    """promptfoo's ``echo`` provider and one ``contains`` assertion per case."""
    return _run_promptfoo(
        "echo",
        cases,
        "echo",
        concurrency=concurrency,
        write_db=write_db,
        extra_env=None,
        workdir=workdir,
        keep=keep,
        timeout=timeout,
        settings={"provider": "echo"},
    )


def run_promptfoo_server(
    cases: Sequence[dict],
    base_url: str,
    model: str,
    *,
    concurrency: int = 32,
    write_db: bool = False,
    workdir: str | Path | None = None,
    keep: bool = False,
    timeout: float | None = None,
) -> PeerResult:
    """promptfoo's OpenAI chat provider against ``base_url`` (``…/v1``), one ``contains`` per case."""
    provider = {"id": f"openai:chat:{model}", "config": {"apiBaseUrl": base_url.rstrip("/")}}
    return _run_promptfoo(
        "server",
        cases,
        provider,
        concurrency=concurrency,
        write_db=write_db,
        extra_env={"OPENAI_API_KEY": DUMMY_KEY},
        workdir=workdir,
        keep=keep,
        timeout=timeout,
        settings={"provider": provider["id"], "base_url": base_url},
    )


# Inspect AI ------------------------------------------------------------------

_INSPECT_TASK = '''\
from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


def echo(input, tools, tool_choice, config):
    """mockllm's output: the last user message (usage as characters / 4, as Trunchbull's echo)."""
    text = input[-1].text
    tokens = len(text) // 4
    output = ModelOutput.from_content(model="mockllm", content=text)
    output.usage = ModelUsage(input_tokens=tokens, output_tokens=tokens, total_tokens=2 * tokens)
    return output


@task
def bench(echo_model: bool = False):
    return Task(
        dataset=json_dataset("cases.jsonl", FieldSpec(input="prompt", target="expected", id="id")),
        solver=generate(),
        scorer=includes(),
        model=get_model("mockllm/model", custom_outputs=echo) if echo_model else None,
    )
'''

_INSPECT_COUNT = '''\
import json, sys
from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries
logs = list_eval_logs(sys.argv[1])
assert len(logs) == 1, logs
header = read_eval_log(logs[0], header_only=True)
summaries = read_eval_log_sample_summaries(logs[0])
passed = sum(1 for s in summaries if s.scores and s.scores["includes"].value == "C")
print(json.dumps({"status": header.status, "error": str(header.error) if header.error else None,
                  "samples": len(summaries), "passed": passed}))
'''


def _run_inspect(
    workload: str,
    cases: Sequence[dict],
    model_args: list[str],
    *,
    concurrency: int,
    realtime: bool,
    extra_env: dict[str, str] | None,
    workdir: str | Path | None,
    keep: bool,
    timeout: float | None,
    settings: dict,
) -> PeerResult:
    root = ensure_inspect()
    with _Workdir(workdir, keep, f"peer-inspect-{workload}-") as work:
        with open(work / "cases.jsonl", "w") as f:
            for c in cases:
                f.write(json.dumps({"id": c["id"], "prompt": c["prompt"], "expected": c["expected"]}) + "\n")
        (work / "bench_task.py").write_text(_INSPECT_TASK)
        argv = [
            str(root / "bin" / "inspect"),
            "eval",
            "bench_task.py",
            *model_args,
            "--display",
            "none",
            "--log-level",
            "warning",
            "--max-connections",
            str(concurrency),
            "--log-dir",
            "logs",
        ]
        if not realtime:
            argv.append("--no-log-realtime")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INSPECT_", "OPENAI_", "BENCH_"))}
        env.update(
            {
                # Inspect's data and cache directories (sample buffer, traces) inside the work directory.
                "XDG_DATA_HOME": str(work / "xdg-data"),
                "XDG_CACHE_HOME": str(work / "xdg-cache"),
                "NO_COLOR": "1",
            }
        )
        env.update(extra_env or {})
        load = os.getloadavg()[0]
        m = _measure_checked("inspect", argv, env, work, timeout)
        counted = subprocess.run(
            [str(root / "bin" / "python"), "-c", _INSPECT_COUNT, str(work / "logs")],
            capture_output=True,
            text=True,
            env=env,
        )
        if counted.returncode != 0:
            raise PeerError(f"reading Inspect's log failed:\n{counted.stderr[-3000:]}")
        info = json.loads(counted.stdout)
        if info["status"] != "success" or info["samples"] != len(cases):
            raise PeerError(
                f"Inspect: status {info['status']}, {info['samples']} samples of {len(cases)}: {info['error']}"
            )
        settings = {"realtime": realtime, **settings}
        return measured_result(
            "inspect", workload, INSPECT_VERSION, len(cases), info["passed"], m, concurrency, argv, settings, load
        )


def run_inspect_echo(
    cases: Sequence[dict],
    *,
    concurrency: int = 16,
    realtime: bool = False,
    workdir: str | Path | None = None,
    keep: bool = False,
    timeout: float | None = None,
) -> PeerResult:
    """Inspect's ``mockllm/model`` echoing each prompt, scored with ``includes()``."""
    return _run_inspect(
        "echo",
        cases,
        ["-T", "echo_model=true"],
        concurrency=concurrency,
        realtime=realtime,
        extra_env=None,
        workdir=workdir,
        keep=keep,
        timeout=timeout,
        settings={"model": "mockllm/model (echo)"},
    )


def run_inspect_server(
    cases: Sequence[dict],
    base_url: str,
    model: str,
    *,
    concurrency: int = 32,
    realtime: bool = False,
    workdir: str | Path | None = None,
    keep: bool = False,
    timeout: float | None = None,
) -> PeerResult:
    """Inspect's OpenAI-compatible provider (chat completions, not streamed) against ``base_url``."""
    spec = f"openai-api/bench/{model}"
    return _run_inspect(
        "server",
        cases,
        ["--model", spec, "-M", "stream=false"],
        concurrency=concurrency,
        realtime=realtime,
        extra_env={"BENCH_BASE_URL": base_url.rstrip("/"), "BENCH_API_KEY": DUMMY_KEY},
        workdir=workdir,
        keep=keep,
        timeout=timeout,
        settings={"model": spec, "base_url": base_url},
    )


# ---------------------------------------------------------------------------
# CLI


def _table(results: Iterable[PeerResult], bound: float | None) -> str:
    rows = [
        ("peer", "workload", "N", "wall s", "samples/s", "of bound", "CPU s", "peak RSS MiB", "procs", "passed", "load")
    ]
    for r in results:
        frac = f"{r.samples_per_s / bound:.0%}" if bound and r.workload == "server" else ""
        rows.append(
            (
                f"{r.peer} {r.version}",
                r.workload,
                f"{r.cases:,}",
                f"{r.wall_s:.2f}",
                f"{r.samples_per_s:,.0f}",
                frac,
                f"{r.cpu_s:.1f}",
                f"{r.peak_rss_mib:,.0f}",
                str(r.max_processes),
                f"{r.passed:,}",
                f"{r.load_before:.1f}->{r.load_after:.1f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.rjust(w) if i >= 2 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement (median reported)")
    parser.add_argument("--concurrency", type=int, default=16, help="echo workload concurrency")
    parser.add_argument("--server-url", help="OpenAI-compatible base URL (…/v1) for the server workload")
    parser.add_argument("--model", default="bench-model", help="model name sent to the server")
    parser.add_argument("--server-concurrency", type=int, default=32)
    parser.add_argument("--server-delay", type=float, default=0.05, help="the server's fixed delay, for the bound")
    parser.add_argument("--peers", default="promptfoo,inspect")
    parser.add_argument("--workloads", default="echo,server")
    parser.add_argument(
        "--defaults",
        action="store_true",
        help="peers' default recording too: promptfoo's SQLite store, Inspect's realtime buffer",
    )
    parser.add_argument("--json", help="write every run's result to this JSON file")
    parser.add_argument("--keep", action="store_true", help="keep the work directories (printed)")
    args = parser.parse_args(argv)

    peers = args.peers.split(",")
    workloads = [w for w in args.workloads.split(",") if w != "server" or args.server_url]
    installs = install_peers(peers)
    for p, s in installs.items():
        print(f"install {p}: {'already installed' if s is None else f'{s:.1f} s'}")

    cases = make_cases(args.cases)
    runs: dict[tuple[str, str, bool], list[PeerResult]] = {}
    variants = [False, True] if args.defaults else [False]
    for _ in range(args.repeat):  # interleaved, so each peer sees the same spread of load
        for workload in workloads:
            for peer in peers:
                for default in variants:
                    kw: dict[str, Any] = {"keep": args.keep}
                    if peer == "promptfoo":
                        kw["write_db"] = default
                    else:
                        kw["realtime"] = default
                    if workload == "echo":
                        fn = run_promptfoo_echo if peer == "promptfoo" else run_inspect_echo
                        r = fn(cases, concurrency=args.concurrency, **kw)
                    else:
                        fn = run_promptfoo_server if peer == "promptfoo" else run_inspect_server
                        r = fn(cases, args.server_url, args.model, concurrency=args.server_concurrency, **kw)
                    print(
                        f"  {peer} {workload}{' (defaults)' if default else ''}: {r.wall_s:.2f} s, "
                        f"{r.samples_per_s:,.0f}/s, CPU {r.cpu_s:.1f} s, {r.peak_rss_mib:,.0f} MiB, "
                        f"load {r.load_before:.1f}",
                        file=sys.stderr,
                        flush=True,
                    )
                    runs.setdefault((peer, workload, default), []).append(r)
                    if args.json:  # after every run, so a long campaign cut short keeps what it measured
                        Path(args.json).write_text(
                            json.dumps([r.as_dict() for rs in runs.values() for r in rs], indent=2) + "\n"
                        )

    bound = args.server_concurrency / args.server_delay
    medians = []
    for (peer, workload, default), rs in runs.items():
        # the median run by wall time; of an even number, the faster middle one (the peer's better figure)
        mid = sorted(rs, key=lambda r: r.wall_s)[(len(rs) - 1) // 2]
        if default:
            mid = PeerResult(**{**asdict(mid), "workload": f"{workload} (defaults)"})
        medians.append(mid)
    print(
        f"\n{args.cases:,} cases; echo at concurrency {args.concurrency}, server at {args.server_concurrency} "
        f"(bound {bound:,.0f}/s); median of {args.repeat} by wall time"
    )
    print(_table(medians, bound))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
