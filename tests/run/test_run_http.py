"""The run workers' transport (js/run/http.mjs): a fetch over node:http for
the AI SDK providers, run by the pinned Node against a real HTTP server on
127.0.0.1. (Every run test goes through it too; these cover what the model
servers of those tests never do: compressed bodies, redirects, aborts,
refused connections.)"""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from trunchbull.node.toolchain import JS_DIR, toolchain


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_rest(self, body: bytes) -> None:
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer(self) -> None:
        body = self._body()
        seen = {
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body.decode("utf-8"),
        }
        payload = json.dumps(seen).encode()
        if self.path == "/gzip":
            self._send(200, gzip.compress(payload), {"content-type": "application/json", "content-encoding": "gzip"})
        elif self.path == "/deflate":
            self._send(200, zlib.compress(payload), {"content-type": "application/json", "content-encoding": "deflate"})
        elif self.path.startswith("/redirect/"):
            self._send(int(self.path.split("/")[2]), b"", {"location": "/echo"})
        elif self.path == "/slow":
            time.sleep(3)
            self._send(200, payload, {"content-type": "application/json"})
        elif self.path.startswith("/fixed/"):  # the same reply whoever asks: ours and the built-in fetch's compared
            self.send_response(int(self.path.split("/")[2]))
            for value in ("one", "two"):
                self.send_header("x-multi", value)
            self._send_rest('{"answer": [1, "two", null], "é": "✓"}'.encode())
        elif self.path == "/no-content":
            self.send_response(204)
            self.end_headers()
        else:
            self._send(200, payload, {"content-type": "application/json", "x-reply": "yes"})

    do_GET = do_POST = _answer


@pytest.fixture(scope="module")
def base_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SCRIPT = r"""
import { httpFetch } from "%(module)s";
const base = process.argv[2];
async function outcome(promise) {
  try {
    const response = await promise;
    const text = await response.text();
    return { status: response.status, headers: Object.fromEntries(response.headers), text };
  } catch (err) {
    return { error: err?.name, message: err?.message, cause: err?.cause?.code ?? err?.cause?.message ?? null };
  }
}
const out = {};
const post = (body, headers = {}) => ({ method: "POST", headers: { "content-type": "application/json", ...headers }, body });
out.post = await outcome(httpFetch(`${base}/echo`, post("{\"prompt\":\"héllo ✓\"}", { authorization: "Bearer k", "x-unset": undefined, "Content-Length": "3" })));
out.bytes = await outcome(httpFetch(new URL(`${base}/echo`), { method: "POST", body: new TextEncoder().encode("abc") }));
out.gzip = await outcome(httpFetch(`${base}/gzip`, post("{}")));
out.deflate = await outcome(httpFetch(`${base}/deflate`, post("{}")));
out.redirect307 = await outcome(httpFetch(`${base}/redirect/307`, post("{\"kept\":true}")));
out.redirect303 = await outcome(httpFetch(`${base}/redirect/303`, post("{\"dropped\":true}")));
out.noContent = await outcome(httpFetch(`${base}/no-content`, post("{}")));
out.refused = await outcome(httpFetch(`http://127.0.0.1:${process.argv[3]}/echo`, post("{}")));
const controller = new AbortController();
const reason = new Error("the sample timed out");
setTimeout(() => controller.abort(reason), 100);
const started = performance.now();
out.aborted = await outcome(httpFetch(`${base}/slow`, { ...post("{}"), signal: controller.signal }));
out.abortedAfterMs = performance.now() - started;
// Each way the providers (and run_fetch.mjs) read a response, on our reply and
// on the built-in fetch's Response to the same request.
async function observed(response, how) {
  const seen = {
    status: response.status, ok: response.ok, statusText: response.statusText, url: response.url,
    redirected: response.redirected, contentType: response.headers.get("content-type"),
    headers: [...response.headers].filter(([name]) => name !== "date" && name !== "content-length"),
  };
  if (how === "reader") {
    const reader = response.body.getReader();
    const chunks = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
    }
    await reader.cancel();
    reader.releaseLock();
    seen.body = Buffer.concat(chunks).toString("utf8");
  } else if (how === "json") seen.body = await response.json();
  else if (how === "bytes") seen.body = Buffer.from(await response.arrayBuffer()).toString("utf8");
  else if (how === "clone") seen.body = [await response.clone().text(), await response.text()];
  else if (how === "cancel") seen.body = await response.body.cancel();
  seen.bodyUsed = response.bodyUsed;
  try {
    await response.text();
    seen.again = "read";
  } catch (err) {
    seen.again = err.name;
  }
  return seen;
}
out.likeFetch = [];
for (const [how, status] of [["reader", 200], ["json", 201], ["bytes", 200], ["clone", 404], ["cancel", 500]]) {
  const request = () => post("{}");
  out.likeFetch.push([how, await observed(await httpFetch(`${base}/fixed/${status}`, request()), how),
    await observed(await fetch(`${base}/fixed/${status}`, request()), how)]);
}
// not ours to send (a Blob body): the built-in fetch takes it
out.blob = await outcome(httpFetch(`${base}/echo`, { method: "POST", body: new Blob(["from a blob"]) }));
console.log(JSON.stringify(out));
"""


