// Imports bundled user modules and reports their exports as JSON data. Runs
// in a sandboxed Node process (permission model, deadline, memory cap set by
// the caller). Request: JSON file argv[2] = { modules: [{ bundleFile, kind }],
// aiFallback }. Response: one JSON line per module, in request order, on
// fd 1. Replies are built and encoded only with built-ins captured before the
// first user module is imported (intrinsics.mjs), so user code that pollutes
// prototypes or globals cannot change them.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import {
  ArrayIsArray, ArraySort, JSONParse, ObjectKeys, ObjectSetPrototypeOf, StringIsWellFormed, StringToWellFormed,
  append, encode, errorText, exitProcess, list, writeAll,
} from "../shared/intrinsics.mjs";
import { toJsonData } from "../shared/json_walk.mjs";
import { blockOnFullPipes } from "../shared/blocking_output.mjs";

const request = JSONParse(readFileSync(process.argv[2], "utf8"));
// Every URL is made now: URL.prototype.href is a getter user code could replace.
const modules = request.modules.map((m) => ({ __proto__: null, kind: m.kind, bundleFile: m.bundleFile,
  url: pathToFileURL(m.bundleFile).href }));
const aiFallbackUrl = pathToFileURL(request.aiFallback).href;
// Module code may print: its output goes to stderr, our protocol keeps fd 1.
blockOnFullPipes(process.stderr); // (stdout, the protocol, has a pipe of its own)
process.stdout.write = process.stderr.write.bind(process.stderr);
for (const level of ["log", "info", "debug", "table", "dir"]) console[level] = console.error;
const aiByUrl = { __proto__: null };

// What a module could pollute for the modules after it (and for Node's own
// internals): the built-in prototypes and namespaces, as they were before
// any user code ran. When a module changed them, the modules after it are
// inspected in a fresh process (the line "polluted" tells the caller).
const WATCHED = [Object.prototype, Array.prototype, String.prototype, Function.prototype, RegExp.prototype,
  Promise.prototype, Number.prototype, Boolean.prototype, Symbol.prototype, Error.prototype, Map.prototype,
  Set.prototype, Object, Array, JSON, Reflect, Promise];
const ReflectOwnKeys = Reflect.ownKeys;
const getDescriptor = Object.getOwnPropertyDescriptor;
const getProto = Object.getPrototypeOf;
function snapshot() {
  const parts = list();
  for (let i = 0; i < WATCHED.length; i++) {
    const target = WATCHED[i];
    const keys = ReflectOwnKeys(target);
    append(parts, getProto(target));
    append(parts, keys.length);
    for (let j = 0; j < keys.length; j++) {
      const d = getDescriptor(target, keys[j]);
      append(parts, keys[j]);
      append(parts, d.value);
      append(parts, d.get);
      append(parts, d.set);
    }
  }
  return parts;
}
const pristine = snapshot();
function polluted() {
  const now = snapshot();
  if (now.length !== pristine.length) return true;
  for (let i = 0; i < now.length; i++) if (now[i] !== pristine[i] && !(now[i] !== now[i] && pristine[i] !== pristine[i])) return true;
  return false;
}

function loadAi(bundleFile) {
  let url = aiFallbackUrl;
  try {
    url = pathToFileURL(createRequire(bundleFile).resolve("ai")).href;
  } catch {
    // the benchmark does not install `ai`: the toolchain's
  }
  if (!(url in aiByUrl)) aiByUrl[url] = import(url);
  return aiByUrl[url];
}

async function inspectTool(name, value, bundleFile) {
  const tool = { __proto__: null, name: StringToWellFormed(name), problems: list() };
  if (!StringIsWellFormed(name)) append(tool.problems, "has a name that is not valid Unicode text (a lone surrogate)");
  if (value === null || typeof value !== "object") {
    append(tool.problems, `is ${value === null ? "null" : typeof value}, not an AI SDK tool object`);
    return tool;
  }
  let description, execute, schema;
  try {
    ({ description, execute } = value);
    schema = value.inputSchema ?? value.parameters;
  } catch (err) {
    append(tool.problems, `could not be read: ${errorText(err)}`);
    return tool;
  }
  if (typeof description === "string") tool.description = StringToWellFormed(description);
  else append(tool.problems, "has no string description");
  if (typeof execute !== "function") append(tool.problems, "has no execute function");
  if (schema === undefined || schema === null) {
    append(tool.problems, "has no inputSchema");
    return tool;
  }
  try {
    const ai = await loadAi(bundleFile);
    const jsonSchema = await ai.asSchema(schema).jsonSchema;
    const walked = toJsonData(jsonSchema);
    if (walked.errors.length || walked.functions.length || walked.value === null || typeof walked.value !== "object"
      || ArrayIsArray(walked.value)) {
      append(tool.problems, "has an inputSchema that does not convert to a JSON Schema object");
    } else tool.inputSchema = walked.value;
  } catch (err) {
    append(tool.problems, "has an inputSchema that is not a schema the AI SDK understands (a zod schema, a Standard "
      + `Schema, or jsonSchema({...})): ${errorText(err)}`);
  }
  return tool;
}

async function inspectModule({ url, bundleFile, kind }) {
  let mod;
  try {
    mod = await import(url);
  } catch (err) {
    return { __proto__: null, ok: false, importError: errorText(err) };
  }
  const exports = ObjectKeys(mod);
  ObjectSetPrototypeOf(exports, null);
  const result = { __proto__: null, ok: true, exports: ArraySort(exports) };
  if (kind === "tool") {
    if (!("tools" in mod)) return result;
    const tools = mod.tools;
    if (tools === null || typeof tools !== "object" || ArrayIsArray(tools)) {
      result.toolsProblem = "the `tools` export must be an object mapping tool names to AI SDK tools";
      return result;
    }
    result.tools = list();
    const names = ObjectKeys(tools);
    for (let i = 0; i < names.length; i++) append(result.tools, await inspectTool(names[i], tools[names[i]], bundleFile));
    return result;
  }
  if ("default" in mod) result.default = toJsonData(mod.default);
  return result;
}

for (let i = 0; i < modules.length; i++) {
  let result;
  try {
    result = await inspectModule(modules[i]);
  } catch (err) {
    result = { __proto__: null, ok: false, importError: errorText(err) };
  }
  writeAll(1, "module\t" + encode(result) + "\n"); // node/protocol.py: INSPECTION
  if (i + 1 < modules.length && polluted()) {
    writeAll(1, "polluted\n");
    exitProcess(0);
  }
}
