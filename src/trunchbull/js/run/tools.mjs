// The release's tools at run time (SPEC §8.2), in the tool executor
// (tool_executor.mjs): the only process of a run that imports benchmark code.
// Each tool module's bundle is imported once per executor (with the release's
// runtime dependencies beside it); a sample opens the tools its case offers
// (each one's load problem, or whether it validates its input), then
// validates and executes calls by name. `onStart`/`onEnd` say when a call (or
// a module's import) starts and ends: a synchronous infinite loop never
// returns to the event loop, so only the Python side can see it, through the
// model caller that forwards these, and replace the pair.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const stringify = JSON.stringify; // captured before any tool module is imported

function errorText(err) {
  try {
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  } catch {
    return "an error that cannot be printed";
  }
}

// What the AI SDK's getErrorMessage would say of a validation failure's cause.
function causeText(cause) {
  try {
    if (cause == null) return "unknown error";
    if (typeof cause === "string") return cause;
    if (cause instanceof Error) return String(cause.message);
    return stringify(cause);
  } catch {
    return "an error that cannot be printed";
  }
}

/** A thrown value as data for the model caller: { name, message } of an Error, else { text }. */
export function thrownData(err) {
  try {
    if (err instanceof Error) return { name: String(err.name), message: String(err.message) };
    return { text: typeof err === "string" ? err : String(err) };
  } catch {
    return { text: "an error that cannot be printed" };
  }
}

export class ToolHost {
  // specs: tool name → { module (absolute bundle path) }
  constructor(specs, { ai, aiFallback, onStart, onEnd }) {
    this.specs = specs;
    this.ai = ai;
    this.aiFallback = aiFallback;
    this.onStart = onStart;
    this.onEnd = onEnd;
    this.modules = new Map(); // bundle path → Promise<{ tools, validators } | { problem }>
    this.samples = new Map(); // sample number → { tools: name → { original, validate }, controller }
    this.counter = 0;
  }

  // Import every tool module before the first sample, so that no sample's
  // latency includes a one-time import. A module that fails to import fails
  // the samples that use its tools, not the executor.
  async preload() {
    const bundles = new Set(Object.values(this.specs).map((spec) => spec.module));
    await Promise.all([...bundles].map((bundle) => this._load(bundle, -1)));
  }

  _load(bundle, k) {
    let entry = this.modules.get(bundle);
    if (!entry) {
      const n = ++this.counter;
      this.onStart(k, n); // a module's top-level code may loop too
      entry = import(pathToFileURL(bundle).href).then(
        async (mod) => {
          const tools = mod.tools && typeof mod.tools === "object" ? mod.tools : {};
          const ai = await this._aiFor(bundle);
          const validators = new Map();
          for (const name of Object.keys(tools)) {
            const schema = tools[name]?.inputSchema ?? tools[name]?.parameters;
            try {
              validators.set(name, schema ? ai.asSchema(schema).validate : undefined);
            } catch {
              validators.set(name, undefined);
            }
          }
          return { tools, validators };
        },
        (err) => ({ problem: `cannot load the tool module: ${errorText(err)}` }),
      ).finally(() => this.onEnd(k, n));
      this.modules.set(bundle, entry);
    }
    return entry;
  }

  async _aiFor(bundle) {
    let resolved = this.aiFallback;
    try {
      resolved = createRequire(bundle).resolve("ai");
    } catch {
      // no `ai` among the release's dependencies: the toolchain's
    }
    return resolved === this.aiFallback ? this.ai : import(pathToFileURL(resolved).href);
  }

  // Sample k's tools (release tool names): name → { problem } or { validates }.
  async open(k, names) {
    const sample = { tools: new Map(), controller: new AbortController() };
    this.samples.set(k, sample);
    const out = {};
    for (const name of names) {
      const spec = this.specs[name];
      if (!spec) {
        out[name] = { problem: `the release has no tool ${stringify(name)}` };
        continue;
      }
      const loaded = await this._load(spec.module, k);
      if (loaded.problem) {
        out[name] = { problem: `tool ${stringify(name)}: ${loaded.problem}` };
        continue;
      }
      const original = loaded.tools[name];
      if (!original || typeof original.execute !== "function") {
        out[name] = { problem: `tool ${stringify(name)} is not exported with an execute function by its module` };
        continue;
      }
      const validate = loaded.validators.get(name);
      sample.tools.set(name, { original, validate });
      out[name] = { validates: typeof validate === "function" };
    }
    return out;
  }

  // { ok: true, value } or { ok: false, error: { message } } (the cause of
  // the failure: the model caller wraps it as the AI SDK would).
  async validate(k, name, input) {
    const tool = this.samples.get(k)?.tools.get(name);
    if (!tool?.validate) return { ok: true, value: input };
    try {
      const result = await tool.validate(input);
      if (result?.success) return { ok: true, value: result.value };
      const err = result?.error;
      const cause = err?.name === "AI_TypeValidationError" ? err.cause : err;
      return { ok: false, error: { message: causeText(cause) } };
    } catch (err) {
      return { ok: false, error: { message: causeText(err) } };
    }
  }

  // The tool's own `execute`; its result (or what it threw) for the model caller.
  async execute(k, name, input, options) {
    const sample = this.samples.get(k);
    const tool = sample?.tools.get(name);
    if (!tool) return { ok: false, error: { text: `tool ${stringify(name)} is not open for this sample` } };
    const n = ++this.counter;
    this.onStart(k, n);
    try {
      const output = await tool.original.execute(input, { ...options, abortSignal: sample.controller.signal });
      return { ok: true, output };
    } catch (err) {
      return { ok: false, error: thrownData(err) };
    } finally {
      this.onEnd(k, n);
    }
  }

  // Sample k ended: its tools' abort signal fires.
  close(k) {
    const sample = this.samples.get(k);
    if (!sample) return;
    this.samples.delete(k);
    try {
      sample.controller.abort();
    } catch {
      // a tool's abort listener threw: nothing of it is wanted any more
    }
  }
}
