// Imports bundled user modules and reports their exports as JSON data. Runs
// in a sandboxed Node process (permission model, deadline, memory cap set by
// the caller). Request: JSON file argv[2] = { modules: [{ bundleFile, kind }],
// aiFallback }. Response: one JSON line per module, in request order.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { toJsonData } from "./json_walk.mjs";

const request = JSON.parse(readFileSync(process.argv[2], "utf8"));
// Module code may print: its output goes to stderr, our protocol keeps stdout.
const writeOut = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
for (const level of ["log", "info", "debug", "table", "dir"]) console[level] = console.error;
const aiCache = new Map();

async function loadAi(bundleFile) {
  let resolved;
  try {
    resolved = createRequire(bundleFile).resolve("ai");
  } catch {
    resolved = request.aiFallback;
  }
  if (!aiCache.has(resolved)) aiCache.set(resolved, import(pathToFileURL(resolved).href));
  return aiCache.get(resolved);
}

function errorText(err) {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

async function inspectTool(name, value, bundleFile) {
  const tool = { name, problems: [] };
  if (value === null || typeof value !== "object") {
    tool.problems.push(`is ${value === null ? "null" : typeof value}, not an AI SDK tool object`);
    return tool;
  }
  if (typeof value.description === "string") tool.description = value.description;
  else tool.problems.push("has no string description");
  if (typeof value.execute !== "function") tool.problems.push("has no execute function");
  const schema = value.inputSchema ?? value.parameters;
  if (schema === undefined || schema === null) {
    tool.problems.push("has no inputSchema");
    return tool;
  }
  try {
    const ai = await loadAi(bundleFile);
    const jsonSchema = await ai.asSchema(schema).jsonSchema;
    const walked = toJsonData(jsonSchema);
    if (walked.errors.length || walked.functions.length || walked.value === null || typeof walked.value !== "object") {
      tool.problems.push("has an inputSchema that does not convert to a JSON Schema object");
    } else tool.inputSchema = walked.value;
  } catch (err) {
    tool.problems.push(`has an inputSchema that is not a schema the AI SDK understands (a zod schema, a Standard Schema, or jsonSchema({...})): ${errorText(err)}`);
  }
  return tool;
}

async function inspectModule({ bundleFile, kind }) {
  let mod;
  try {
    mod = await import(pathToFileURL(bundleFile).href);
  } catch (err) {
    return { ok: false, importError: errorText(err) };
  }
  const result = { ok: true, exports: Object.keys(mod).sort() };
  if (kind === "tool") {
    if (!("tools" in mod)) return result;
    const tools = mod.tools;
    if (tools === null || typeof tools !== "object" || Array.isArray(tools)) {
      result.toolsProblem = "the `tools` export must be an object mapping tool names to AI SDK tools";
      return result;
    }
    result.tools = [];
    for (const name of Object.keys(tools)) result.tools.push(await inspectTool(name, tools[name], bundleFile));
    return result;
  }
  if ("default" in mod) {
    let value = mod.default;
    result.default = toJsonData(value);
  }
  return result;
}

for (const module of request.modules) {
  let result;
  try {
    result = await inspectModule(module);
  } catch (err) {
    result = { ok: false, importError: errorText(err) };
  }
  writeOut(JSON.stringify(result) + "\n");
}
