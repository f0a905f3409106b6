// The JSON-compatibility walk of SPEC §3.3: records every function (by path)
// and every value JSON cannot hold. toJsonData also copies the value into
// plain JSON data; checkJsonData only checks, for large values that are then
// serialized as they are (transformer output).
import { types } from "node:util";

const MAX_DEPTH = 64;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const { isProxy } = types;

export function childPath(path, key) {
  if (typeof key === "number") return `${path}[${key}]`;
  if (IDENT.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

function kindOf(value) {
  if (value instanceof Date) return "a Date";
  if (value instanceof Map) return "a Map";
  if (value instanceof Set) return "a Set";
  if (value instanceof RegExp) return "a RegExp";
  if (value instanceof Promise) return "a Promise";
  if (ArrayBuffer.isView(value)) return "a typed array";
  const ctor = value.constructor && value.constructor.name;
  return ctor ? `an instance of class ${ctor}` : "an object with a custom prototype";
}

// The array rules, shared by the walk and elementChecker. Why an array
// itself is not plain (null: it is; its elements are walked apart):
function arrayProblem(array) {
  if (Object.getPrototypeOf(array) !== Array.prototype) return "an array subclass is not plain JSON data";
  // JSON.stringify would call it; the copy would not have it.
  if (Object.hasOwn(array, "toJSON")) return "an array with a toJSON property is not plain JSON data";
  return null;
}

// Element i of a plain array: { value }, or { problem } when the slot is not data.
function arrayElement(array, i) {
  if (!(i in array)) return { problem: "a sparse array (missing element) is not JSON data" };
  const desc = Object.getOwnPropertyDescriptor(array, i);
  if (desc.get || desc.set) return { problem: "an accessor property (getter/setter) is not plain JSON data" };
  return { value: desc.value };
}

// `depth`: how deep `root` itself sits (an element of a checked array: 1).
function walk(root, copy, depth = 0) {
  const functions = [];
  const errors = [];
  const ancestors = new Set();
  // The keys leading to the value being visited; a path string is only built
  // when something is reported, which keeps the clean case allocation-free.
  const keys = [];
  const here = (key) => {
    let path = "";
    for (const k of keys) path = childPath(path, k);
    return key === undefined ? path : childPath(path, key);
  };
  const bad = (key, problem) => {
    errors.push({ path: here(key) || "(root)", problem });
    return null;
  };

  // `key`: the key of `value` in its parent (undefined at the root).
  function visit(value, key, depth) {
    if (value === null || typeof value === "string" || typeof value === "boolean") return value;
    switch (typeof value) {
      case "number":
        if (!Number.isFinite(value)) return bad(key, `${value} is not a finite number`);
        return Object.is(value, -0) ? 0 : value;
      case "undefined":
        return bad(key, "undefined is not JSON data");
      case "function":
        functions.push(here(key) || "(root)");
        return null;
      case "bigint":
        return bad(key, "a BigInt is not JSON data");
      case "symbol":
        return bad(key, "a Symbol is not JSON data");
    }
    if (depth >= MAX_DEPTH) return bad(key, `nesting deeper than ${MAX_DEPTH} levels`);
    // A Proxy could answer the walk and the serializer differently.
    if (isProxy(value)) return bad(key, "a Proxy is not plain JSON data");
    if (ancestors.has(value)) return bad(key, "a cycle (the value contains itself)");
    ancestors.add(value);
    if (key !== undefined) keys.push(key);
    try {
      if (Array.isArray(value)) return visitArray(value, depth);
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return bad(undefined, `${kindOf(value)} is not plain JSON data`);
      if (Object.getOwnPropertySymbols(value).length) return bad(undefined, "an object with Symbol keys is not plain JSON data");
      const out = copy ? {} : undefined;
      for (const k of Object.keys(value)) {
        const desc = Object.getOwnPropertyDescriptor(value, k);
        if (desc.get || desc.set) {
          bad(k, "an accessor property (getter/setter) is not plain JSON data");
          continue;
        }
        const v = visit(desc.value, k, depth + 1);
        if (copy) out[k] = v;
      }
      return out;
    } finally {
      if (key !== undefined) keys.pop();
      ancestors.delete(value);
    }
  }

  function visitArray(value, depth) {
    const problem = arrayProblem(value);
    if (problem) return bad(undefined, problem);
    const out = copy ? new Array(value.length) : undefined;
    for (let i = 0; i < value.length; i++) {
      const element = arrayElement(value, i);
      const v = element.problem ? bad(i, element.problem) : visit(element.value, i, depth + 1);
      if (copy) out[i] = v;
    }
    return out;
  }

  const value = visit(root, undefined, depth);
  return { value, functions, errors };
}

/** A plain-JSON copy of `root`, with every function and non-JSON value found. */
export function toJsonData(root) {
  return walk(root, true);
}

/** Every function and non-JSON value in `root`, without copying it. When both
 * lists are empty, JSON.stringify(root) is exactly the JSON of toJsonData's copy. */
export function checkJsonData(root) {
  const { functions, errors } = walk(root, false);
  return { functions, errors };
}

export const NOT_PLAIN = Symbol("not plain JSON data");

/** For checking a large array one element at a time (a transformer's cases,
 * walked as they are streamed): null when the array itself is not plain
 * (the same rules as the walk's), else a function that gives element i when
 * it is plain JSON data and NOT_PLAIN otherwise. An array whose elements are
 * all plain passes checkJsonData; for one that is not, checkJsonData or
 * toJsonData says why. */
export function elementChecker(array) {
  if (!Array.isArray(array) || isProxy(array) || arrayProblem(array)) return null;
  return (i) => {
    const element = arrayElement(array, i);
    if (element.problem) return NOT_PLAIN;
    // The array is an ancestor of its elements: an element that contains it
    // is a cycle, which the walk of that element finds as it reaches the
    // element again.
    const { functions, errors } = walk(element.value, false, 1);
    return functions.length || errors.length ? NOT_PLAIN : element.value;
  };
}
