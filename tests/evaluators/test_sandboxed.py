"""Custom evaluators run in the same sandbox as all other user code
(node/sandbox.py): no network, no signal to any process outside, and every
call sees a fresh instance of its module."""

from __future__ import annotations

import http.server
import os
import threading

import pytest

from trunchbull.node.sandbox import isolation_prefix

from tests.evaluators.conftest import cli, read_jsonl, write_jsonl

pytestmark = pytest.mark.skipif(
    "-p" not in isolation_prefix(), reason="needs network and PID namespaces (root, unshare)"
)


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
        Recorder.seen.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def graded(built, tmp_path_factory):
    """Every probe graded once, with a server listening on the host's loopback."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/from-an-evaluator"
    tmp = tmp_path_factory.mktemp("sandboxed")
    rows = [
        {"caseId": "fetch", "output": url},
        {"caseId": "fetch-uncaught", "output": url},
        {"caseId": "fetch-host", "output": "http://registry.example.invalid/"},
        {"caseId": "signal", "output": str(os.getpid())},
        *({"caseId": f"count-{i}", "output": "-"} for i in range(6)),
    ]
    out = tmp / "results.jsonl"
    try:
        run = cli("grade", built("sandboxed"), write_jsonl(tmp / "responses.jsonl", rows), "-o", out)
    finally:
        server.shutdown()
    assert run.code in (0, 1), run.stderr
    assert "Traceback" not in run.stderr
    return {r["caseId"]: r for r in read_jsonl(out)}


def test_an_evaluators_fetch_fails_and_reaches_no_server(graded):
    fetch = graded["fetch"]
    assert fetch["outcome"] == "fail", fetch
    assert fetch["message"].startswith("TypeError: fetch failed"), fetch["message"]
    assert Recorder.seen == []  # nothing reached the server on the host's loopback


@pytest.mark.parametrize("case", ["fetch-uncaught", "fetch-host"])
def test_a_failed_fetch_says_the_sandbox_has_no_network(graded, case):
    """Not a bare "TypeError: fetch failed": its reason, and what the reason means."""
    result = graded[case]
    assert result["outcome"] == "error", result
    message = result["message"]
    assert message.startswith("the evaluator threw TypeError: fetch failed ("), message
    assert message.endswith(
        "): custom evaluators run in a sandbox without network access (fetch and every other connection fail)"
    ), message
    assert Recorder.seen == []


def test_an_evaluator_cannot_signal_a_process_outside(graded):
    signal = graded["signal"]
    assert signal["outcome"] == "fail", signal
    assert "ESRCH" in signal["message"], signal["message"]


def test_every_call_sees_a_fresh_module_instance(graded):
    # six calls of one module on a pool of at most one process per core, each process evaluating
    # its calls in turn: the module-level counter still sees only its own call in every one
    counts = [graded[f"count-{i}"] for i in range(6)]
    assert [c["details"] for c in counts] == [{"calls": 1}] * 6
    assert all(c["outcome"] == "pass" for c in counts)
