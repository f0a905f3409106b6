// A run worker, the model caller (SPEC §8.2): runs many samples concurrently,
// each one AI SDK `generateText` call with the case's tools and a bounded
// multi-step loop. It holds the provider's key and talks to the provider, and
// imports no benchmark code at all: the release's tools run in a tool
// executor of its own (tool_executor.mjs, a separate sandboxed process with
// no key and no network), each call a message over the pipes argv[3] (to it)
// and argv[4] (from it), so nothing a tool does to prototypes or globals can
// reach what this process sends to the provider. Started by
// trunchbull/run/workers.py under Node's permission model (reads only in the
// scripts and the toolchain; no writes, child processes, workers or addons;
// network allowed; a local model adds reads of its GGUF file and runtime, and
// native addons), with stdout and stderr sent to its log. The protocol is
// on file descriptor argv[2].
//
// stdin, one JSON line each: first the run's configuration
//   { sdk (the AI SDK bundle's path), toolchainAi (the toolchain's `ai`, for tools without their own), model: { provider, model, baseUrl, apiKeyEnv, path },
//     settings, maxSteps, timeoutMs, toolTimeoutMs, retries, slots,
//     maxRecordBytes, maxResponseBytes, maxToolResultBytes, maxReplyBytes (limits.mjs, http.mjs),
//     tools: { name: { module, description, inputSchema } } }
// then one line per sample: { k, caseId, repeat, system, prompt, tools: [names] },
// or, in batch mode, per step of a sample the same with `batch` (the
// provider's reply read from a batch, and the sample's earlier steps:
// batch_step.mjs), or { giveBack: [k, ...] } (below).
// The end of stdin ends the worker at once (the parent has what it asked
// for, or has gone away).
// Protocol lines (node/protocol.py; records finished together share a write):
//   ready <TAB> info JSON      the model is made; samples may come (info:
//                              { model: what the model says of itself, or null })
//   w <TAB> message JSON       a warning from the model (AI SDK call warnings,
//                              e.g. an unsupported setting) or the tool executor
//                              (a tool left timers running), once per message
//   fatal <TAB> { message }    the model cannot be made (nothing was called)
//   c <TAB> k                  sample k sends a request to the provider (each attempt)
//   s <TAB> k <TAB> n          tool call (or tool-module import) n of sample k starts
//   e <TAB> k <TAB> n          ... and ends (both as the tool executor says, while k runs)
//   r <TAB> k <TAB> kind|- <TAB> record JSON   sample k is done (its error kind, or -)
//   b <TAB> k <TAB> step JSON  batch mode: sample k's step is done and its loop goes on (the
//                              step, and the conversation its next request sends)
//   u <TAB> k                  sample k, given back, was never started
import { writeSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { echoModel } from "./model_echo.mjs";
import { createModel } from "./models.mjs";
import { SAMPLE_HEADER, retryingFetch } from "./fetch.mjs";
import { httpFetch } from "./http.mjs";
import { limitedModel } from "./limits.mjs";
import { LineReader } from "./lines.mjs";
import { StepTotals, classify, jsonSafe, recordOf } from "./record.mjs";
import { runBatchStep } from "./batch_step.mjs";
import { ToolClient, ToolLoadError } from "./tool_client.mjs";
import { errorText } from "../shared/intrinsics.mjs";
import { blockOnFullPipes } from "../shared/blocking_output.mjs";

const PROTOCOL_FD = Number(process.argv[2]);
const TOOLS_TO_FD = process.argv[3] ? Number(process.argv[3]) : null; // none: the release has no tools
const TOOLS_FROM_FD = process.argv[4] ? Number(process.argv[4]) : null;
const stringify = JSON.stringify;
const parse = JSON.parse;

// Ctrl-C reaches the whole process group: the parent stops the run and its
// workers in order, keeping every record.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => {});

// Anything user code prints goes to the log, never to the protocol.
blockOnFullPipes(process.stdout, process.stderr); // (the log it shares with its tool executor)
for (const level of ["log", "info", "debug", "table", "dir"]) console[level] = console.error;

function writeAll(text) {
  const buf = Buffer.from(text);
  let offset = 0;
  while (offset < buf.length) offset += writeSync(PROTOCOL_FD, buf, offset);
}

// Records that finish in the same turn of the event loop go out together, in
// one write; every other line (a tool starting, above all: a synchronous
// loop may follow it) is written at once, after whatever is waiting.
let batch = "";
let flushing = false;
function flush() {
  flushing = false;
  if (batch) {
    const text = batch;
    batch = "";
    writeAll(text);
  }
}
function send(text) {
  batch += text + "\n";
  flush();
}
function sendSoon(text) {
  batch += text + "\n";
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

// The model's call warnings (an unsupported setting, tools it cannot call):
// each distinct one is reported once, and the run says it once.
const warned = new Set();
function warningText(warning) {
  if (warning.type === "other") return warning.message;
  if (warning.details) return warning.details;
  return warning.type === "unsupported" ? `${warning.feature} is not supported by the model` : `${warning.feature}: compatibility mode`;
}
globalThis.AI_SDK_LOG_WARNINGS = ({ warnings }) => {
  for (const warning of warnings) {
    const text = warningText(warning);
    if (!warned.has(text)) {
      warned.add(text);
      send(`w\t${stringify(text)}`);
    }
  }
};

let secret = null; // the API key, scrubbed from every message
const inProgress = new Map(); // sample number → its state, for the fetch's retry count
function scrub(text) {
  let out = String(text);
  if (secret) out = out.split(secret).join("[redacted]");
  return out.replace(/(bearer\s+)[^\s"',]+/gi, "$1[redacted]");
}

// stdin split into lines by hand (lines.mjs; from the run: no bound): a
// readline async iterator costs a promise and a turn per line, and the
// samples come in batches.
let onLine = null; // set once the worker is ready; until then lines wait
const waiting = [];
const stdinLines = new LineReader(Infinity, (line) => {
  if (onLine) onLine(line);
  else waiting.push(line);
});
process.stdin.on("data", (chunk) => stdinLines.push(chunk));
// End of input: the run has every record it asked for, or is gone. Either
// way nothing here is wanted any more.
process.stdin.on("end", () => {
  flush();
  process.exit(0);
});
const firstLine = await new Promise((resolve) => {
  onLine = (line) => {
    onLine = null;
    resolve(line);
  };
});
const config = parse(firstLine);

let ai;
let model;
let toolClient = null;
try {
  ai = await import(pathToFileURL(config.sdk).href); // the AI SDK and the provider, one bundle
  const spec = { ...config.model };
  if (spec.apiKeyEnv) {
    spec.apiKey = process.env[spec.apiKeyEnv];
    secret = spec.apiKey || null;
    delete process.env[spec.apiKeyEnv]; // nothing else here needs it
  }
  if (!config.batch) {
    // (in batch mode the model callers call no provider: the replies come from the batches)
    const transport = (url, init) => httpFetch(url, init, undefined, config.maxReplyBytes);
    const made = await createModel(spec, ai, retryingFetch(config.retries, inProgress, transport, (k) => sendSoon(`c\t${k}`)));
    const sampleOf = (params) => inProgress.get(Number(params?.headers?.[SAMPLE_HEADER]))?.repairs ?? null;
    model = limitedModel(made, config.maxResponseBytes, sampleOf);
  }
  if (TOOLS_TO_FD !== null) {
    toolClient = new ToolClient(TOOLS_TO_FD, TOOLS_FROM_FD, {
      specs: config.tools, toolTimeoutMs: config.toolTimeoutMs, maxToolResultBytes: config.maxToolResultBytes,
      maxResponseBytes: config.maxResponseBytes,
      // Only a sample still running here is reported: a late start cannot outlive its record.
      onStart: (k, n) => inProgress.has(k) && send(`s\t${k}\t${n}`),
      onEnd: (k, n) => inProgress.has(k) && send(`e\t${k}\t${n}`),
      onWarning: (text) => {
        if (!warned.has(text)) {
          warned.add(text);
          send(`w\t${stringify(text)}`);
        }
      },
      onGone: () => {
        // The executor died (a tool ended it, or it ran out of memory): so does this
        // worker, and the parent accounts for the samples in flight (run/workers.py).
        flush();
        process.stderr.write("trunchbull run worker: the tool executor exited\n");
        process.exit(70);
      },
    });
    const modules = Object.fromEntries(Object.entries(config.tools).map(([name, t]) => [name, { module: t.module }]));
    await toolClient.start({ sdk: config.sdk, aiFallback: config.toolchainAi, tools: modules });
  }
  // The AI SDK's first call initializes it (~0.2 s): made here, with the
  // built-in echo model, so that no sample's latency includes it.
  await ai.generateText({ model: echoModel(), prompt: "warm-up", maxRetries: 0 });
} catch (err) {
  send(`fatal\t${stringify({ message: scrub(errorText(err)) })}`);
  process.exit(1);
}
const described = typeof model?.describe === "function" ? jsonSafe(model.describe()) : null;
send(`ready\t${stringify({ model: described, rssBytes: process.memoryUsage().rss })}`);

const settings = config.settings;
const prices = config.prices ?? null; // null: the model's price is unknown

async function runSample(request) {
  if (request.batch) {
    const out = await runBatchStep(request, { ai, model, toolClient, config, prices, scrub, inProgress });
    if (out.record) sendSoon(`r\t${request.k}\t${out.kind}\t${out.record}`);
    else sendSoon(`b\t${request.k}\t${out.step}`);
    return;
  }
  const started = performance.now();
  const controller = new AbortController();
  const sample = { k: request.k, controller, failure: null, retries: 0, repairs: new Set() };
  inProgress.set(request.k, sample);
  const totals = new StepTotals(prices, scrub);
  const timer = setTimeout(() => {
    const err = new Error(`the sample did not finish within the ${config.timeoutMs / 1000} s timeout`);
    err.trunchbullKind = "timeout";
    sample.failure ??= err;
    controller.abort(err);
  }, config.timeoutMs);
  let output = "";
  let finishReason = null;
  let error = null;
  try {
    await (async () => {
      if (request.tools.length && !toolClient) {
        const first = request.tools[0];
        throw new ToolLoadError(`the release has no tool ${stringify(typeof first === "string" ? first : first.tool)}`);
      }
      const tools = request.tools.length ? await toolClient.toolsFor(request.tools, sample, ai) : undefined;
      const result = await ai.generateText({
        model,
        system: request.system ?? undefined,
        prompt: request.prompt,
        tools,
        stopWhen: ai.stepCountIs(config.maxSteps),
        maxRetries: 0,
        // Every sample is recorded here; the SDK's tracing-channel telemetry
        // would only copy each event for subscribers that do not exist (~25%
        // of a worker's time with the echo model).
        telemetry: { isEnabled: false },
        abortSignal: controller.signal,
        providerOptions: { trunchbull: { caseId: request.caseId, repeat: request.repeat } },
        headers: { [SAMPLE_HEADER]: String(request.k) },
        ...settings,
        onStepFinish: (step) => totals.add(step, sample.repairs),
      });
      output = result.text;
      finishReason = result.finishReason ?? totals.lastFinish;
    })();
  } catch (err) {
    error = classify(err, sample);
    error.message = scrub(error.message);
    finishReason = totals.lastFinish;
  } finally {
    clearTimeout(timer);
    inProgress.delete(request.k);
    if (request.tools.length && toolClient) toolClient.close(request.k);
  }
  const { record, line } = recordOf(
    {
      caseId: request.caseId,
      repeat: request.repeat,
      output,
      totals,
      finishReason,
      latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
      attempts: 1 + sample.retries,
      error,
      repairs: sample.repairs,
    },
    config.maxRecordBytes,
  );
  sendSoon(`r\t${request.k}\t${record.error ? record.error.kind : "-"}\t${line}`);
}

// At most `config.slots` samples run at once (null: no limit here); the
// parent sends a few more than that, which wait here in order, so that a
// finished sample's slot is filled at once instead of after a round trip to
// the parent (which counts the same way: see run/workers.py). A line
// { "giveBack": [k, ...] } asks for waiting samples back (another worker is
// idle): each one still waiting is dropped and answered `u <TAB> k`.
const slots = config.slots ?? Infinity;
const queued = [];
let running = 0;
function launch(request) {
  running += 1;
  runSample(request)
    .catch((err) => process.stderr.write(`trunchbull run worker: ${errorText(err)}\n`))
    .finally(() => {
      running -= 1;
      if (queued.length) launch(queued.shift());
    });
}
function giveBack(ks) {
  const wanted = new Set(ks);
  for (let i = queued.length - 1; i >= 0; i--) {
    if (wanted.has(queued[i].k)) sendSoon(`u\t${queued.splice(i, 1)[0].k}`);
  }
}
function startSample(line) {
  const request = parse(line);
  if (request.giveBack) giveBack(request.giveBack);
  else if (running < slots) launch(request);
  else queued.push(request);
}
onLine = startSample;
for (const line of waiting.splice(0)) startSample(line);
