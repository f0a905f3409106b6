"""The model caller's side of the tool executor's pipe (js/run/tool_client.mjs)
against a hostile executor: a stand-in process that writes whatever bytes it
likes where the real executor's answers go. A line far past the limits is
not buffered (the model caller's memory stays low) and fails only the call
it names; a result the executor says it cut is kept as it is only when it is
within the limit, and cut again otherwise. The real executor's own cut (a
50 MB result sent as --max-tool-result-bytes) is run end to end in
test_run_resilience.py."""

from __future__ import annotations

import json
import os
import subprocess

from trunchbull.node.toolchain import JS_DIR, toolchain

MAX_BYTES = 1024

# Answers every request as the real executor would, except calls of `flood`
# (an answer of 300 MiB for its id), `noise` (a line of 300 MiB no request can
# be told from, then the right answer), `liar` (a 50 KB output that says it was cut)
# and `honest` (an output within the limit that was cut).
HOSTILE = r"""
import { writeSync } from "node:fs";
const out = Number(process.argv[1]);
const send = (text) => { const b = Buffer.from(text); let o = 0; while (o < b.length) o += writeSync(out, b, o); };
let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const lines = (pending + chunk).split("\n");
  pending = lines.pop();
  for (const line of lines) {
    const m = JSON.parse(line);
    if (!m.t) send(JSON.stringify({ t: "ready" }) + "\n");
    else if (m.t === "open") send(JSON.stringify({ t: "opened", k: m.k, tools: Object.fromEntries(m.tools.map((n) => [n, { validates: false }])) }) + "\n");
    else if (m.t === "call") {
      const big = "x".repeat(1 << 20);
      if (m.name === "flood" || m.name === "noise") {
        send(m.name === "flood" ? `{"t":"result","id":${m.id},"ok":true,"output":"` : `{"t":"w","text":"`);
        for (let i = 0; i < 300; i++) send(big);
        send('"}\n');
      }
      const output = m.name === "liar" ? "y".repeat(50_000) : m.name === "honest" ? "z".repeat(900) + " [cut]" : "fine";
      if (m.name !== "flood") send(JSON.stringify({ t: "result", id: m.id, ok: true, output, cut: true }) + "\n");
    }
  }
});
"""

DRIVER = r"""
import { readFileSync } from "node:fs";
import { ToolClient } from "%s";
const [toFd, fromFd] = process.argv.slice(1).map(Number);
const names = ["flood", "noise", "liar", "honest"];
const specs = Object.fromEntries(names.map((n) => [n, { description: n, inputSchema: { type: "object" } }]));
const client = new ToolClient(toFd, fromFd, {
  specs, toolTimeoutMs: 120_000, maxToolResultBytes: %d, maxResponseBytes: %d,
  onStart() {}, onEnd() {}, onWarning() {}, onGone() {},
});
await client.start({ tools: {} });
const ai = { tool: (t) => t, jsonSchema: (s) => s }; // the AI SDK's two helpers, as data
const results = {};
for (const name of names) {
  const sample = { k: 1, controller: new AbortController(), repairs: new Set() };
  const tools = await client.toolsFor([name], sample, ai);
  try {
    const output = await tools[name].execute({}, { toolCallId: name, messages: [] });
    results[name] = { output: output.length > 200 ? `${output.length} chars` : output, repairs: [...sample.repairs] };
  } catch (err) {
    results[name] = { error: String(err) };
  }
}
// The peak RSS of this process's own memory since it started (VmHWM; the
// rusage of a child also counts its parent's pages at the fork).
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "latin1"));
console.log(JSON.stringify({ results, peakKiB: Number(hwm[1]) }));
process.exit(0);
"""


def test_a_hostile_executor_cannot_make_the_model_caller_buffer_a_huge_line(tmp_path):
    tc = toolchain()
    to_read, to_write = os.pipe()
    from_read, from_write = os.pipe()
    hostile = subprocess.Popen(
        [str(tc.node), "--input-type=module", "-e", HOSTILE, str(from_write)],
        stdin=to_read,
        pass_fds=(from_write,),
    )
    driver_script = DRIVER % ((JS_DIR / "run/tool_client.mjs").as_uri(), MAX_BYTES, MAX_BYTES)
    driver = subprocess.Popen(
        [str(tc.node), "--input-type=module", "-e", driver_script, str(to_write), str(from_read)],
        stdout=subprocess.PIPE,
        pass_fds=(to_write, from_read),
    )
    for fd in (to_read, to_write, from_read, from_write):
        os.close(fd)
    assert driver.stdout is not None
    out = driver.stdout.read()
    driver.wait()
    hostile.kill()
    hostile.wait()
    assert driver.returncode == 0
    reported = json.loads(out)
    results = reported["results"]
    # 300 MiB for the call's id: refused unread, the call fails with a sentence saying so
    assert "was not read" in results["flood"]["error"], results
    # 300 MiB naming no request: skipped; the answer after it arrives
    assert results["noise"] == {"output": "fine", "repairs": ["tool-result-truncated"]}
    # "cut" but past the limit: cut here, with the marker
    liar = results["liar"]
    assert liar["repairs"] == ["tool-result-truncated"] and liar["output"].endswith("chars")
    assert int(liar["output"].split()[0]) < MAX_BYTES + 256
    # cut by the executor and within the limit: kept as sent
    assert results["honest"] == {"output": f"{len('z' * 900 + ' [cut]')} chars", "repairs": ["tool-result-truncated"]}
    # two lines of 300 MiB went by; the model caller never held one (which would take
    # twice that at least: its bytes and its text)
    assert reported["peakKiB"] < 300 * 1024, reported["peakKiB"]
