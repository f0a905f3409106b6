// A fresh instance of a release bundle, in a V8 context of its own, each time
// one is asked for: module-level state, patched globals and prototypes
// (Array.prototype, JSON, globalThis …) and timers of one instance are
// invisible to every other, and are released with it. Needs
// --experimental-vm-modules and --experimental-import-meta-resolve.
//
// The bundle is read and compiled once (its code cache is reused for every
// instance: no re-read, no re-parse). Its imports (the release's runtime
// dependencies, Node's built-ins) are resolved as Node would resolve them for
// the bundle's own path, loaded once in this realm and shared by every
// instance, so a dependency's own state is not per instance; the bundle's
// code, and everything it defines, is.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";

// Dead instances are collected by a major GC of our own (incremental, as
// V8's own) once the heap has grown by GC_GROWTH (or half its live size, if
// larger) past what the last one left: left to V8's heuristics, a heap of dead
// contexts grows to hundreds of MB before it is collected (a GC that finds
// many contexts still referenced makes V8 raise its limit). Measured
// (bench/README.md, "Isolation"): ~115-145 MiB RSS per executor instead of
// ~450, for ~0.1 ms more CPU per instance. `gc` is taken from a context made
// while --expose-gc is set, and the flag is cleared at once: no instance's
// context (nor this realm's global) has it.
const GC_GROWTH = 24 * 2 ** 20;
const CHECK_EVERY = 8; // closed instances between two looks at the heap
const collect = (() => {
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc");
    return typeof gc === "function" ? gc : null;
  } catch {
    return null;
  } finally {
    v8.setFlagsFromString("--no-expose-gc");
  }
})();
const usedHeap = () => v8.getHeapStatistics().used_heap_size;
let heapFloor = usedHeap();
let closed = 0;
let collecting = false;

function collectDead() {
  if (collect === null || collecting || ++closed % CHECK_EVERY !== 0) return;
  if (usedHeap() < heapFloor + Math.max(GC_GROWTH, heapFloor / 2)) return;
  collecting = true;
  const done = () => {
    collecting = false;
    heapFloor = usedHeap();
  };
  try {
    Promise.resolve(collect({ type: "major", execution: "async" })).then(done, done);
  } catch {
    done();
  }
}

// The web and Node globals a fresh context lacks (console, fetch, URL,
// TextEncoder, Buffer, process …), given to every instance; timers are the
// instance's own (below).
const TIMERS = new Set(["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate"]);
const SKIP = new Set(["global", "globalThis", ...TIMERS]);
// A fresh context has a console of its own, V8's, which prints nothing (it
// speaks to an inspector only): the host's is given instead, so what user
// code prints goes to its process's log.
const HOST_ANYWAY = new Set(["console"]);
const hostGlobals = (() => {
  const fresh = new Set(vm.runInNewContext("Object.getOwnPropertyNames(globalThis)"));
  const out = [];
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if ((fresh.has(name) && !HOST_ANYWAY.has(name)) || SKIP.has(name)) continue;
    try {
      out.push([name, globalThis[name]]);
    } catch {
      // a lazy global that cannot be read here
    }
  }
  return out;
})();

const host = { setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate };

// An instance's timers: every one is cleared when the instance is closed, and
// none can be started after that.
function ownTimers(open) {
  const start = (set, clear) => (fn, ...rest) => {
    if (open.closed) return undefined;
    const handle = set((...args) => {
      if (set !== host.setInterval) open.handles.delete(handle);
      if (!open.closed && typeof fn === "function") fn(...args);
    }, ...rest);
    open.handles.set(handle, clear);
    return handle;
  };
  const stop = (clear) => (handle) => {
    open.handles.delete(handle);
    clear(handle);
  };
  return {
    setTimeout: start(host.setTimeout, host.clearTimeout),
    clearTimeout: stop(host.clearTimeout),
    setInterval: start(host.setInterval, host.clearInterval),
    clearInterval: stop(host.clearInterval),
    setImmediate: start(host.setImmediate, host.clearImmediate),
    clearImmediate: stop(host.clearImmediate),
  };
}

// esbuild's ESM output (what the compiler writes: `import` statements at the
// top, one `export { … };`, each at the start of a line) as the body of an
// async function: a classic script compiled once and run in every new
// context. (V8 never frees a vm.SourceTextModule's context, ~0.15 MB each:
// 25,000 samples would hold ~4 GB; a script's context goes with its last
// reference.) Anything else in that position: null, and the module is
// instantiated as a vm.SourceTextModule instead.
const IMPORT = /^import\s+(?:([\w$]+)\s*,?\s*)?(?:\{([^}]*)\}|\*\s*as\s+([\w$]+))?\s*(?:from\s*)?("[^"\n]*"|'[^'\n]*');?[ \t]*$/gm;
const EXPORT = /^export\s*\{([^}]*)\};?[ \t]*$/gm;
const LEFT = /^(?:import|export)\b/m;

