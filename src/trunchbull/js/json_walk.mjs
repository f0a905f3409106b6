// The JSON-compatibility walk of SPEC §3.3: copies a JS value into plain JSON
// data, recording every function (by path) and every value JSON cannot hold.

const MAX_DEPTH = 64;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

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

export function toJsonData(root) {
  const functions = [];
  const errors = [];
  const ancestors = new Set();
  const bad = (path, problem) => {
    errors.push({ path: path || "(root)", problem });
    return null;
  };

  function visit(value, path, depth) {
    if (value === null || typeof value === "string" || typeof value === "boolean") return value;
    switch (typeof value) {
      case "number":
        if (!Number.isFinite(value)) return bad(path, `${value} is not a finite number`);
        return Object.is(value, -0) ? 0 : value;
      case "undefined":
        return bad(path, "undefined is not JSON data");
      case "function":
        functions.push(path || "(root)");
        return null;
      case "bigint":
        return bad(path, "a BigInt is not JSON data");
      case "symbol":
        return bad(path, "a Symbol is not JSON data");
    }
    if (depth >= MAX_DEPTH) return bad(path, `nesting deeper than ${MAX_DEPTH} levels`);
    if (ancestors.has(value)) return bad(path, "a cycle (the value contains itself)");
    ancestors.add(value);
    try {
      if (Array.isArray(value)) return visitArray(value, path, depth);
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return bad(path, `${kindOf(value)} is not plain JSON data`);
      if (Object.getOwnPropertySymbols(value).length) return bad(path, "an object with Symbol keys is not plain JSON data");
      const out = {};
      for (const key of Object.keys(value)) {
        const p = childPath(path, key);
        const desc = Object.getOwnPropertyDescriptor(value, key);
        if (desc.get || desc.set) {
          bad(p, "an accessor property (getter/setter) is not plain JSON data");
          continue;
        }
        const v = visit(desc.value, p, depth + 1);
        out[key] = v;
      }
      return out;
    } finally {
      ancestors.delete(value);
    }
  }

  function visitArray(value, path, depth) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return bad(path, "an array subclass is not plain JSON data");
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const p = childPath(path, i);
      if (!(i in value)) {
        bad(p, "a sparse array (missing element) is not JSON data");
        out[i] = null;
        continue;
      }
      const desc = Object.getOwnPropertyDescriptor(value, i);
      if (desc.get || desc.set) {
        out[i] = bad(p, "an accessor property (getter/setter) is not plain JSON data");
        continue;
      }
      out[i] = visit(desc.value, p, depth + 1);
    }
    return out;
  }

  const value = visit(root, "", 0);
  return { value, functions, errors };
}
