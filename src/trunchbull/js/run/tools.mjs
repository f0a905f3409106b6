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

// What `open` answers for a module's tools, from one instance of it.
function shapeOf(loaded) {
  if (loaded.problem) return { problem: loaded.problem };
  const tools = new Map();
  for (const name of Object.keys(loaded.tools)) {
    if (typeof loaded.tools[name]?.execute !== "function") continue;
    tools.set(name, { validates: typeof loaded.validators.get(name) === "function" });
  }
  return { tools };
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
    this.shapes = new Map(); // bundle path → { problem } or { tools: name → { problem } | { validates } }
    this.samples = new Map(); // sample number → { tools: name → bundle, instances: bundle → Promise, controller }
    this.warned = new Set();
    this.counter = 0;
  }

  // Read and compile every tool module before the first sample, and run one
  // instance of each (then drop it), so that no sample's latency includes a
  // one-time read, compile or dependency import. That instance's shape (its
  // load problem, or which tools it exports with an `execute` and which
  // validate their input) answers every sample's `open`: a sample's own
  // instance is made only when it first validates or calls one of the
  // module's tools, so a sample whose model calls no tool pays nothing. A
  // module that fails fails the samples that use its tools, not the executor.
  async preload() {
    const bundles = new Set(Object.values(this.specs).map((spec) => spec.module));
    await Promise.all([...bundles].map(async (bundle) => {
      const loaded = await this._instantiate(bundle, -1);
      this.shapes.set(bundle, shapeOf(loaded));
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

  // Sample k's tools (release tool names): name → { problem } or { validates },
  // from the preloaded shape of their modules. Each module's instance for the
  // sample is made on first use and lives until close(k).
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
      const shape = this.shapes.get(spec.module) ?? { problem: "the tool module was not loaded" };
      const status = shape.problem ? { problem: `tool ${stringify(name)}: ${shape.problem}` } : shape.tools.get(name) ?? {
        problem: `tool ${stringify(name)} is not exported with an execute function by its module`,
      };
      if (!status.problem) sample.tools.set(name, spec.module);
      out[name] = status;
    }
    return out;
  }

  // Sample k's own instance of the module of tool `name` (made on first use):
  // { original, validate } or { problem }.
  async _tool(k, name) {
    const sample = this.samples.get(k);
    const bundle = sample?.tools.get(name);
    if (!bundle) return { problem: `tool ${stringify(name)} is not open for this sample` };
    let pending = sample.instances.get(bundle);
    if (!pending) {
      pending = this._instantiate(bundle, k);
      sample.instances.set(bundle, pending);
    }
    const loaded = await pending;
    if (loaded.problem) return { problem: `tool ${stringify(name)}: ${loaded.problem}` };
    const original = loaded.tools[name];
    if (!original || typeof original.execute !== "function") {
      return { problem: `tool ${stringify(name)} is not exported with an execute function by this instance of its module` };
    }
    return { original, validate: loaded.validators.get(name) };
  }

  // { ok: true, value } or { ok: false, error: { message } } (the cause of
  // the failure: the model caller wraps it as the AI SDK would).
  async validate(k, name, input) {
    const tool = await this._tool(k, name);
    if (tool.problem) return { ok: false, error: { message: tool.problem } };
    if (!tool.validate) return { ok: true, value: input };
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
    const tool = await this._tool(k, name);
    if (tool.problem) return { ok: false, error: { text: tool.problem } };
    const sample = this.samples.get(k);
    if (!sample) return { ok: false, error: { text: `the sample of tool ${stringify(name)} has ended` } };
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
    // (an instance still being made when its sample ends is closed once it is)
    for (const [bundle, pending] of sample.instances) pending.then((loaded) => this._closeInstance(bundle, loaded));
  }

  _closeInstance(bundle, loaded) {
    const left = loaded.instance ? loaded.instance.close() : 0;
    if (left && !this.warned.has(bundle)) {
      this.warned.add(bundle);
      const names = Object.keys(this.specs).filter((name) => this.specs[name].module === bundle).sort();
      this.onWarning(`the tool module of ${names.map((n) => stringify(n)).join(", ")} left ${left} timer(s) running when its sample ended; they were stopped (each sample gets a fresh instance of its tools: nothing outlives it)`);
    }
  }
}
