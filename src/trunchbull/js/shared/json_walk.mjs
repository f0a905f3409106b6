// The JSON-compatibility walk of SPEC §3.3: records every function (by path)
// and every value JSON cannot hold. toJsonData also copies the value into
// plain JSON data; checkJsonData only checks, for large values that are then
// serialized as they are (transformer output).
// Every built-in it calls was captured before user code ran (intrinsics.mjs),
// it never reads a property through a prototype, and its copies have null
// prototypes: user code that polluted prototypes cannot change what it
// reports or what the copy serializes to.
import {
  ArrayBufferIsView, ArrayIsArray, ArrayPrototype, JSONStringify, NumberIsFinite, ObjectGetOwnPropertyDescriptor,
  ObjectGetOwnPropertySymbols, ObjectGetPrototypeOf, ObjectHasOwn, ObjectIs, ObjectKeys, ObjectPrototype,
  RegExpExec, SetAdd, SetCtor, SetDelete, SetHas, StringIsWellFormed, StringToWellFormed, append, clip, isDate,
  isMap, isPlainArrayPrototype, isPlainObjectPrototype, isPromise, isProxy, isRegExp, isSet, list,
} from "./intrinsics.mjs";

const MAX_DEPTH = 64;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const NOT_UNICODE = "a string with a lone surrogate (invalid UTF-16) is not valid Unicode text";

export function childPath(path, key) {
  if (typeof key === "number") return `${path}[${key}]`;
  if (RegExpExec(IDENT, key) !== null) return path ? `${path}.${key}` : key;
  return `${path}[${JSONStringify(StringToWellFormed(key))}]`;
}

function kindOf(value) {
  if (isDate(value)) return "a Date";
  if (isMap(value)) return "a Map";
  if (isSet(value)) return "a Set";
  if (isRegExp(value)) return "a RegExp";
  if (isPromise(value)) return "a Promise";
  if (ArrayBufferIsView(value)) return "a typed array";
  let ctor;
  try {
    const constructor = value.constructor; // user code may answer: only a string name is taken
    ctor = typeof constructor === "function" ? constructor.name : undefined;
  } catch {
    ctor = undefined;
  }
  return typeof ctor === "string" && ctor ? `an instance of class ${clip(ctor, 80)}` : "an object with a custom prototype";
}

// The array rules, shared by the walk and elementChecker. Why an array
// itself is not plain (null: it is; its elements are walked apart):
function arrayProblem(array) {
  if (!isPlainArrayPrototype(ObjectGetPrototypeOf(array))) return "an array subclass is not plain JSON data";
  // JSON.stringify would call it; the copy would not have it.
  if (ObjectHasOwn(array, "toJSON")) return "an array with a toJSON property is not plain JSON data";
  return null;
}

const SPARSE = "a sparse array (missing element) is not JSON data";
const ACCESSOR = "an accessor property (getter/setter) is not plain JSON data";

// Element i of a plain array: its own data descriptor (read `.value`), or
// the problem (a string) when the slot is not data.
function arrayElement(array, i) {
  const desc = ObjectGetOwnPropertyDescriptor(array, i);
  if (desc === undefined) return SPARSE;
  return ObjectHasOwn(desc, "value") ? desc : ACCESSOR;
}

// The walk's state, made once, before user code runs, and reused (the walk
// never runs user code, so it is never re-entered): the keys leading to the
// value being visited live in a stack of MAX_DEPTH + 2 own slots (writes
// only ever replace an own property, never reach a prototype), the
// ancestors in a Set whose methods were captured, and what was found in
// null-prototype lists made only when something is reported (the clean case
// allocates nothing).
const keyStack = Array.from({ length: MAX_DEPTH + 2 }, () => 0);
let keyDepth = 0;
const ancestors = new SetCtor();
let copying = false;
let found = null; // { functions, errors } once something is reported

const findings = () => ({ __proto__: null, functions: list(), errors: list() });

function here(key) {
  let path = "";
  for (let i = 0; i < keyDepth; i++) path = childPath(path, keyStack[i]);
  return key === undefined ? path : childPath(path, key);
}

function bad(key, problem) {
  append((found ??= findings()).errors, { __proto__: null, path: here(key) || "(root)", problem });
  return null;
}

