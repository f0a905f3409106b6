// The model caller's side of the tool executor (tool_executor.mjs): every
// sample's AI SDK tools are offered here with the release's JSON Schemas,
// and each validation and `execute` is a message to the executor, the only
// process that imports benchmark code. Nothing the executor sends is trusted:
// each reply is parsed with this realm's JSON.parse and checked for its
// shape, and only whole numbers are forwarded on the Python protocol.
//   * the Python side hears when a tool starts and ends (`onStart`/`onEnd`,
//     forwarded while the sample is in progress): a synchronous infinite loop
//     never returns to the executor's event loop, so only the parent can see
//     it and replace the pair;
//   * an asynchronous tool past the tool timeout ends its sample here;
//   * the executor cuts a tool result to the limit before it sends it, and
//     no line of its is read past maxLineBytes (far above what an answer
//     within the limits needs): a longer one is not buffered, and fails the
//     request it names; the result is cut here again if it is still too long.
import { LineReader } from "./lines.mjs";
import { TOOL_RESULT_MARKER_ROOM, cappedToolResult } from "./limits.mjs";
import net from "node:net";

const stringify = JSON.stringify;
const parse = JSON.parse;
const byteLength = Buffer.byteLength;

// The longest line read from the executor: any answer within the limits
// (JSON escapes at most 6 bytes per byte of text) and room to spare.
export function maxLineBytes(maxToolResultBytes, maxResponseBytes) {
  return 6 * Math.max(maxToolResultBytes, maxResponseBytes ?? 0) + (1 << 20);
}
// What a line past that says it answers (the start of the executor's own replies).
const HEAD = /^\{"t":"(result|valid|opened)","(id|k)":(\d{1,15})[,}]/;

export class ToolTimeoutError extends Error {
  constructor(name, ms) {
    super(`tool ${JSON.stringify(name)} did not finish within the ${ms / 1000} s tool timeout`);
    this.name = "ToolTimeoutError";
    this.trunchbullKind = "tool-timeout";
  }
}

export class ToolLoadError extends Error {
  constructor(message) {
    super(message);
    this.name = "ToolLoadError";
    this.trunchbullKind = "tool-load";
  }
}

const isCount = (v) => Number.isSafeInteger(v) && v >= 0;
const text = (v, fallback) => (typeof v === "string" ? v : fallback);

// What a tool threw, as the model caller's own error (the AI SDK records `name: message`).
function thrown(error) {
  if (error && typeof error === "object" && typeof error.text === "string") return error.text;
  const err = new Error(text(error?.message, "the tool failed"));
  err.name = text(error?.name, "Error");
  return err;
}

export class ToolClient {
  // toFd: the executor's stdin (written here); fromFd: its replies.
  constructor(toFd, fromFd, { specs, toolTimeoutMs, maxToolResultBytes, maxResponseBytes, onStart, onEnd, onWarning, onGone }) {
    this.specs = specs;
    this.maxToolResultBytes = maxToolResultBytes;
    this.maxLineBytes = maxLineBytes(maxToolResultBytes, maxResponseBytes);
    this.onWarning = onWarning;
    this.toolTimeoutMs = toolTimeoutMs;
    this.onStart = onStart;
    this.onEnd = onEnd;
    this.out = new net.Socket({ fd: toFd, readable: false, writable: true });
    this.in = new net.Socket({ fd: fromFd, readable: true, writable: false });
    this.waiting = new Map(); // request id or "open:k" → resolve
    this.nextId = 1;
    this.readyWaiter = null;
    const lines = new LineReader(this.maxLineBytes, (line) => this._received(line), (head, seen) => this._tooLong(head, seen));
    this.in.on("data", (chunk) => lines.push(chunk));
    this.in.on("close", () => onGone());
    this.out.on("error", () => {}); // the executor is gone: its pipe's end says so
    this.in.on("error", () => {});
  }

  _received(line) {
    let message;
    try {
      message = parse(line);
    } catch {
      return; // not a reply (a tool wrote to the channel)
    }
    if (!message || typeof message !== "object") return;
    const { t } = message;
    if (t === "s" || t === "e") {
      if (isCount(message.k) && isCount(message.n)) (t === "s" ? this.onStart : this.onEnd)(message.k, message.n);
    } else if (t === "w") {
      if (typeof message.text === "string") this.onWarning(message.text);
    } else if (t === "ready" || t === "fatal") {
      this.readyWaiter?.(t === "ready" ? null : text(message.message, "the tool executor failed"));
      this.readyWaiter = null;
    } else {
      const key = t === "opened" ? `open:${message.k}` : message.id;
      const resolve = this.waiting.get(key);
      if (resolve) {
        this.waiting.delete(key);
        resolve(message);
      }
    }
  }

