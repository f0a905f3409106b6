// How long one model reply holds a run worker's event loop (the limit
// documented in docs/running.md, "Bounded replies"): the AI SDK's
// openai-compatible provider, through the workers' own transport
// (js/run/http.mjs), reads replies of 1 to 16 MiB (the reply limit) from a
// local server while a 1 ms timer measures the loop's delay. The server is a
// child process, so that its own work does not count. Per size: the longest
// loop delay seen over --rounds replies, the median, and the same for a
// gzip-compressed reply that expands to 1 GiB (read until the limit).
//   node bench/reply_stall.mjs TOOLCHAIN_DIR [--rounds 5]
import { fork } from "node:child_process";
import { createRequire } from "node:module";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import zlib from "node:zlib";
import http from "node:http";

const MIB = 1 << 20;
if (process.argv[2] === "--serve") {
  const bodies = new Map();
  const body = (size) => {
    if (!bodies.has(size)) {
      const content = "y".repeat(size);
      bodies.set(size, JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: "m",
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    }
    return bodies.get(size);
  };
  const member = zlib.gzipSync(Buffer.alloc(16 * MIB));
  const bomb = Buffer.concat(Array.from({ length: 64 }, () => member));
  http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const size = Number(new URL(req.url, "http://x").searchParams.get("size"));
      if (size === 0) {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": bomb.length });
        return res.end(bomb);
      }
      const text = body(size);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    });
  }).listen(0, "127.0.0.1", function () {
    process.send(this.address().port);
  });
} else {
  const toolchain = process.argv[2];
  const rounds = Number(process.argv[process.argv.indexOf("--rounds") + 1] || 5);
  const require = createRequire(`${toolchain}/package.json`);
  const ai = await import(pathToFileURL(require.resolve("ai")).href);
  const { createOpenAICompatible } = await import(pathToFileURL(require.resolve("@ai-sdk/openai-compatible")).href);
  const { httpFetch } = await import(new URL("../src/trunchbull/js/run/http.mjs", import.meta.url).href);
  const child = fork(fileURLToPath(import.meta.url), ["--serve"]);
  const port = await new Promise((resolve) => child.once("message", resolve));
  const results = [];
  for (const size of [1 * MIB, 4 * MIB, 16 * MIB - 4096, 0]) {
    const provider = createOpenAICompatible({
      name: "bench",
      baseURL: `http://127.0.0.1:${port}/v1`,
      fetch: (url, init) => httpFetch(`${url}?size=${size}`, init, undefined, 16 * MIB),
    });
    const model = provider("m");
    const maxima = [];
    for (let round = 0; round <= rounds; round++) {
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      let kind = "ok";
      try {
        await ai.generateText({ model, prompt: "hi", maxRetries: 0 });
      } catch (err) {
        kind = err.trunchbullKind ?? err.name;
      }
      delay.disable();
      if (round > 0) maxima.push(delay.max / 1e6); // the first round warms the code up
      if (round === rounds) results.push({ size: size || "gzip → 1 GiB", kind, maxima });
    }
  }
  child.kill();
  for (const { size, kind, maxima } of results) {
    maxima.sort((a, b) => a - b);
    const label = typeof size === "number" ? `${(size / MIB).toFixed(2)} MiB` : size;
    console.log(`${label.padEnd(14)} ${kind.padEnd(20)} longest loop delay: max ${maxima.at(-1).toFixed(1)} ms, median ${maxima[maxima.length >> 1].toFixed(1)} ms`);
  }
}
