// A persistent custom-evaluator worker (SPEC §4). Started by
// trunchbull/evaluators/pool.py under Node's permission model, with stdout
// and stderr sent to a log file. Requests arrive on stdin, one JSON line each:
//   { "i": <call id>, "module": "<absolute path of the bundle>",
//     "input": { output, caseData, toolCalls, normalizedToolCalls, finishReason, usage } }
// and are evaluated strictly one at a time, in order. Each answer is one JSON
// line on the file descriptor argv[3] (so user code printing to stdout cannot corrupt
// the protocol):
//   { "i", "outcome": "pass" | "fail" | "error", "score", "message", "details", "ms" }
// The deadline (argv[2] ms) is enforced here for asynchronous evaluators; the
// pool enforces it for synchronous ones (an infinite loop never returns to the
// event loop) by replacing this process.
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { toJsonData } from "./json_walk.mjs";

const DEADLINE_MS = Number(process.argv[2] || 5000);
const PROTOCOL_FD = Number(process.argv[3] || 3);
const RESULT_KEYS = new Set(["passed", "score", "message", "details"]);
const modules = new Map();
let current = null; // { fail(reason) } of the call in progress

function errorText(err) {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  try {
    return `a thrown non-Error value: ${typeof err === "string" ? JSON.stringify(err) : String(err)}`;
  } catch {
    return "a thrown value that cannot be printed";
  }
}

function stackOf(err) {
  return err instanceof Error && typeof err.stack === "string" ? err.stack.split("\n").slice(0, 8).join("\n") : null;
}

// A stray exception or rejection (from a timer or an un-awaited promise) fails
// the call in progress instead of killing the worker.
process.on("uncaughtException", (err) => {
  if (current) current.fail(err);
  else process.stderr.write(`trunchbull evaluator worker: uncaught exception between calls: ${errorText(err)}\n`);
});
process.on("unhandledRejection", (err) => {
  if (current) current.fail(err);
  else process.stderr.write(`trunchbull evaluator worker: unhandled rejection between calls: ${errorText(err)}\n`);
});

function loadEvaluate(path) {
  let entry = modules.get(path);
  if (!entry) {
    entry = import(pathToFileURL(path).href).then(
      (mod) => {
        const fn = mod.default && typeof mod.default === "object" ? mod.default.evaluate : undefined;
        if (typeof fn !== "function") {
          return { problem: "the module's default export has no evaluate function" };
        }
        return { fn };
      },
      (err) => ({ problem: `cannot load the evaluator module: ${errorText(err)}` }),
    );
    modules.set(path, entry);
  }
  return entry;
}

function describe(value) {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isNaN(value) ? "NaN" : `the number ${value}`;
  if (typeof value === "string") {
    const text = value.length > 40 ? `${value.slice(0, 39)}…` : value;
    return `the string ${JSON.stringify(text)}`;
  }
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return `an instance of ${value.constructor?.name || "a class"}`;
    return "an object";
  }
  return `a ${typeof value}`;
}

const SHAPE = "expected a boolean or { passed: boolean, score?: number in [0, 1], message?: string, details?: JSON }";

// The evaluator's return value → a result, or { invalid: reason }.
function checkResult(value) {
  if (typeof value === "boolean") {
    return { outcome: value ? "pass" : "fail", score: value ? 1 : 0, message: null, details: null };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { invalid: `returned ${describe(value)}; ${SHAPE}` };
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return { invalid: `returned ${describe(value)}; ${SHAPE}` };
  for (const key of Object.keys(value)) {
    if (!RESULT_KEYS.has(key)) return { invalid: `returned an object with unknown key ${JSON.stringify(key)}; ${SHAPE}` };
  }
  const { passed, score, message, details } = value;
  if (typeof passed !== "boolean") return { invalid: `returned passed = ${describe(passed)}; passed must be a boolean` };
  let finalScore = passed ? 1 : 0;
  if (score !== undefined) {
    if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 1) {
      return { invalid: `returned score = ${describe(score)}; score must be a number in [0, 1]` };
    }
    finalScore = score;
  }
  if (message !== undefined && message !== null && typeof message !== "string") {
    return { invalid: `returned message = ${describe(message)}; message must be a string` };
  }
  let finalDetails = null;
  if (details !== undefined) {
    const walked = toJsonData(details);
    if (walked.functions.length) {
      return { invalid: `returned details with a function at details${pathSuffix(walked.functions[0])}; details must be JSON data` };
    }
    if (walked.errors.length) {
      const { path, problem } = walked.errors[0];
      return { invalid: `returned details that are not JSON data: at details${pathSuffix(path)}, ${problem}` };
    }
    finalDetails = walked.value;
  }
  return { outcome: passed ? "pass" : "fail", score: finalScore, message: message ?? null, details: finalDetails };
}

function pathSuffix(path) {
  if (!path || path === "(root)") return "";
  return path.startsWith("[") ? path : `.${path}`;
}

function errorResult(message, details = null) {
  return { outcome: "error", score: null, message, details };
}

async function runCall(request) {
  const loaded = await loadEvaluate(request.module);
  if (loaded.problem) return errorResult(loaded.problem);
  let timer;
  const stop = new Promise((resolve) => {
    current = { fail: (err) => resolve(errorResult(`the evaluator failed asynchronously: ${errorText(err)}`, { stack: stackOf(err) })) };
    timer = setTimeout(() => resolve(errorResult(`the evaluator did not finish within the ${DEADLINE_MS / 1000} s deadline`)), DEADLINE_MS);
  });
  const started = performance.now();
  const work = (async () => {
    let value;
    try {
      value = await loaded.fn(request.input);
    } catch (err) {
      return errorResult(`the evaluator threw ${errorText(err)}`, { stack: stackOf(err) });
    }
    if (performance.now() - started > DEADLINE_MS) {
      return errorResult(`the evaluator did not finish within the ${DEADLINE_MS / 1000} s deadline`);
    }
    const checked = checkResult(value);
    return checked.invalid ? errorResult(`invalid result: the evaluator ${checked.invalid}`) : checked;
  })();
  try {
    return await Promise.race([work, stop]);
  } finally {
    clearTimeout(timer);
    current = null;
  }
}

function send(obj) {
  let line;
  try {
    line = JSON.stringify(obj);
  } catch (err) {
    line = JSON.stringify({ i: obj.i, outcome: "error", score: null, message: `cannot serialize the result: ${errorText(err)}`, details: null, ms: obj.ms });
  }
  const buf = Buffer.from(line + "\n");
  let offset = 0;
  while (offset < buf.length) offset += writeSync(PROTOCOL_FD, buf, offset);
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line) continue;
  const request = JSON.parse(line);
  const started = performance.now();
  let result;
  try {
    result = await runCall(request);
  } catch (err) {
    result = errorResult(`the evaluator worker failed: ${errorText(err)}`);
  }
  result.i = request.i;
  result.ms = Math.round((performance.now() - started) * 1000) / 1000;
  send(result);
}
