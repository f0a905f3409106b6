// The model server of the server workload (bench/run.py): OpenAI chat
// completions on 127.0.0.1 that echo the last user message after DELAY
// seconds, with the same reply shape as tests/support/chat_server.py's
// default (which the tests use for everything scripted). A request that offers
// tools and holds no tool result yet is answered with a call of its first tool. It is a lean
// node:http server because it shares the machine's two cores with the client
// under test: the bound (concurrency / delay) assumes a server that adds
// nothing to its delay, and tests/support/chat_server.py (aiohttp) spends
// ~0.5 ms of CPU per request here against ~0.3 ms for this one.
//   node bench/chat_server.mjs DELAY   prints its base URL, serves until killed
//
// With `--misbehave FRACTION --seed N` (bench/resilience.py), that fraction
// of the conversations get a reply that misbehaves instead, in one of the
// ways of MISBEHAVIOURS, chosen by a hash of the seed and the conversation's
// last user message: the same sample always gets the same reply, whatever
// order the requests come in, so two runs must give the same outcomes.
//
// With `--judge-model NAME` (bench/judge_throughput.py), a request for model
// NAME is a judge's: it is answered with a short explanation and an Inspect
// AI grade, C or I by a hash of the prompt (3 : 2), after the same delay.
import http from "node:http";
import zlib from "node:zlib";

const delayMs = Number(process.argv[2] ?? 0.05) * 1000;
const option = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const misbehave = option("--misbehave", 0);
const seed = option("--seed", 1);
const judgeAt = process.argv.indexOf("--judge-model");
const judgeModel = judgeAt > 0 ? process.argv[judgeAt + 1] : null;
let ids = 0;

// FNV-1a, 32 bits
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const BOMB = misbehave ? Buffer.concat(Array(64).fill(zlib.gzipSync(Buffer.alloc(16 << 20)))) : null; // 1 GiB, inflated
const HUGE = misbehave ? Buffer.from(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: "z".repeat(20 << 20) } }] })) : null;

function completion(model, content) {
  const tokens = Math.max(1, Math.floor(content.length / 4));
  return {
    id: `chatcmpl-${++ids}`,
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: tokens, completion_tokens: tokens, total_tokens: 2 * tokens },
  };
}

function raw(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

// name → how to answer (the outcome bench/resilience.py expects is the record's)
const MISBEHAVIOURS = {
  "invalid-json": (res) => raw(res, 200, '{"choices": [{"message": '),
  html: (res) => raw(res, 502, "<html><body><h1>502 Bad Gateway</h1></body></html>", { "content-type": "text/html" }),
  "empty-choices": (res, model, content) => raw(res, 200, JSON.stringify({ ...completion(model, content), choices: [] })),
  "http-401": (res) => raw(res, 401, JSON.stringify({ error: { message: "invalid key", type: "auth" } })),
  "http-503": (res) => raw(res, 503, JSON.stringify({ error: { message: "overloaded", type: "server" } })),
  reset: (res) => {
    res.socket.resetAndDestroy();
  },
  truncated: (res, model, content) => {
    const body = JSON.stringify(completion(model, content));
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.write(body.slice(0, 20));
    res.socket.destroy();
  },
  // JSON.stringify writes the lone surrogate as the escape \ud800, as servers that cut a pair do
  surrogate: (res, model, content) => raw(res, 200, JSON.stringify(completion(model, `${content}\ud800`))),
  "gzip-bomb": (res) => raw(res, 200, BOMB, { "content-encoding": "gzip", "content-length": BOMB.length }),
  "huge-body": (res) => raw(res, 200, HUGE),
};
const KINDS = Object.keys(MISBEHAVIOURS);

// The misbehaviour a conversation gets (null: a good reply).
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : null; // that kind for every misbehaving reply (profiling)
export function misbehaviourOf(content) {
  if (!misbehave) return null;
  const h = hash(`${seed}:${content}`);
  return (h % 10_000) / 10_000 < misbehave ? (only ?? KINDS[(h >>> 16) % KINDS.length]) : null;
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return text(messages[i].content);
  return "";
}

function send(res, status, payload) {
  const body = JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
      return send(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: "not_found" } });
    }
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return send(res, 400, { error: { message: "the body is not JSON", type: "invalid_request_error" } });
    }
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const content = lastUserText(messages);
    const tokens = Math.max(1, Math.floor(content.length / 4));
    // Offered tools and no tool result yet: call the first tool once (the
    // tool-calling workload of bench/isolation.py); then echo as always.
    const tool = Array.isArray(body.tools) && !messages.some((m) => m?.role === "tool") ? body.tools[0]?.function?.name : null;
    const verdict = judgeModel !== null && body.model === judgeModel ? `The submission was compared with the criterion.\n\nGRADE: ${"CCCII"[hash(content) % 5]}` : null;
    const message = tool
      ? { role: "assistant", content: null, tool_calls: [{ id: `call_${++ids}`, type: "function", function: { name: tool, arguments: "{}" } }] }
      : { role: "assistant", content: verdict ?? content };
    const odd = misbehaviourOf(content);
    if (odd) {
      setTimeout(() => MISBEHAVIOURS[odd](res, body.model, content), delayMs);
      return;
    }
    setTimeout(
      () =>
        send(res, 200, {
          id: `chatcmpl-${++ids}`,
          object: "chat.completion",
          created: 0,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: tool ? "tool_calls" : "stop" }],
          usage: { prompt_tokens: tokens, completion_tokens: tokens, total_tokens: 2 * tokens },
        }),
      delayMs,
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}/v1`));
