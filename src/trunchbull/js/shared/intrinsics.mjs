// Built-ins captured when this module is evaluated, before any user code
// runs, so that what the protocol code calls cannot be replaced by user code
// that pollutes prototypes or globals (Object.prototype.toJSON, a getter on
// Array.prototype, a new JSON.stringify, String.prototype methods …). The
// replies built from these are null-prototype objects and arrays holding
// primitives: JSONStringify then finds no toJSON and no getter on the way,
// so nothing user code did can change the bytes it writes.
import { writeSync } from "node:fs";
import { types } from "node:util";

const uncurry = Function.prototype.call.bind.bind(Function.prototype.call);

export const ObjectPrototype = Object.prototype;
export const ArrayPrototype = Array.prototype;
export const ObjectKeys = Object.keys;
export const ObjectGetPrototypeOf = Object.getPrototypeOf;
export const ObjectSetPrototypeOf = Object.setPrototypeOf;
export const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
export const ObjectGetOwnPropertySymbols = Object.getOwnPropertySymbols;
export const ObjectHasOwn = Object.hasOwn;
export const ObjectIs = Object.is;
export const ObjectFreeze = Object.freeze;
export const ArrayIsArray = Array.isArray;
export const ArrayBufferIsView = ArrayBuffer.isView;
export const NumberIsFinite = Number.isFinite;
export const JSONStringify = JSON.stringify;
export const JSONParse = JSON.parse;
export const StringCtor = String;
export const StringIsWellFormed = uncurry(String.prototype.isWellFormed);
export const StringToWellFormed = uncurry(String.prototype.toWellFormed);
export const StringSlice = uncurry(String.prototype.slice);
export const StringCharCodeAt = uncurry(String.prototype.charCodeAt);
export const RegExpExec = uncurry(RegExp.prototype.exec);
export const ArraySort = uncurry(Array.prototype.sort);
export const SetCtor = Set;
export const SetHas = uncurry(Set.prototype.has);
export const SetAdd = uncurry(Set.prototype.add);
export const SetDelete = uncurry(Set.prototype.delete);
export const { isProxy, isDate, isMap, isSet, isRegExp, isPromise, isNativeError } = types;
const fsWriteSync = writeSync;
const BufferFrom = Buffer.from;
const processExit = process.exit.bind(process);

// The Object.prototype and Array.prototype of every realm whose values count
// as plain data: this one, and each fresh context a user module runs in while
// its values are checked (fresh_module.mjs), captured before its code ran.
const plainObjectPrototypes = new SetCtor([ObjectPrototype]);
const plainArrayPrototypes = new SetCtor([ArrayPrototype]);

/** An object with this prototype is a plain object (null included). */
export function isPlainObjectPrototype(proto) {
  return proto === null || SetHas(plainObjectPrototypes, proto);
}

/** An array with this prototype is a plain array. */
export function isPlainArrayPrototype(proto) {
  return SetHas(plainArrayPrototypes, proto);
}

/** Count a context's plain prototypes as plain until the returned function is called. */
export function admitRealm({ objectPrototype, arrayPrototype }) {
  SetAdd(plainObjectPrototypes, objectPrototype);
  SetAdd(plainArrayPrototypes, arrayPrototype);
  return () => {
    SetDelete(plainObjectPrototypes, objectPrototype);
    SetDelete(plainArrayPrototypes, arrayPrototype);
  };
}

/** A fresh array with no prototype (nothing inherited: no toJSON, no index setters). */
export function list(length = 0) {
  const out = new Array(length);
  ObjectSetPrototypeOf(out, null);
  return out;
}

/** Append to a list() without Array.prototype.push. */
export function append(items, item) {
  items[items.length] = item;
}

/** The JSON text of a reply built from null-prototype objects, lists and primitives. */
export function encode(reply) {
  return JSONStringify(reply);
}

const pause = new Int32Array(new SharedArrayBuffer(4));
const AtomicsWait = Atomics.wait;

/** Write all of `text` to a file descriptor, synchronously. (Once anything
 * touches process.stdout, Node makes a pipe on fd 1 non-blocking: a full
 * pipe answers EAGAIN, and the write is retried a moment later.) */
export function writeAll(fd, text) {
  const bytes = BufferFrom(text, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += fsWriteSync(fd, bytes, offset, bytes.length - offset);
    } catch (err) {
      if (!err || err.code !== "EAGAIN") throw err;
      AtomicsWait(pause, 0, 0, 1);
    }
  }
}

export function exitProcess(code) {
  processExit(code);
}

/** `text` as valid Unicode (lone surrogates replaced), at most `limit` code units. */
export function clip(text, limit = 2000) {
  const cut = text.length > limit ? StringSlice(text, 0, limit) + "…" : text;
  return StringToWellFormed(cut);
}

/** A sentence about a thrown value, never throwing and never running more
 * user code than reading the error's name and message: "Name: message" for
 * an error, a thrown string as it is, anything else as "a thrown <type>: …";
 * valid Unicode, clipped. The one description of a thrown value in js/. */
export function errorText(err) {
  try {
    if (isNativeError(err)) {
      const name = err.name;
      const message = err.message;
      if (typeof name === "string" && typeof message === "string") return clip(`${name}: ${message}`);
    }
  } catch {
    // a getter that throws: fall through
  }
  if (typeof err === "string") return clip(err);
  try {
    const text = StringCtor(err);
    if (typeof text === "string") return clip(`a thrown ${typeof err}: ${text}`);
  } catch {
    // unprintable
  }
  return "a thrown value that cannot be printed";
}