  // A line past maxLineBytes: the request it names (if any) fails; the rest of it is skipped.
  _tooLong(head, seen) {
    const match = HEAD.exec(head);
    if (!match) return;
    const [, t, field, number] = match;
    const key = t === "opened" ? (field === "k" ? `open:${number}` : null) : field === "id" ? Number(number) : null;
    const resolve = this.waiting.get(key);
    if (!resolve) return;
    this.waiting.delete(key);
    const text = `the tool executor's answer was past ${this.maxLineBytes.toLocaleString("en")} bytes (${seen.toLocaleString("en")} read); it was not read`;
    resolve(t === "opened" ? { t, tools: null } : { t, ok: false, error: t === "valid" ? { message: text } : { text } });
  }

  _send(message) {
    this.out.write(stringify(message) + "\n");
  }

  _ask(key, message) {
    return new Promise((resolve) => {
      this.waiting.set(key, resolve);
      this._send(message);
    });
  }

  // The executor's configuration; resolves once every tool module is imported.
  start(config) {
    const ready = new Promise((resolve, reject) => {
      this.readyWaiter = (problem) => (problem ? reject(new Error(problem)) : resolve());
    });
    this._send({ ...config, maxToolResultBytes: this.maxToolResultBytes, maxLineBytes: this.maxLineBytes });
    return ready;
  }

  // The AI SDK tools of one sample; `sample` = { k, controller, failure }. `entries`: the
  // case's tools, each a release tool name or { tool, as } (that tool offered as `as`).
  async toolsFor(entries, sample, ai) {
    const names = [];
    for (const entry of entries) {
      const name = typeof entry === "string" ? entry : entry.tool;
      if (!this.specs[name]) throw new ToolLoadError(`the release has no tool ${JSON.stringify(name)}`);
      if (!names.includes(name)) names.push(name);
    }
    const opened = await this._ask(`open:${sample.k}`, { t: "open", k: sample.k, tools: names });
    const out = {};
    for (const entry of entries) {
      const name = typeof entry === "string" ? entry : entry.tool;
      const offered = typeof entry === "string" ? entry : entry.as;
      const status = opened.tools && typeof opened.tools === "object" ? opened.tools[name] : undefined;
      if (!status || typeof status !== "object") throw new ToolLoadError(`tool ${JSON.stringify(name)}: the tool executor did not open it`);
      if (typeof status.problem === "string") throw new ToolLoadError(status.problem);
      const validate = status.validates === true ? (value) => this._validate(sample.k, name, value) : undefined;
      const spec = this.specs[name];
      out[offered] = ai.tool({
        description: spec.description,
        inputSchema: ai.jsonSchema(spec.inputSchema, validate ? { validate } : undefined),
        execute: (input, options) => {
          sample.ran?.push([name, input]); // a batch sample's next step executes them again first
          return this._execute(name, input, options, sample);
        },
      });
    }
    return out;
  }

  async _validate(k, name, input) {
    const id = this.nextId++;
    const answer = await this._ask(id, { t: "validate", id, k, name, input });
    if (answer.ok === true) return { success: true, value: answer.value };
    return { success: false, error: new Error(text(answer.error?.message, "invalid input")) };
  }

  _execute(name, input, options, sample) {
    const id = this.nextId++;
    let messages;
    try {
      messages = parse(stringify(options?.messages ?? []));
    } catch {
      messages = [];
    }
    let timer;
    // Past the tool timeout the executor is asked whether its event loop still
    // turns: if it answers, the tool is merely slow and its sample ends here;
    // if not, a synchronous loop holds it, and the sample is left to the
    // parent, which sees the call still open, stops the pair and replaces it.
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => {
        const ping = this.nextId++;
        this._ask(ping, { t: "ping", id: ping }).then(() => {
          const err = new ToolTimeoutError(name, this.toolTimeoutMs);
          sample.failure ??= err;
          sample.controller.abort(err);
          this.waiting.delete(id);
          reject(err);
        });
      }, this.toolTimeoutMs);
    });
    const options_ = { toolCallId: options?.toolCallId, messages };
    const work = this._ask(id, { t: "call", id, k: sample.k, name, input, options: options_ }).then((answer) => {
      if (answer.ok !== true) throw thrown(answer.error);
      const { output } = answer;
      if (answer.cut === true && typeof output === "string" && byteLength(output) <= this.maxToolResultBytes + TOOL_RESULT_MARKER_ROOM) {
        sample.repairs?.add("tool-result-truncated"); // cut by the executor
        return output;
      }
      return cappedToolResult(output, this.maxToolResultBytes, sample.repairs);
    });
    return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
  }

  // The tool executions of a batch sample's earlier steps ([release tool name, input], in order),
  // made again in its fresh instances so that their state is what it was; results are dropped.
  async replay(executions, sample) {
    for (const [name, input] of executions) {
      if (!this.specs[name]) continue;
      await this._execute(name, input, { toolCallId: "trunchbull-replay", messages: [] }, sample).catch(() => {});
      if (sample.failure) throw sample.failure;
    }
  }

  // Sample k ended: the executor drops its tools (their abort signal fires).
  close(k) {
    this._send({ t: "close", k });
  }
}
