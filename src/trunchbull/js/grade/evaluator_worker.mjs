// A persistent custom-evaluator worker (SPEC §4). Started by
// trunchbull/evaluators/pool.py under Node's permission model, with stdout
// and stderr sent to its log. Requests arrive on stdin, one JSON line each:
//   { "i": <call id>, "module": "<absolute path of the bundle>",
//     "input": { output, caseData, toolCalls, normalizedToolCalls, finishReason, usage } }
// and are evaluated strictly one at a time, in order. Each answer is one JSON
// line on the file descriptor argv[3] (so user code printing to stdout cannot corrupt
// the protocol):
//   { "i", "outcome": "pass" | "fail" | "error", "score", "message", "details", "ms" }
// The deadline (argv[2] ms) is enforced here for asynchronous evaluators; the
// pool enforces it for synchronous ones (an infinite loop never returns to the
// event loop) by replacing this process.
// Answers are built and encoded only with built-ins captured before any
// evaluator module is imported (intrinsics.mjs): prototype pollution by user
// code cannot change them.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import {
  ArrayIsArray, JSONParse, JSONStringify, NumberIsFinite, ObjectGetPrototypeOf, ObjectHasOwn, ObjectKeys,
  StringCharCodeAt, StringSlice, StringToWellFormed, admitRealm, clip, encode, errorText, isPlainObjectPrototype,
  isNativeError, writeAll,
} from "../shared/intrinsics.mjs";
import { toJsonData } from "../shared/json_walk.mjs";
import { ModuleSource } from "../shared/fresh_module.mjs";
import { blockOnFullPipes } from "../shared/blocking_output.mjs";

blockOnFullPipes(process.stdout, process.stderr); // (the log: what user code prints)
const DEADLINE_MS = Number(process.argv[2] || 5000);
const PROTOCOL_FD = Number(process.argv[3] || 3);
const uncurry = Function.prototype.call.bind.bind(Function.prototype.call);
const PromiseCtor = Promise;
const promiseThen = uncurry(Promise.prototype.then);
const now = performance.now.bind(performance);
const MathRound = Math.round;
const setTimer = setTimeout;
const clearTimer = clearTimeout;
const sources = { __proto__: null }; // bundle path → its ModuleSource, or { problem }
let current = null; // { fail(reason) } of the call in progress

function stackOf(err) {
  try {
    const stack = isNativeError(err) ? err.stack : null;
    if (typeof stack !== "string") return null;
    let lines = 0;
    for (let i = 0; i < stack.length; i++) {
      if (StringCharCodeAt(stack, i) === 10 && ++lines === 8) return clip(StringSlice(stack, 0, i));
    }
    return clip(stack);
  } catch {
    return null;
  }
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

// Every call gets a fresh instance of its module, in a V8 context of its own
// (fresh_module.mjs: compiled once, its code cache reused), so that no call
// sees what another left in the module, its globals or its prototypes.
function sourceOf(path) {
  let source = sources[path];
  if (!source) {
    try {
      source = new ModuleSource(path);
    } catch (err) {
      source = { __proto__: null, problem: `cannot load the evaluator module: ${errorText(err)}` };
    }
    sources[path] = source;
  }
  return source;
}

async function loadEvaluate(path) {
  const source = sourceOf(path);
  if (source.problem) return source;
  let instance;
  try {
    instance = await source.instantiate();
  } catch (err) {
    return { __proto__: null, problem: `cannot load the evaluator module: ${errorText(err)}` };
  }
  try {
    const exported = instance.namespace.default;
    const fn = exported && typeof exported === "object" ? exported.evaluate : undefined;
    if (typeof fn !== "function") {
      instance.close();
      return { __proto__: null, problem: "the module's default export has no evaluate function" };
    }
    return { __proto__: null, fn, instance };
  } catch (err) {
    instance.close();
    return { __proto__: null, problem: `cannot read the evaluator module's default export: ${errorText(err)}` };
  }
}

function describe(value) {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "number") return value !== value ? "NaN" : `the number ${value}`;
  if (typeof value === "string") {
    const text = value.length > 40 ? `${StringSlice(value, 0, 39)}…` : value;
    return `the string ${JSONStringify(StringToWellFormed(text))}`;
  }
  if (typeof value === "function") return "a function";
  if (ArrayIsArray(value)) return "an array";
  if (typeof value === "object") {
    const proto = ObjectGetPrototypeOf(value);
    if (!isPlainObjectPrototype(proto)) {
      let name;
      try {
        name = value.constructor?.name;
      } catch {
        name = undefined;
      }
      return `an instance of ${typeof name === "string" && name ? clip(name, 80) : "a class"}`;
    }
    return "an object";
  }
  return `a ${typeof value}`;
}

const SHAPE = "expected a boolean or { passed: boolean, score?: number in [0, 1], message?: string, details?: JSON }";

const invalid = (reason) => ({ __proto__: null, invalid: reason });

