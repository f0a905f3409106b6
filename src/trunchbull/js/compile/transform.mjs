// Runs one case transformer (SPEC §3.7) in a sandboxed Node process (the
// caller sets the permission model, deadline, memory cap, environment and
// working directory). Request: JSON file argv[2] =
//   { bundleFile, maxCases, send: "lines" | "digest", sources: [{ name, file, path, sha256 }] }
// Response on stdout (node/protocol.py: TRANSFORMER), either
//   response <TAB> { ok: false, stage: "export" | "transform" | "result" | "sandbox", problems?, error?, count? },
//   response <TAB> { ok: true, name, result: { value, functions, errors }, count } when the
//     returned value is not clean JSON data or not an array (the caller reports why), or
//   the usual, streamed form: response <TAB> { ok: true, name, count, stream: send }, then
//     (send "lines") `count` raw lines each holding one case's JSON, so the caller
//     validates cases while the rest are still being written, then
//     end <TAB> { end: true, sha256, violation? }: sha256 over the case lines.
// In lines mode a case found not to be plain JSON data on the way ends the
// stream with the line "aborted" (not JSON), and the one-line response with
// the walk's findings follows.
// With send "digest" the lines are held back. After the trailer (either
// mode, unless there are no cases) the process reads stdin: a line "lines"
// gets it to write the lines and the trailer (again), which the caller asks
// for only when the two runs' digests differ; end of input lets it exit. It
// exits right after its response, whatever the user code left pending, and
// the caller may stop it as soon as the response is complete.
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { readFileSync, readSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { pathToFileURL } from "node:url";
import {
  ArrayIsArray, JSONParse, JSONStringify, ObjectKeys, RegExpExec, StringToWellFormed, append, errorText, exitProcess,
  list,
} from "../shared/intrinsics.mjs";
import { blockOnFullPipes } from "../shared/blocking_output.mjs";
import { NOT_PLAIN, checkJsonData, elementChecker, plainStringifySafe, toJsonData } from "../shared/json_walk.mjs";

// Everything the response is made with is taken before user code runs,
// which may replace globals and pollute prototypes (see intrinsics.mjs).
const uncurry = Function.prototype.call.bind.bind(Function.prototype.call);
const require = createRequire(import.meta.url);
const request = JSONParse(readFileSync(process.argv[2], "utf8"));
const bundleUrl = pathToFileURL(request.bundleFile).href;
const writeOut = process.stdout.write.bind(process.stdout);
const onceDrain = (handler) => uncurry(EventEmitter.prototype.once)(process.stdout, "drain", handler);
const newHash = () => createHash("sha256");
const hashProto = Object.getPrototypeOf(newHash());
const hashUpdate = uncurry(hashProto.update);
const hashHex = (hash) => uncurry(hashProto.digest)(hash, "hex");
const BufferAllocUnsafe = Buffer.allocUnsafe;
const BufferAlloc = Buffer.alloc;
const BufferFrom = Buffer.from;
const bufferWrite = uncurry(Buffer.prototype.write);
const subarray = uncurry(Object.getPrototypeOf(Uint8Array.prototype).subarray);
const stringify = JSONStringify;
const ReflectApply = Reflect.apply;
const listOf = (item) => {
  const items = list();
  append(items, item);
  return items;
};
const STREAM_CHUNK = 1 << 20;

// --- The varied clock: run 2 sees Date shifted by TRUNCHBULL_CLOCK_OFFSET_MS.
const offset = Number(process.env.TRUNCHBULL_CLOCK_OFFSET_MS || 0);
delete process.env.TRUNCHBULL_CLOCK_OFFSET_MS;
if (offset) {
  const RealDate = Date;
  const now = () => RealDate.now() + offset;
  function ShiftedDate(...args) {
    if (!new.target) return new RealDate(now()).toString();
    return Reflect.construct(RealDate, args.length ? args : [now()], new.target);
  }
  ShiftedDate.prototype = RealDate.prototype;
  ShiftedDate.now = now;
  ShiftedDate.parse = RealDate.parse;
  ShiftedDate.UTC = RealDate.UTC;
  Object.defineProperty(ShiftedDate, "name", { value: "Date" });
  Object.defineProperty(RealDate.prototype, "constructor", { value: ShiftedDate, writable: true, configurable: true });
  globalThis.Date = ShiftedDate;
}

// --- The varied identity: os.userInfo() follows USER and HOME, which differ
// between the two runs (the uid cannot be changed without privileges).
const os = require("node:os");
const realUserInfo = os.userInfo;
os.userInfo = function userInfo(options) {
  const info = realUserInfo.call(os, options);
  return { ...info, username: process.env.USER ?? info.username, homedir: process.env.HOME ?? info.homedir };
};

// --- Record every attempt at a forbidden operation. The permission model
// refuses them anyway; recording makes the run fail even when user code
// catches the refusal and carries on.
const violations = list();
function guard(mod, modName, names, what, isWrite = () => true) {
  for (const name of names) {
    const original = mod[name];
    if (typeof original !== "function") continue;
    const wrapped = function (...args) {
      if (isWrite(args)) append(violations, `${what} (${modName}.${name})`);
      return new.target ? Reflect.construct(original, args, new.target) : original.apply(this, args);
    };
    Object.defineProperty(wrapped, "name", { value: name });
    if (original.prototype) wrapped.prototype = original.prototype;
    mod[name] = wrapped;
  }
}
const WRITE_FNS = ["writeFile", "writeFileSync", "appendFile", "appendFileSync", "mkdir", "mkdirSync", "mkdtemp",
  "mkdtempSync", "rm", "rmSync", "rmdir", "rmdirSync", "unlink", "unlinkSync", "rename", "renameSync", "copyFile",
  "copyFileSync", "cp", "cpSync", "symlink", "symlinkSync", "link", "linkSync", "truncate", "truncateSync",
  "chmod", "chmodSync", "chown", "chownSync", "utimes", "utimesSync", "createWriteStream"];
const opensForWrite = (args) => typeof args[1] === "string" ? RegExpExec(/[wa+]/, args[1]) !== null : typeof args[1] === "number" && (args[1] & 3) !== 0;
const fs = require("node:fs");
guard(fs, "fs", WRITE_FNS, "a file write");
guard(fs, "fs", ["open", "openSync"], "a file write", opensForWrite);
guard(fs.promises, "fs.promises", WRITE_FNS, "a file write");
guard(fs.promises, "fs.promises", ["open"], "a file write", opensForWrite);
guard(require("node:child_process"), "child_process",
  ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"], "starting a child process");
guard(require("node:worker_threads"), "worker_threads", ["Worker"], "starting a worker thread");
// Direct writes to fd 1 (fs.writeSync(1, …)) would corrupt the response
// channel: they go to stderr instead.
for (const name of ["write", "writeSync", "writev", "writevSync"]) {
  const original = fs[name];
  fs[name] = function (fd, ...rest) {
    return original.call(this, fd === 1 ? 2 : fd, ...rest);
  };
  Object.defineProperty(fs[name], "name", { value: name });
}
syncBuiltinESMExports();

// User output must not corrupt the response channel: console and
// process.stdout go to stderr.
blockOnFullPipes(process.stderr); // (stdout, the protocol, has a pipe of its own)
process.stdout.write = process.stderr.write.bind(process.stderr);
for (const level of ["log", "info", "debug", "table", "dir"]) console[level] = console.error;

function finish(response) {
  if (violations.length) response = { __proto__: null, ok: false, stage: "sandbox", error: violations[0], name: response.name };
  // Exit only once the (possibly large) response is flushed: a pipe write
  // that does not fit the pipe buffer completes asynchronously.
  writeOut("\nresponse\t" + stringify(response) + "\n", () => exitProcess(0));
}

// Writes the chunks `next()` yields until it yields null, waiting for the
// pipe to drain so memory stays flat while the caller reads; then `done()`
// (with NOT_PLAIN when `next()` gave that instead of a chunk).
function pump(next, done) {
  for (let chunk = next(); chunk !== null; chunk = next()) {
    if (chunk === NOT_PLAIN) return done(NOT_PLAIN);
    if (!writeOut(chunk)) return void onceDrain(() => pump(next, done));
  }
  done();
}

// The case lines, about 1 MiB at a time, each chunk hashed as it is handed
// out; null at the end. Each case's JSON is encoded straight into the chunk
// (a UTF-16 code unit takes at most 3 bytes of UTF-8), which is cheaper than
// concatenating strings and encoding the result. With `check`
// (elementChecker), each case is walked just before it is serialized, and a
// case that is not plain JSON data ends the chunks early: NOT_PLAIN.
function lineChunks(cases, hash, check = null) {
  let i = 0;
  return () => {
    if (i >= cases.length) return null;
    const chunk = BufferAllocUnsafe(2 * STREAM_CHUNK);
    let used = 0;
    // User code cannot run within a chunk, but may between chunks (while
    // the pipe drains): whether native JSON.stringify is exact for plain
    // data is decided per chunk.
    const native = plainStringifySafe();
    while (i < cases.length && used < STREAM_CHUNK) {
      if (check && check(i) === NOT_PLAIN) return NOT_PLAIN;
      const json = native ? stringify(cases[i]) : stringify(toJsonData(cases[i]).value);
      if (used + 3 * json.length + 1 > chunk.length) {
        if (used) break; // the next chunk
        const alone = BufferFrom(json + "\n", "utf8"); // one case larger than a chunk
        i++;
        hashUpdate(hash, alone);
        return alone;
      }
      used += bufferWrite(chunk, json, used, "utf8");
      chunk[used++] = 10; // "\n"
      i++;
    }
    const bytes = subarray(chunk, 0, used);
    hashUpdate(hash, bytes);
    return bytes;
  };
}

function trailer(hash) {
  const end = { __proto__: null, end: true, sha256: hashHex(hash) };
  if (violations.length) end.violation = violations[0];
  return "end\t" + stringify(end) + "\n";
}

const exit = () => exitProcess(0);

// Whether the caller sent a line (it only ever sends "lines"), read
// blocking: nothing else runs meanwhile. false: end of input.
function readLine() {
  const buffer = BufferAlloc(64);
  for (;;) {
    const n = readSync(0, buffer, 0, buffer.length, null);
    if (n === 0) return false;
    for (let i = 0; i < n; i++) if (buffer[i] === 10) return true;
  }
}

// Writes the case lines and then their trailer; `done` follows.
function sendLines(cases, done) {
  const hash = newHash();
  pump(lineChunks(cases, hash), () => {
    writeOut(trailer(hash));
    done();
  });
}

// The streamed response: header, case lines (or, in digest mode, none yet),
// trailer; then the caller's decision. In lines mode the cases are walked as
// they are streamed (`check`), so the first lines go out without waiting for
// a walk of all of them; a case that is not plain JSON data ends the stream
// with the line "aborted", and the one-line response (the walk's findings)
// follows instead.
function streamCases(name, cases, check) {
  if (violations.length) return finish({ __proto__: null, name });
  const send = request.send === "digest" ? "digest" : "lines";
  writeOut("\nresponse\t" + stringify({ __proto__: null, ok: true, name, count: cases.length, stream: send }) + "\n");
  if (!cases.length) return void writeOut(trailer(newHash()), exit);
  if (send === "lines") {
    const hash = newHash();
    return pump(lineChunks(cases, hash, check), (stopped) => {
      if (stopped !== NOT_PLAIN) {
        writeOut(trailer(hash));
        return answerRequest(cases);
      }
      writeOut("aborted\n"); // not JSON, so never taken for a case line
      finish({ __proto__: null, ok: true, name, result: toJsonData(cases), count: cases.length });
    });
  }
  // Digest mode: the lines are hashed, not kept (58 MiB at the case limit);
  // asked for, they are made again from the same cases.
  const hash = newHash();
  const next = lineChunks(cases, hash);
  while (next() !== null);
  writeOut(trailer(hash));
  answerRequest(cases);
}

// After the trailer: the lines (again) on request ("lines"), or exit at the
// end of input. The request is read blocking, so work the user code left
// pending cannot run (and hold up the answer) meanwhile. (Pipe writes on
// Linux are synchronous, so the trailer is out before this blocks.)
function answerRequest(cases) {
  if (!readLine()) return exit();
  sendLines(cases, exit);
}

const EXPORT_KEYS = ["name", "transform"];

// The sources, read before the transformer module is imported (so before any
// user code runs). Read as bytes, then decoded: ~40 ms faster on 50 MiB than
// readFileSync(file, "utf8").
function readSources() {
  const sources = {};
  for (let i = 0; i < request.sources.length; i++) {
    const s = request.sources[i];
    sources[s.name] = Object.freeze({ content: readFileSync(s.file).toString("utf8"), path: s.path, sha256: s.sha256 });
  }
  return Object.freeze(sources);
}

const kindOf = (value) => (value === null ? "null" : ArrayIsArray(value) ? "an array" : typeof value);

async function main() {
  const sources = readSources();
  let mod;
  try {
    mod = await import(bundleUrl);
  } catch (err) {
    if (err && err.code === "ERR_ACCESS_DENIED") return finish({ __proto__: null, ok: false, stage: "sandbox", error: errorText(err) });
    return finish({ __proto__: null, ok: false, stage: "export", problems: listOf(`importing the module failed: ${errorText(err)}`) });
  }
  const problems = list();
  let exported, name, transform;
  try {
    exported = mod.default;
    if (!("default" in mod)) append(problems, "the module has no default export; export default { name, transform }");
    else if (exported === null || typeof exported !== "object" || ArrayIsArray(exported)) {
      append(problems, `the default export must be an object { name, transform }, found ${kindOf(exported)}`);
    } else {
      const keys = ObjectKeys(exported);
      for (let i = 0; i < keys.length; i++) {
        if (keys[i] !== "name" && keys[i] !== "transform") {
          append(problems, `unknown key ${JSONStringify(StringToWellFormed(keys[i]))} in the default export (allowed: name, transform)`);
        }
      }
      if (!("name" in exported)) append(problems, "the default export lacks name");
      transform = exported.transform;
      if (typeof transform !== "function") {
        append(problems, `transform must be a function, found ${"transform" in exported ? kindOf(transform) : "nothing"}`);
      }
      name = exported.name;
    }
  } catch (err) {
    append(problems, `reading the default export failed: ${errorText(err)}`);
  }
  const shownName = typeof name === "string" ? StringToWellFormed(name) : null;
  if (problems.length) return finish({ __proto__: null, ok: false, stage: "export", problems, name: shownName });
  if (typeof name !== "string") {
    return finish({ __proto__: null, ok: false, stage: "export", problems: listOf(`name must be a string, found ${kindOf(name)}`), name: null });
  }
  name = shownName;
  let returned;
  try {
    returned = await ReflectApply(transform, exported, [sources]);
  } catch (err) {
    if (err && err.code === "ERR_ACCESS_DENIED") return finish({ __proto__: null, ok: false, stage: "sandbox", error: errorText(err), name });
    return finish({ __proto__: null, ok: false, stage: "transform", error: errorText(err), name });
  }
  const isArray = ArrayIsArray(returned);
  if (isArray && returned.length > request.maxCases) {
    return finish({ __proto__: null, ok: false, stage: "result", count: returned.length, name });
  }
  if (isArray && request.send === "digest") {
    const found = checkJsonData(returned);
    if (!found.functions.length && !found.errors.length) return streamCases(name, returned);
  } else if (isArray) {
    const check = elementChecker(returned);
    if (check) return streamCases(name, returned, check); // each case walked as it is streamed
  }
  const result = toJsonData(returned);
  finish({ __proto__: null, ok: true, name, result, count: isArray ? returned.length : null });
}

process.on("unhandledRejection", () => {});
main().catch((err) => finish({ __proto__: null, ok: false, stage: "transform", error: errorText(err) }));