def test_http_fetch(base_url, tmp_path):
    script = tmp_path / "probe.mjs"
    script.write_text(SCRIPT % {"module": (JS_DIR / "run/http.mjs").as_uri()})
    proc = subprocess.run(
        [str(toolchain().node), str(script), base_url, str(closed_port())], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)

    post = out["post"]
    assert post["status"] == 200 and post["headers"]["x-reply"] == "yes"
    seen = json.loads(post["text"])
    assert seen["method"] == "POST" and seen["body"] == '{"prompt":"héllo ✓"}'
    assert seen["headers"]["content-length"] == str(len('{"prompt":"héllo ✓"}'.encode()))  # bytes, not characters
    assert seen["headers"]["authorization"] == "Bearer k" and "x-unset" not in seen["headers"]
    assert json.loads(out["bytes"]["text"])["body"] == "abc"

    for encoded in ("gzip", "deflate"):
        assert out[encoded]["status"] == 200
        assert json.loads(out[encoded]["text"])["path"] == f"/{encoded}"  # decoded
        assert "content-encoding" not in out[encoded]["headers"]

    kept = json.loads(out["redirect307"]["text"])
    assert (kept["path"], kept["method"], kept["body"]) == ("/echo", "POST", '{"kept":true}')
    dropped = json.loads(out["redirect303"]["text"])
    assert (dropped["path"], dropped["method"], dropped["body"]) == ("/echo", "GET", "")

    assert (out["noContent"]["status"], out["noContent"]["text"]) == (204, "")
    assert out["refused"] == {"error": "TypeError", "message": "fetch failed", "cause": "ECONNREFUSED"}
    assert out["aborted"]["error"] == "Error" and out["aborted"]["message"] == "the sample timed out"
    assert out["abortedAfterMs"] < 2500  # the request was dropped, not waited for (the server takes 3 s)
    assert json.loads(out["blob"]["text"])["body"] == "from a blob"
    for how, ours, builtin in out["likeFetch"]:
        assert ours == builtin, how
        assert ours["headers"] == [
            ["content-type", "application/json"],
            ["server", ours["headers"][1][1]],
            ["x-multi", "one, two"],
        ]
    assert [o["body"] for _, o, _ in out["likeFetch"][:4]] == [
        '{"answer": [1, "two", null], "é": "✓"}',
        {"answer": [1, "two", None], "é": "✓"},
        '{"answer": [1, "two", null], "é": "✓"}',
        ['{"answer": [1, "two", null], "é": "✓"}'] * 2,
    ]
