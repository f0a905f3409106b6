// The release's tools at run time (SPEC §8.2): each tool module's bundle is
// imported once per worker (with the release's runtime dependencies beside
// it), and every sample gets AI SDK tools offered with the release's JSON
// Schemas, validated by the tool's own input schema, and executed by the
// tool's own `execute`, wrapped so that
//   * the Python side hears when a tool starts and ends (`onStart`/`onEnd`):
//     a synchronous infinite loop never returns to the event loop, so only
//     the parent can see it and replace the worker;
//   * an asynchronous tool past the tool timeout ends its sample here.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { cappedToolResult } from "./limits.mjs";

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

function errorText(err) {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

export class ToolBox {
  // specs: tool name → { module (absolute bundle path), description, inputSchema }
  constructor(specs, { ai, aiFallback, toolTimeoutMs, maxToolResultBytes, onStart, onEnd }) {
    this.specs = specs;
    this.ai = ai;
    this.aiFallback = aiFallback;
    this.toolTimeoutMs = toolTimeoutMs;
    this.maxToolResultBytes = maxToolResultBytes;
    this.onStart = onStart;
    this.onEnd = onEnd;
    this.modules = new Map(); // bundle path → Promise<{ tools, validators } | { problem }>
    this.counter = 0;
  }

  // Import every tool module before the first sample, so that no sample's
  // latency includes a one-time import. A module that fails to import fails
  // the samples that use its tools, not the worker.
  async preload() {
    const bundles = new Set(Object.values(this.specs).map((spec) => spec.module));
    await Promise.all([...bundles].map((bundle) => this._load(bundle, { k: 0 })));
  }

  _load(bundle, sample) {
    let entry = this.modules.get(bundle);
    if (!entry) {
      const n = ++this.counter;
      this.onStart(sample.k, n); // a module's top-level code may loop too
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
      ).finally(() => this.onEnd(sample.k, n));
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

  // The AI SDK tools of one sample; `sample` = { k, controller, failure }. `entries`: the
  // case's tools, each a release tool name or { tool, as } (that tool offered as `as`).
  async toolsFor(entries, sample) {
    const out = {};
    for (const entry of entries) {
      const name = typeof entry === "string" ? entry : entry.tool;
      const offered = typeof entry === "string" ? entry : entry.as;
      const spec = this.specs[name];
      if (!spec) throw new ToolLoadError(`the release has no tool ${JSON.stringify(name)}`);
      const loaded = await this._load(spec.module, sample);
      if (loaded.problem) throw new ToolLoadError(`tool ${JSON.stringify(name)}: ${loaded.problem}`);
      const original = loaded.tools[name];
      if (!original || typeof original.execute !== "function") {
        throw new ToolLoadError(`tool ${JSON.stringify(name)} is not exported with an execute function by its module`);
      }
      const validate = loaded.validators.get(name);
      out[offered] = this.ai.tool({
        description: spec.description,
        inputSchema: this.ai.jsonSchema(spec.inputSchema, validate ? { validate } : undefined),
        execute: (input, options) => this._execute(name, original, input, options, sample),
      });
    }
    return out;
  }

  _execute(name, original, input, options, sample) {
    const n = ++this.counter;
    this.onStart(sample.k, n);
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => {
        const err = new ToolTimeoutError(name, this.toolTimeoutMs);
        sample.failure ??= err;
        sample.controller.abort(err);
        reject(err);
      }, this.toolTimeoutMs);
    });
    let work;
    try {
      work = Promise.resolve(original.execute(input, options));
    } catch (err) {
      work = Promise.reject(err);
    }
    const capped = work.then((value) => cappedToolResult(value, this.maxToolResultBytes, sample.repairs));
    return Promise.race([capped, deadline]).finally(() => {
      clearTimeout(timer);
      this.onEnd(sample.k, n);
    });
  }
}