// The evaluator's return value → a result, or { invalid: reason }.
function checkResult(value) {
  if (typeof value === "boolean") {
    return { __proto__: null, outcome: value ? "pass" : "fail", score: value ? 1 : 0, message: null, details: null };
  }
  if (value === null || typeof value !== "object" || ArrayIsArray(value)) return invalid(`returned ${describe(value)}; ${SHAPE}`);
  const proto = ObjectGetPrototypeOf(value);
  if (!isPlainObjectPrototype(proto)) return invalid(`returned ${describe(value)}; ${SHAPE}`);
  const keys = ObjectKeys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key !== "passed" && key !== "score" && key !== "message" && key !== "details") {
      return invalid(`returned an object with unknown key ${JSONStringify(StringToWellFormed(key))}; ${SHAPE}`);
    }
  }
  // Own properties only: a polluted Object.prototype must not supply a score.
  const own = (key) => (ObjectHasOwn(value, key) ? value[key] : undefined);
  const passed = own("passed");
  const score = own("score");
  const message = own("message");
  const details = own("details");
  if (typeof passed !== "boolean") return invalid(`returned passed = ${describe(passed)}; passed must be a boolean`);
  let finalScore = passed ? 1 : 0;
  if (score !== undefined) {
    if (typeof score !== "number" || !NumberIsFinite(score) || score < 0 || score > 1) {
      return invalid(`returned score = ${describe(score)}; score must be a number in [0, 1]`);
    }
    finalScore = score;
  }
  if (message !== undefined && message !== null && typeof message !== "string") {
    return invalid(`returned message = ${describe(message)}; message must be a string`);
  }
  let finalDetails = null;
  if (details !== undefined) {
    const walked = toJsonData(details);
    if (walked.functions.length) {
      return invalid(`returned details with a function at details${pathSuffix(walked.functions[0])}; details must be JSON data`);
    }
    if (walked.errors.length) {
      const { path, problem } = walked.errors[0];
      return invalid(`returned details that are not JSON data: at details${pathSuffix(path)}, ${problem}`);
    }
    finalDetails = walked.value;
  }
  return { __proto__: null, outcome: passed ? "pass" : "fail", score: finalScore,
    message: message === undefined || message === null ? null : StringToWellFormed(message), details: finalDetails };
}

function pathSuffix(path) {
  if (!path || path === "(root)") return "";
  return path[0] === "[" ? path : `.${path}`;
}

// Node's fetch fails with a bare "TypeError: fetch failed", its reason in
// `cause`: the reason is added, and when it is one of the errors the sandbox's
// network namespace gives (no interfaces, no DNS), what it means.
function isNoNetwork(code) {
  return code === "EAI_AGAIN" || code === "ENETUNREACH" || code === "ENETDOWN" || code === "EHOSTUNREACH"
    || code === "EPERM" || code === "EACCES";
}

function thrownText(err) {
  const text = errorText(err);
  try {
    if (!isNativeError(err) || err.name !== "TypeError" || err.message !== "fetch failed") return text;
    const cause = err.cause;
    if (cause === undefined || cause === null) return text;
    const code = typeof cause === "object" ? cause.code : undefined;
    const why = isNoNetwork(code)
      ? ": custom evaluators run in a sandbox without network access (fetch and every other connection fail)"
      : "";
    return clip(`${text} (${errorText(cause)})${why}`);
  } catch {
    return text;
  }
}

function errorResult(message, details = null) {
  return { __proto__: null, outcome: "error", score: null, message, details };
}

// The first of two promises to settle (Promise.race, without the array
// iteration and the lookups user code could hook).
function race(a, b) {
  return new PromiseCtor((resolve, reject) => {
    promiseThen(a, resolve, reject);
    promiseThen(b, resolve, reject);
  });
}

async function runCall(request) {
  const loaded = await loadEvaluate(request.module);
  if (loaded.problem) return errorResult(loaded.problem);
  const leaveRealm = admitRealm(loaded.instance.realm); // its plain objects are plain data
  try {
    return await callOnce(loaded, request);
  } finally {
    leaveRealm();
    loaded.instance.close();
  }
}

async function callOnce(loaded, request) {
  let timer;
  const stop = new PromiseCtor((resolve) => {
    current = { __proto__: null, fail: (err) => resolve(errorResult(`the evaluator failed asynchronously: ${thrownText(err)}`,
      { __proto__: null, stack: stackOf(err) })) };
    timer = setTimer(() => resolve(errorResult(`the evaluator did not finish within the ${DEADLINE_MS / 1000} s deadline`)), DEADLINE_MS);
  });
  const started = now();
  const work = (async () => {
    let value;
    try {
      value = await loaded.fn(request.input);
    } catch (err) {
      return errorResult(`the evaluator threw ${thrownText(err)}`, { __proto__: null, stack: stackOf(err) });
    }
    if (now() - started > DEADLINE_MS) {
      return errorResult(`the evaluator did not finish within the ${DEADLINE_MS / 1000} s deadline`);
    }
    const checked = checkResult(value);
    return checked.invalid ? errorResult(`invalid result: the evaluator ${checked.invalid}`) : checked;
  })();
  try {
    return await race(work, stop);
  } finally {
    clearTimer(timer);
    current = null;
  }
}

function send(answer) {
  let line;
  try {
    line = encode(answer);
  } catch (err) {
    line = encode({ __proto__: null, i: answer.i, outcome: "error", score: null,
      message: `cannot serialize the result: ${errorText(err)}`, details: null, ms: answer.ms });
  }
  writeAll(PROTOCOL_FD, "answer\t" + line + "\n"); // node/protocol.py: EVALUATOR
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line) continue;
  const request = JSONParse(line);
  const started = now();
  let result;
  try {
    result = await runCall(request);
  } catch (err) {
    result = errorResult(`the evaluator worker failed: ${errorText(err)}`);
  }
  const answer = { __proto__: null, i: request.i, outcome: result.outcome, score: result.score, message: result.message,
    details: result.details, ms: MathRound((now() - started) * 1000) / 1000 };
  send(answer);
}