// `key`: the key of `value` in its parent (undefined at the root).
function visit(value, key, depth) {
  if (value === null || typeof value === "boolean") return value;
  switch (typeof value) {
    case "string":
      if (StringIsWellFormed(value)) return value;
      bad(key, NOT_UNICODE);
      return StringToWellFormed(value);
    case "number":
      if (!NumberIsFinite(value)) return bad(key, `${value} is not a finite number`);
      return ObjectIs(value, -0) ? 0 : value;
    case "undefined":
      return bad(key, "undefined is not JSON data");
    case "function":
      append((found ??= findings()).functions, here(key) || "(root)");
      return null;
    case "bigint":
      return bad(key, "a BigInt is not JSON data");
    case "symbol":
      return bad(key, "a Symbol is not JSON data");
  }
  if (depth >= MAX_DEPTH) return bad(key, `nesting deeper than ${MAX_DEPTH} levels`);
  // A Proxy could answer the walk and the serializer differently.
  if (isProxy(value)) return bad(key, "a Proxy is not plain JSON data");
  if (SetHas(ancestors, value)) return bad(key, "a cycle (the value contains itself)");
  SetAdd(ancestors, value);
  if (key !== undefined) keyStack[keyDepth++] = key;
  try {
    if (ArrayIsArray(value)) return visitArray(value, depth);
    const proto = ObjectGetPrototypeOf(value);
    if (!isPlainObjectPrototype(proto)) return bad(undefined, `${kindOf(value)} is not plain JSON data`);
    if (ObjectGetOwnPropertySymbols(value).length) return bad(undefined, "an object with Symbol keys is not plain JSON data");
    const out = copying ? { __proto__: null } : undefined;
    const names = ObjectKeys(value);
    for (let i = 0; i < names.length; i++) {
      const k = names[i];
      const desc = ObjectGetOwnPropertyDescriptor(value, k);
      if (!ObjectHasOwn(desc, "value")) {
        bad(k, ACCESSOR);
        continue;
      }
      let name = k;
      if (!StringIsWellFormed(k)) {
        bad(k, "a property name with a lone surrogate (invalid UTF-16) is not valid Unicode text");
        name = StringToWellFormed(k);
      }
      const v = visit(desc.value, k, depth + 1);
      if (copying) out[name] = v;
    }
    return out;
  } finally {
    if (key !== undefined) keyDepth--;
    SetDelete(ancestors, value);
  }
}

function visitArray(value, depth) {
  const problem = arrayProblem(value);
  if (problem) return bad(undefined, problem);
  const out = copying ? list(value.length) : undefined;
  for (let i = 0; i < value.length; i++) {
    const element = arrayElement(value, i);
    const v = typeof element === "string" ? bad(i, element) : visit(element.value, i, depth + 1);
    if (copying) out[i] = v;
  }
  return out;
}

// `depth`: how deep `root` itself sits (an element of a checked array: 1).
// The copy (when `copy`) and what was found (null: nothing).
function walk(root, copy, depth) {
  copying = copy;
  found = null;
  keyDepth = 0;
  try {
    const value = visit(root, undefined, depth);
    return { __proto__: null, value, found };
  } finally {
    found = null;
    keyDepth = 0;
  }
}

/** A plain-JSON copy of `root`, with every function and non-JSON value found. */
export function toJsonData(root) {
  const { value, found } = walk(root, true, 0);
  const { functions, errors } = found ?? findings();
  return { __proto__: null, value, functions, errors };
}

/** Every function and non-JSON value in `root`, without copying it. When both
 * lists are empty, JSON.stringify(root) is exactly the JSON of toJsonData's copy
 * (as long as plainStringifySafe()). */
export function checkJsonData(root) {
  return walk(root, false, 0).found ?? findings();
}

export const NOT_PLAIN = Symbol("not plain JSON data");

/** For checking a large array one element at a time (a transformer's cases,
 * walked as they are streamed): null when the array itself is not plain
 * (the same rules as the walk's), else a function that gives element i when
 * it is plain JSON data and NOT_PLAIN otherwise. An array whose elements are
 * all plain passes checkJsonData; for one that is not, checkJsonData or
 * toJsonData says why. */
export function elementChecker(array) {
  if (!ArrayIsArray(array) || isProxy(array) || arrayProblem(array)) return null;
  return (i) => {
    const element = arrayElement(array, i);
    if (typeof element === "string") return NOT_PLAIN;
    // The array is an ancestor of its elements: an element that contains it
    // is a cycle, which the walk of that element finds as it reaches the
    // element again.
    return walk(element.value, false, 1).found ? NOT_PLAIN : element.value;
  };
}

/** Whether JSON.stringify of data that passed the walk gives exactly the
 * JSON of its copy: true unless user code made a toJSON reachable from plain
 * objects or arrays (the only way such data could run code while being
 * serialized). Checked right before serializing. */
export function plainStringifySafe() {
  return !ObjectHasOwn(ObjectPrototype, "toJSON") && !ObjectHasOwn(ArrayPrototype, "toJSON")
    && ObjectGetPrototypeOf(ArrayPrototype) === ObjectPrototype;
}
