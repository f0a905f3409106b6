// A run's tool executor: the one process of a run that imports the release's
// tool modules and runs their `execute`. Started by trunchbull/run/workers.py
// beside each model caller (worker.mjs), in the sandbox of all user code
// (node/sandbox.py: Node's permission model, reads only in the release, its
// dependencies and the toolchain; no network and a PID namespace of its own
// where the platform allows it), with an environment that holds no key. It
// talks to its model caller only: requests on stdin, replies on the pipe
// argv[2] (written synchronously, so that a call's start is out before a
// synchronous loop in it can begin), one JSON line each.
//
// stdin: first { sdk, aiFallback (the toolchain's `ai`), tools: { name: { module } }, maxToolResultBytes,
//   maxLineBytes }, then
//   { t: "open", k, tools: [names] }             → { t: "opened", k, tools: { name: { problem } | { validates } } }
//   { t: "validate", id, k, name, input }        → { t: "valid", id, ok, value | error: { message } }
//   { t: "call", id, k, name, input, options }   → { t: "result", id, ok, output, cut? | error: { name, message } | { text } }
//   { t: "close", k }                            (sample k ended)
//   { t: "ping", id }                            → { t: "pong", id } (the event loop turns)
// and unasked: { t: "ready" } once every module is imported (or { t: "fatal", message }), { t: "s", k, n } and
// { t: "e", k, n } when call (or module instance) n of sample k starts and ends,
// { t: "w", text }: a warning for the run (a tool module left timers running).
// A result above maxToolResultBytes is cut here, before it is serialized, as
// the model caller would cut it (limits.mjs; `cut: true`), and no reply is
// longer than maxLineBytes (a longer one fails its request instead): the
// model caller reads no line past that.
// The end of stdin (the model caller is gone) ends the executor.
import { writeSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { LineReader } from "./lines.mjs";
import { cutToolResult } from "./limits.mjs";
import { ToolHost, thrownData } from "./tools.mjs";
import { blockOnFullPipes } from "../shared/blocking_output.mjs";

const OUT_FD = Number(process.argv[2]);
const stringify = JSON.stringify; // captured before any tool module is imported
const parse = JSON.parse;
const BufferFrom = Buffer.from;
const write = writeSync;

process.on("SIGINT", () => {}); // Ctrl-C reaches the group: the parent stops the run in order
process.on("SIGTERM", () => {});
blockOnFullPipes(process.stdout, process.stderr); // (the log it shares with its model caller)
for (const level of ["log", "info", "debug", "table", "dir"]) console[level] = console.error;
// A stray rejection or exception of a tool's leftover work must not end the executor.
process.on("unhandledRejection", (err) => process.stderr.write(`trunchbull tool executor: unhandled rejection: ${thrownText(err)}\n`));
process.on("uncaughtException", (err) => process.stderr.write(`trunchbull tool executor: uncaught exception: ${thrownText(err)}\n`));

function thrownText(err) {
  const data = thrownData(err);
  return data.text ?? `${data.name}: ${data.message}`;
}

let maxToolResultBytes = Infinity;
let maxLineBytes = Infinity;

function reply(message) {
  let text;
  try {
    text = stringify(message);
  } catch (err) {
    // a tool's result JSON cannot hold (a BigInt, a cycle): the call fails, the executor goes on
    text = stringify({ t: message.t, id: message.id, ok: false, error: { text: `the tool's result cannot be sent: ${thrownText(err)}` } });
  }
  let buf = BufferFrom(text + "\n");
  if (buf.length > maxLineBytes) {
    const what = message.t === "valid" ? "validated input" : "answer";
    const error = { text: `the tool's ${what} is ${buf.length.toLocaleString("en")} bytes as JSON, past the ${maxLineBytes.toLocaleString("en")} a reply may hold` };
    buf = BufferFrom(stringify({ t: message.t, id: message.id, ok: false, error: message.t === "valid" ? { message: error.text } : error }) + "\n");
  }
  let offset = 0;
  while (offset < buf.length) offset += write(OUT_FD, buf, offset);
}

let host = null;
async function handle(request) {
  try {
    await answer(request);
  } catch (err) {
    // a module's exports threw when read (a getter): the request fails, not the executor
    const error = { text: thrownText(err) };
    if (request.t === "open") reply({ t: "opened", k: request.k, tools: Object.fromEntries(request.tools.map((name) => [name, { problem: `tool ${stringify(name)}: ${error.text}` }])) });
    else if (request.t === "validate") reply({ t: "valid", id: request.id, ok: false, error: { message: error.text } });
    else if (request.t === "call") reply({ t: "result", id: request.id, ok: false, error });
  }
}

async function answer(request) {
  switch (request.t) {
    case "open":
      reply({ t: "opened", k: request.k, tools: await host.open(request.k, request.tools) });
      break;
    case "validate":
      reply({ t: "valid", id: request.id, ...(await host.validate(request.k, request.name, request.input)) });
      break;
    case "call": {
      const answer = await host.execute(request.k, request.name, request.input, request.options);
      if (answer.ok) {
        const { output, cut } = cutToolResult(answer.output, maxToolResultBytes);
        answer.output = output;
        if (cut) answer.cut = true;
      }
      reply({ t: "result", id: request.id, ...answer });
      break;
    }
    case "close":
      host.close(request.k);
      break;
    case "ping":
      reply({ t: "pong", id: request.id });
      break;
  }
}

async function start(config) {
  if (Number.isSafeInteger(config.maxToolResultBytes)) maxToolResultBytes = config.maxToolResultBytes;
  if (Number.isSafeInteger(config.maxLineBytes)) maxLineBytes = config.maxLineBytes;
  let ai;
  try {
    ai = await import(pathToFileURL(config.sdk).href);
  } catch (err) {
    reply({ t: "fatal", message: `the tool executor cannot load the AI SDK: ${thrownText(err)}` });
    process.exit(1);
  }
  host = new ToolHost(config.tools, {
    ai, aiFallback: config.aiFallback,
    onStart: (k, n) => reply({ t: "s", k, n }), onEnd: (k, n) => reply({ t: "e", k, n }),
    onWarning: (text) => reply({ t: "w", text }),
  });
  await host.preload();
  reply({ t: "ready" });
}

let started = null;
const requests = new LineReader(Infinity, (line) => {
  const request = parse(line); // from the model caller: trusted JSON
  if (!started) {
    started = start(request).catch((err) => {
      reply({ t: "fatal", message: `the tool executor cannot start: ${thrownText(err)}` });
      process.stderr.write(`${err?.stack}\n`);
      process.exit(1);
    });
  }
  else started.then(() => handle(request));
});
process.stdin.on("data", (chunk) => requests.push(chunk));
process.stdin.on("end", () => process.exit(0));
