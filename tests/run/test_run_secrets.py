"""The provider's key and benchmark code never share a realm: a tool module
that sets traps on Object.prototype (setters and getters for every key a
request is built from), replaces fetch/Headers/Request/JSON/TextEncoder and
tries to signal, read /proc of, or reach any process or host outside its own
(tests/run/fixtures/hostile) runs in the tool executor, which holds no key,
has no network and has a PID namespace of its own. The key reaches only the
provider's endpoint, in its Authorization header, byte-checked on the server;
no file the run wrote holds it."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from tests.run.conftest import read_jsonl
from tests.support.chat_server import Reply
from trunchbull.node.sandbox import isolation_prefix
from trunchbull.node.toolchain import cache_root

namespaces = pytest.mark.skipif(
    "-p" not in isolation_prefix(), reason="needs network and PID namespaces (root, unshare)"
)


def files_holding(secret: bytes, roots: list[Path], since: float) -> list[Path]:
    """Every regular file under `roots` changed since `since` whose bytes hold `secret`."""
    found = []
    for root in roots:
        for dirpath, _dirs, names in os.walk(root):
            for name in names:
                path = Path(dirpath) / name
                try:
                    if not path.is_file() or path.is_symlink() or path.stat().st_mtime < since:
                        continue
                    if secret in path.read_bytes():
                        found.append(path)
                except OSError:
                    pass
    return found


@pytest.fixture
def sleeper():
    """A process of this user outside the run, which no tool may signal."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


@namespaces
def test_a_hostile_tool_module_never_reaches_the_key(built, server, cli, cache_dir, tmp_path, sleeper):
    release = built("hostile")
    key = f"sk-secret-{uuid.uuid4().hex}"
    for case in ("[steal-one]", "[steal-two]"):
        server.script(
            case, [Reply(tool_calls=[("probe", {"url": server.url, "pid": sleeper.pid})]), Reply(content="done")]
        )
    started = time.time() - 1
    out = tmp_path / "run"
    run = cli(
        "run",
        release,
        "--model",
        "openai-compatible:test-model",
        "--base-url",
        server.url,
        "--api-key-env",
        "TB_HOSTILE_TEST_KEY",
        "-o",
        out,
        "-j",
        "2",
        env={"TB_HOSTILE_TEST_KEY": key},
    )
    assert run.code == 0, run.stderr  # not interrupted: no signal reached the CLI
    assert "Traceback" not in run.stderr

    # The server side: the key came only in the Authorization header of the model's own calls.
    requests = server.received()
    assert len(requests) == 4
    assert {r.path for r in requests} == {"/v1/chat/completions"}  # nothing was sent anywhere else
    for request in requests:
        assert request.headers["authorization"] == f"Bearer {key}"
        others = {name: value for name, value in request.headers.items() if name != "authorization"}
        assert key not in json.dumps(others) and key not in request.path
        assert key not in json.dumps(request.body, ensure_ascii=False)

    # What the tool saw and could do, as it reported it to the model.
    records = read_jsonl(out / "responses.jsonl")
    assert len(records) == 2
    for record in records:
        assert record["error"] is None, record["error"]
        (result,) = record["toolResults"]
        report = result["output"]
        assert key not in json.dumps(report)
        assert "TB_HOSTILE_TEST_KEY" not in report["env"] and key not in report["envValues"]
        assert report["ppid"] == 0  # its parent is outside its PID namespace
        for probe in ("selfEnviron", "parentEnviron", "parentCmdline", "outsideEnviron", "signalOutside", "fetchOut"):
            assert report[probe].startswith("failed"), (probe, report[probe])
        assert report["signalOutside"] == "failed: ESRCH"
        assert any(entry.startswith("set ") or entry.startswith("get ") for entry in report["seen"])  # traps did run
    assert sleeper.poll() is None  # still running

    # No file the run (or anything else since it started) wrote holds the key.
    roots = [out, cache_dir, cache_root(), Path(tempfile.gettempdir())]
    assert files_holding(key.encode(), roots, started) == []


def test_without_namespaces_the_limitation_is_said_once(built, cli, tmp_path):
    run = cli("run", built("agent"), "--model", "echo", "-o", tmp_path / "run", env={"TRUNCHBULL_NO_UNSHARE": "1"})
    assert run.code in (0, 1), run.stderr
    assert run.stderr.count("runs without a network or PID namespace of its own") == 1, run.stderr
    assert "docs/running.md" in run.stderr