function bindings(list, exporting) {
  const out = [];
  for (const raw of list.split(",")) {
    const item = raw.trim();
    if (!item) continue;
    const [name, alias] = item.split(/\s+as\s+/);
    if (exporting) out.push(`${JSON.stringify(alias ?? name)}: ${name}`);
    else out.push(`${name.startsWith('"') || name.startsWith("'") ? `[${name}]` : name}: ${alias ?? name}`);
  }
  return out.join(", ");
}

export function scriptOf(text) {
  const specifiers = [];
  let exports = null;
  let body = text.replace(IMPORT, (_, fallback, names, star, quoted) => {
    const specifier = JSON.parse(quoted[0] === "'" ? `"${quoted.slice(1, -1)}"` : quoted);
    const index = specifiers.push(specifier) - 1;
    const from = `__tb_imports[${index}]`;
    const parts = [];
    if (fallback) parts.push(`const ${fallback} = ${from}.default;`);
    if (names !== undefined) parts.push(`const { ${bindings(names, false)} } = ${from};`);
    if (star) parts.push(`const ${star} = ${from};`);
    return parts.join(" ");
  });
  body = body.replace(EXPORT, (_, names) => {
    exports = exports === null ? bindings(names, true) : `${exports}, ${bindings(names, true)}`;
    return "";
  });
  if (LEFT.test(body)) return null;
  body = body.replaceAll("import.meta", "__tb_meta");
  return {
    code: `(async function (__tb_imports, __tb_meta) {"use strict";\n${body}\nreturn { __proto__: null, ${exports ?? ""} };\n})`,
    specifiers,
  };
}

export class ModuleSource {
  constructor(path) {
    this.path = path;
    this.url = pathToFileURL(path).href;
    this.text = readFileSync(path, "utf8");
    this.cachedData = undefined;
    this.externals = new Map(); // specifier → Promise of this realm's module namespace
    const script = scriptOf(this.text);
    this.specifiers = script?.specifiers;
    this.script = script
      ? new vm.Script(script.code, {
          filename: path,
          importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
        })
      : null;
  }

  _external(specifier) {
    let entry = this.externals.get(specifier);
    if (!entry) {
      entry = import(import.meta.resolve(specifier, this.url));
      this.externals.set(specifier, entry);
    }
    return entry;
  }

  async _synthetic(specifier, context) {
    const namespace = await this._external(specifier);
    const names = Object.keys(namespace);
    return new vm.SyntheticModule(names, function () {
      for (const name of names) this.setExport(name, namespace[name]);
    }, { context, identifier: `${specifier} (shared)` });
  }

  // A new instance: { namespace, realm (its plain prototypes), close() → how many timers it left running }.
  // `beforeEvaluate` runs once the instance is linked, just before its top-level code.
  async instantiate(beforeEvaluate = () => {}) {
    const open = { closed: false, handles: new Map() };
    const context = vm.createContext(vm.constants.DONT_CONTEXTIFY);
    // (read before any of the module's code runs: it cannot have replaced them)
    const realm = { objectPrototype: context.Object.prototype, arrayPrototype: context.Array.prototype };
    for (const [name, value] of hostGlobals) context[name] = value;
    Object.assign(context, ownTimers(open));
    const close = () => {
      open.closed = true;
      const left = open.handles.size;
      for (const [handle, clear] of open.handles) clear(handle);
      open.handles.clear();
      collectDead();
      return left;
    };
    if (this.script) {
      const imports = await Promise.all(this.specifiers.map((specifier) => this._external(specifier)));
      const run = this.script.runInContext(context);
      beforeEvaluate();
      let namespace;
      try {
        namespace = await run(imports, { __proto__: null, url: this.url });
      } catch (err) {
        close();
        throw err;
      }
      return { namespace, realm, close };
    }
    const link = (specifier) => this._synthetic(specifier, context);
    const module = new vm.SourceTextModule(this.text, {
      context,
      identifier: this.url,
      cachedData: this.cachedData,
      initializeImportMeta: (meta) => {
        meta.url = this.url;
      },
      importModuleDynamically: async (specifier) => {
        const dynamic = await link(specifier);
        await dynamic.link(() => {});
        await dynamic.evaluate();
        return dynamic;
      },
    });
    if (this.cachedData === undefined) this.cachedData = module.createCachedData();
    await module.link(link);
    beforeEvaluate();
    await module.evaluate();
    return { namespace: module.namespace, realm, close };
  }
}
