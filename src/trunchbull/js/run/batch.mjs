// The batch caller of a run in batch mode (SPEC §8.8): starts, polls, reads,
// lists and cancels the provider's batches through the AI SDK's batch
// functions. Like the model caller (worker.mjs) it holds the provider's key
// and imports no benchmark code at all: a case's tools are offered by their
// JSON Schemas only (they run in the model callers' tool executors, when the
// replies are read). Started by trunchbull/run/batch/caller.py under Node's
// permission model (reads only in the scripts and the toolchain; network
// allowed), one per run; the protocol is on file descriptor argv[2], stdout
// and stderr go to a log file.
//
// stdin, one JSON line each: first the configuration
//   { sdk, model: { provider, make, model, baseUrl, apiKeyEnv }, tools: { name: { description, inputSchema } },
//     settings, retries, maxReplyBytes, maxItemBytes, and for the steps taken here: prices, maxSteps,
//     timeoutMs, maxResponseBytes, maxRecordBytes }
// then one command at a time, each answered before the next is read:
//   { op: "start", n } and n request lines { id, system, prompt | messages, tools: [entries] }
//                 → started <TAB> { ref, status }  |  refused <TAB> { message, definite }
//   { op: "status", ref } → status <TAB> { status, rawStatus, requestCounts, … }
//   { op: "results", ref, n } and n request lines (the model callers' request lines with `id`: the
//                 requests whose replies are taken here) → per reply read: r <TAB> k <TAB> kind|- <TAB>
//                 record, or b <TAB> k <TAB> step (taken here), or i <TAB> item (the provider's
//                 item: not succeeded, or for the model callers) … then end <TAB> { count }
//   { op: "steps", n } and n such lines, each with its result or error → r or b each, then end
//   { op: "cancel", ref } → cancelled <TAB> {}
//   { op: "list", limit, cursor } → listed <TAB> { batches, nextCursor }
// and failed <TAB> { message, count? } for any of them that could not be done.
//   ready <TAB> {}            the SDK and provider are made
//   w <TAB> message JSON      a warning from the SDK (e.g. a setting the provider ignores), once
//   fatal <TAB> { message }   the provider cannot be made
//
// `start` is never retried when its reply is lost (a 5xx, a broken
// connection): the batch may exist, and only a listing can tell (`definite`
// false). Everything else is retried as a live call is (fetch.mjs).
import { writeSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { retryingFetch, serverDelayMs, backoffMs } from "./fetch.mjs";
import { LineReader } from "./lines.mjs";
import { createProvider } from "./models.mjs";
import { runBatchStep } from "./batch_step.mjs";
import { errorText } from "../shared/intrinsics.mjs";

const PROTOCOL_FD = Number(process.argv[2]);
const stringify = JSON.stringify;
const parse = JSON.parse;
const builtinFetch = globalThis.fetch;

process.on("SIGINT", () => {}); // the parent stops the run in order
process.on("SIGTERM", () => {});
for (const level of ["log", "info", "debug", "table", "dir"]) console[level] = console.error;

// Result lines go out together, when FLUSH_BYTES are held or the event loop turns (the results'
// stream waits for the network): 25,000 small writes would cost the reader as many wake-ups.
// Every other message goes at once, after them.
const FLUSH_BYTES = 256 * 1024;
let held = "";
let flushing = false;

function flush() {
  flushing = false;
  if (!held) return;
  const buf = Buffer.from(held);
  held = "";
  let offset = 0;
  while (offset < buf.length) offset += writeSync(PROTOCOL_FD, buf, offset);
}

function send(text, soon = false) {
  held += text + "\n";
  if (!soon || held.length >= FLUSH_BYTES) flush();
  else if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

let secret = null;
function scrub(text) {
  let out = String(text);
  if (secret) out = out.split(secret).join("[redacted]");
  return out.replace(/(bearer\s+)[^\s"',]+/gi, "$1[redacted]");
}

const warned = new Set();
globalThis.AI_SDK_LOG_WARNINGS = ({ warnings }) => {
  for (const warning of warnings) {
    const text = warning.type === "other" ? warning.message : (warning.details ?? `${warning.feature} is not supported by the model`);
    if (!warned.has(text)) {
      warned.add(text);
      send(`w\t${stringify(scrub(text))}`);
    }
  }
};

// ------------------------------------------------------------------ transport

// A results download is streamed (the providers read it line by line, each at most maxItemBytes);
// any other reply is bounded as a live reply is.
const DOWNLOAD = /\/files\/[^/]+\/content$|\/messages\/batches\/[^/]+\/results$|:download$/;
// Creating a batch: answered once, or the batch may exist twice.
const CREATE = /\/batches$|:batchGenerateContent$/;

function bounded(response, limit, url) {
  const declared = Number(response.headers.get("content-length"));
  const tooLarge = () => new Error(`the reply of ${new URL(url).origin} was larger than ${limit.toLocaleString("en")} bytes; it was not read further`);
  if (declared > limit) {
    response.body?.cancel().catch(() => {});
    throw Object.assign(tooLarge(), { trunchbullKind: "response-too-large" });
  }
  if (!response.body) return response;
  let seen = 0;
  const counted = response.body.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function transport(limit) {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input.url ?? String(input);
    const response = await builtinFetch(input, init);
    const path = new URL(url).pathname;
    return DOWNLOAD.test(path) ? response : bounded(response, limit, url);
  };
}

// The fetch of the batch API: a create is retried only when the provider refused it (429: no
// batch was made); everything else as live calls are (fetch.mjs).
function batchFetch(retries, base) {
  const retrying = retryingFetch(retries, new Map(), base);
  return async (input, init) => {
    const url = typeof input === "string" ? input : input.url ?? String(input);
    if ((init?.method ?? "GET").toUpperCase() !== "POST" || !CREATE.test(new URL(url).pathname)) return retrying(input, init);
    for (let attempt = 0; ; attempt++) {
      const response = await base(input, init);
      if (response.status !== 429 || attempt >= retries) return response;
      await response.body?.cancel().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, serverDelayMs(response.headers) ?? backoffMs(attempt)));
    }
  };
}

// ------------------------------------------------------------------ commands

let ai;
let provider;
let config;
const toolObjects = new Map();

function toolsOf(entries) {
  if (!entries?.length) return undefined;
  const out = {};
  for (const entry of entries) {
    const name = typeof entry === "string" ? entry : entry.tool;
    const offered = typeof entry === "string" ? entry : entry.as;
    const spec = config.tools[name];
    if (!spec) throw new Error(`the release has no tool ${stringify(name)}`);
    if (!toolObjects.has(name)) toolObjects.set(name, ai.tool({ description: spec.description, inputSchema: ai.jsonSchema(spec.inputSchema) }));
    out[offered] = toolObjects.get(name);
  }
  return out;
}

function batchRequest(line) {
  return {
    id: line.id,
    type: "text",
    model: config.model.model,
    system: line.system ?? undefined,
    ...(line.messages ? { messages: line.messages } : { prompt: line.prompt }),
    tools: toolsOf(line.tools),
    ...config.settings,
  };
}

// Whether a failed start certainly made no batch: it failed before the create was sent, or the
// create was answered with a refusal (a 4xx other than 408).
function definite(err) {
  const url = typeof err?.url === "string" ? err.url : null;
  const status = err?.statusCode;
  if (url === null) return err?.name !== "AbortError" && !(err?.cause && err.cause.trunchbullKind === "connection") && !/fetch failed/i.test(String(err?.message));
  if (!CREATE.test(new URL(url).pathname)) return true; // the upload before it
  return typeof status === "number" && status < 500 && status !== 408; // (a 429 too: refused)
}

function failure(err) {
  const status = typeof err?.statusCode === "number" ? ` (HTTP ${err.statusCode})` : "";
  const cause = err?.cause ? `; cause: ${errorText(err.cause)}` : "";
  return scrub(`${errorText(err)}${status}${cause}`);
}

function plainStatus(status) {
  const { status: s, rawStatus, requestCounts, error, createdAt, expiresAt } = status;
  return { status: s, rawStatus: rawStatus ?? null, requestCounts: requestCounts ?? null, error: error ?? null, createdAt: createdAt ?? null, expiresAt: expiresAt ?? null };
}

async function start(lines) {
  try {
    const requests = lines.map(batchRequest);
    lines.length = 0; // (held no longer than needed: a start of 25,000 is the caller's largest heap)
    const started = await ai.experimental_startBatch({ provider, requests });
    const { version, id, provider: name } = started;
    send(`started\t${stringify({ ref: { version, id, provider: name }, status: plainStatus(started) })}`);
  } catch (err) {
    send(`refused\t${stringify({ message: failure(err), definite: definite(err) })}`);
  }
}

// A reply taken through generateText here, as the model callers take one (batch_step.mjs): for a
// case without tools nothing runs but the AI SDK, so no tool executor is needed. `r` its record,
// or `b` its step when its loop goes on.
const inProgress = new Map();
const STEPS_AT_ONCE = 16;
async function takeStep(request, result, receivedAt) {
  const b = request.batch;
  const batch = { ...b, result: result ?? null, latencyMs: Math.round((b.latencyMs + performance.now() - receivedAt) * 1000) / 1000 };
  const context = { ai, toolClient: null, config, prices: config.prices ?? null, scrub, inProgress };
  const out = await runBatchStep({ ...request, batch }, context);
  if (out.record) send(`r\t${request.k}\t${out.kind}\t${out.record}`, true);
  else send(`b\t${request.k}\t${out.step}`, true);
}

async function results(ref, contexts) {
  let count = 0;
  const receivedAt = performance.now();
  const running = new Set();
  try {
    if (ref.provider !== provider.experimental_batch().provider) throw new Error(`the batch ${ref.id} is not of provider ${config.model.provider}`);
    // The provider's own results (LanguageModelV4 replies), each taken through generateText as
    // a live reply: here (the requests in `contexts`), or by the model callers (`i` items).
    const stream = await provider.experimental_batch().doGetBatchResults({ batchId: ref.id });
    for await (const item of stream) {
      count += 1;
      const request = contexts?.get(item.id);
      if (request && item.status === "succeeded") {
        contexts.delete(item.id);
        const step = takeStep(request, item.result, receivedAt).finally(() => running.delete(step));
        running.add(step);
        if (running.size >= STEPS_AT_ONCE) await Promise.race(running);
        continue;
      }
      if (contexts && item.status === "succeeded") {
        send(`i\t${stringify({ id: item.id, status: "taken" })}`, true); // taken already (a second reading)
        continue;
      }
      let line = stringify(item);
      if (Buffer.byteLength(line) > config.maxItemBytes) {
        const message = `the reply was ${Buffer.byteLength(line).toLocaleString("en")} bytes as JSON, past the run's limit on one reply`;
        line = stringify({ type: "text", id: item.id, status: "failed", error: { message, code: "response-too-large" } });
      }
      send(`i\t${line}`, true);
    }
    await Promise.all(running);
    send(`end\t${stringify({ count })}`);
  } catch (err) {
    await Promise.allSettled(running);
    send(`failed\t${stringify({ message: failure(err), count })}`);
  }
}

// Steps given whole (a sample ending in error after its retries): their records (or steps).
async function steps(lines) {
  const now = performance.now();
  await Promise.all(lines.map((request) => takeStep(request, request.batch.result, now)));
  send(`end\t${stringify({ count: lines.length })}`);
}

async function command(request, lines) {
  try {
    switch (request.op) {
      case "start":
        return await start(lines);
      case "status":
        return send(`status\t${stringify(plainStatus(await ai.experimental_getBatchStatus({ provider, batch: request.ref })))}`);
      case "results": {
        const contexts = request.n ? new Map(lines.map((line) => [line.id, line])) : null;
        lines.length = 0; // (each is held by `contexts` until its reply is taken)
        return await results(request.ref, contexts);
      }
      case "steps":
        return await steps(lines);
      case "cancel":
        await ai.experimental_cancelBatch({ provider, batch: request.ref });
        return send(`cancelled\t{}`);
      case "list": {
        const page = await ai.experimental_listBatches({ provider, limit: request.limit, cursor: request.cursor ?? undefined });
        const batches = page.batches.map(({ version, id, provider: name, ...status }) => ({ ref: { version, id, provider: name }, ...plainStatus(status) }));
        return send(`listed\t${stringify({ batches, nextCursor: page.nextCursor ?? null })}`);
      }
      default:
        return send(`failed\t${stringify({ message: `unknown command ${stringify(request.op)}` })}`);
    }
  } catch (err) {
    send(`failed\t${stringify({ message: failure(err) })}`);
  }
}

// ------------------------------------------------------------------ main

let pending = null; // a start command waiting for its request lines
let queue = Promise.resolve();
const input = new LineReader(Infinity, (line) => {
  const value = parse(line); // from the run: trusted JSON
  if (!config) {
    config = value;
    queue = queue.then(setUp);
  } else if (pending) {
    pending.lines.push(value);
    if (pending.lines.length === pending.n) {
      const { request, lines } = pending;
      pending = null;
      queue = queue.then(() => command(request, lines));
    }
  } else if (value.n > 0) {
    pending = { request: value, n: value.n, lines: [] };
  } else {
    queue = queue.then(() => command(value, []));
  }
});
process.stdin.on("data", (chunk) => input.push(chunk));
process.stdin.on("end", () => queue.then(() => process.exit(0)));

async function setUp() {
  try {
    ai = await import(pathToFileURL(config.sdk).href);
    const spec = { ...config.model, factoryOptions: { batchResultDownloads: { maxLineBytes: config.maxItemBytes } } };
    if (spec.apiKeyEnv) {
      spec.apiKey = process.env[spec.apiKeyEnv];
      secret = spec.apiKey || null;
      delete process.env[spec.apiKeyEnv];
    }
    provider = createProvider(spec, ai, batchFetch(config.retries, transport(config.maxReplyBytes)));
    if (typeof provider.experimental_batch !== "function") throw new Error(`the provider ${config.model.provider} has no batch API`);
  } catch (err) {
    send(`fatal\t${stringify({ message: scrub(errorText(err)) })}`);
    process.exit(1);
  }
  send(`ready\t{}`);
}
