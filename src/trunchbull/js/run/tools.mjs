// The release's tools at run time (SPEC §8.2), in the tool executor
// (tool_executor.mjs): the only process of a run that imports benchmark code.
// Each tool module's bundle is read and compiled once per executor; every
// sample gets fresh instances of its tools' modules, each in a V8 context of
// its own (shared/fresh_module.mjs), which live for that sample's tool loop
// (across its steps) and die with it. A sample opens the tools its case
// offers (each one's load problem, or whether it validates its input), then
// validates and executes calls by name. `onStart`/`onEnd` say when a call (or
// a module's import) starts and ends: a synchronous infinite loop never
// returns to the event loop, so only the Python side can see it, through the
// model caller that forwards these, and replace the pair.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { types } from "node:util";
import { ModuleSource } from "../shared/fresh_module.mjs";
import { errorText } from "../shared/intrinsics.mjs";

const { isNativeError } = types;

const stringify = JSON.stringify; // captured before any tool module is imported

// What the AI SDK's getErrorMessage would say of a validation failure's cause.
function causeText(cause) {
  try {
    if (cause == null) return "unknown error";
    if (typeof cause === "string") return cause;
    if (isNativeError(cause)) return String(cause.message);
    return stringify(cause);
  } catch {
    return "an error that cannot be printed";
  }
}

/** A thrown value as data for the model caller: { name, message } of an Error, else { text }. */
export function thrownData(err) {
  try {
    if (isNativeError(err)) return { name: String(err.name), message: String(err.message) };
    return { text: typeof err === "string" ? err : String(err) };
  } catch {
    return { text: "an error that cannot be printed" };
  }
}

export class ToolHost {
  // specs: tool name → { module (absolute bundle path) }; `onWarning` gets a
  // tool module that left timers running when its sample ended (once a module).
  constructor(specs, { ai, aiFallback, onStart, onEnd, onWarning }) {
    this.specs = specs;
    this.ai = ai;
    this.aiFallback = aiFallback;
    this.onStart = onStart;
    this.onEnd = onEnd;
    this.onWarning = onWarning;
    this.sources = new Map(); // bundle path → ModuleSource, or { problem }
    this.aiOf = new Map(); // bundle path → Promise of the `ai` its validators use
    this.samples = new Map(); // sample number → { tools: name → { original, validate }, instances, controller }
    this.warned = new Set();
    this.counter = 0;
  }

  // Read and compile every tool module before the first sample, and run one
  // instance of each (then drop it), so that no sample's latency includes a
  // one-time read, compile or dependency import. A module that fails fails
  // the samples that use its tools, not the executor.
  async preload() {
    const bundles = new Set(Object.values(this.specs).map((spec) => spec.module));
    await Promise.all([...bundles].map(async (bundle) => {
      const loaded = await this._instantiate(bundle, -1);
      if (loaded.instance) loaded.instance.close();
    }));
  }

  _source(bundle) {
    let source = this.sources.get(bundle);
    if (!source) {
      try {
        source = new ModuleSource(bundle);
      } catch (err) {
        source = { problem: `cannot load the tool module: ${errorText(err)}` };
      }
      this.sources.set(bundle, source);
    }
    return source;
  }

  // A fresh instance of a tool module for sample k: { instance, tools, validators } or { problem }.
  async _instantiate(bundle, k) {
    const source = this._source(bundle);
    if (source.problem) return source;
    const n = ++this.counter;
    let instance;
    try {
      // a module's top-level code may loop too: its start is reported once it is linked
      instance = await source.instantiate(() => this.onStart(k, n));
    } catch (err) {
      return { problem: `cannot load the tool module: ${errorText(err)}` };
    } finally {
      this.onEnd(k, n);
    }
    try {
      const exported = instance.namespace.tools;
      const tools = exported && typeof exported === "object" ? exported : {};
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
      return { instance, tools, validators };
    } catch (err) {
      instance.close();
      return { problem: `cannot read the tool module's exports: ${errorText(err)}` };
    }
  }

  _aiFor(bundle) {
    let entry = this.aiOf.get(bundle);
    if (!entry) {
      let resolved = this.aiFallback;
      try {
        resolved = createRequire(bundle).resolve("ai");
      } catch {
        // no `ai` among the release's dependencies: the toolchain's
      }
      entry = resolved === this.aiFallback ? Promise.resolve(this.ai) : import(pathToFileURL(resolved).href);
      this.aiOf.set(bundle, entry);
    }
    return entry;
  }

  // Sample k's tools (release tool names), each module a fresh instance that
  // lives until close(k): name → { problem } or { validates }.
  async open(k, names) {
    const sample = { tools: new Map(), instances: new Map(), controller: new AbortController() };
    this.samples.set(k, sample);
    const out = {};
    for (const name of names) {
      const spec = this.specs[name];
      if (!spec) {
        out[name] = { problem: `the release has no tool ${stringify(name)}` };
        continue;
      }
      let loaded = sample.instances.get(spec.module);
      if (!loaded) {
        loaded = await this._instantiate(spec.module, k);
        sample.instances.set(spec.module, loaded);
      }
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

  // Sample k ended: its tools' abort signal fires, and their module instances
  // are dropped, every timer they left cleared (said once per module).
  close(k) {
    const sample = this.samples.get(k);
    if (!sample) return;
    this.samples.delete(k);
    try {
      sample.controller.abort();
    } catch {
      // a tool's abort listener threw: nothing of it is wanted any more
    }
    for (const [bundle, loaded] of sample.instances) {
      const left = loaded.instance ? loaded.instance.close() : 0;
      if (left && !this.warned.has(bundle)) {
        this.warned.add(bundle);
        const names = Object.keys(this.specs).filter((name) => this.specs[name].module === bundle).sort();
        this.onWarning(`the tool module of ${names.map((n) => stringify(n)).join(", ")} left ${left} timer(s) running when its sample ended; they were stopped (each sample gets a fresh instance of its tools: nothing outlives it)`);
      }
    }
  }
}
