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
import http from "node:http";

const delayMs = Number(process.argv[2] ?? 0.05) * 1000;
let ids = 0;

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
    const message = tool
      ? { role: "assistant", content: null, tool_calls: [{ id: `call_${++ids}`, type: "function", function: { name: tool, arguments: "{}" } }] }
      : { role: "assistant", content };
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
