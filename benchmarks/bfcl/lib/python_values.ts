// Python's view of JSON values, which BFCL's checker (Python) grades by: json.loads makes `5` an
// int and `5.0` a float, `True == 1`, `1 == 1.0`, and `type(x) == int` tells a bool from an int.
// Here an int is a bigint, a float a number, and the rest is plain JSON data; pyJsonLoads reads
// JSON text with json.loads's int/float rule (the number's own text decides, through
// JSON.parse's source text access, Node 22+).

export type PyValue = null | boolean | bigint | number | string | PyValue[] | { [key: string]: PyValue }

const INT_TEXT = /^-?\d+$/

/** JSON text as Python's json.loads reads it (its NaN/Infinity extensions aside). */
export function pyJsonLoads(text: string): PyValue {
  return JSON.parse(text, function (this: unknown, _key: string, value: unknown, context?: { source?: string }) {
    if (typeof value === "number" && context?.source !== undefined) {
      return INT_TEXT.test(context.source) ? BigInt(context.source) : value
    }
    return value
  }) as PyValue
}

/** A JSON value already parsed by JavaScript (its number texts are gone): whole numbers are taken as ints. */
export function fromJs(value: unknown): PyValue {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value
  if (Array.isArray(value)) return value.map(fromJs)
  if (value && typeof value === "object") {
    const out: { [key: string]: PyValue } = Object.create(null)
    for (const [k, v] of Object.entries(value)) out[k] = fromJs(v)
    return out
  }
  return value as PyValue
}

export type PyType = "NoneType" | "bool" | "int" | "float" | "str" | "list" | "dict"

export function pyType(value: PyValue | undefined): PyType {
  if (value === null || value === undefined) return "NoneType"
  if (typeof value === "boolean") return "bool"
  if (typeof value === "bigint") return "int"
  if (typeof value === "number") return "float"
  if (typeof value === "string") return "str"
  return Array.isArray(value) ? "list" : "dict"
}

function isNumeric(value: PyValue): value is boolean | bigint | number {
  return typeof value === "boolean" || typeof value === "bigint" || typeof value === "number"
}

function numeric(value: boolean | bigint | number): bigint | number {
  return typeof value === "boolean" ? (value ? 1n : 0n) : value
}

/** Python's ==. */
export function pyEq(a: PyValue, b: PyValue): boolean {
  if (isNumeric(a) && isNumeric(b)) {
    const x = numeric(a)
    const y = numeric(b)
    // eslint-disable-next-line eqeqeq -- bigint == number compares the values exactly
    return x == y
  }
  if (typeof a === "string" || typeof b === "string") return a === b
  if (a === null || b === null) return a === b
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => pyEq(x, b[i]))
  }
  if (isNumeric(a) || isNumeric(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && pyEq(a[k], b[k]))
}

/** Python's `item in container` for a list, a dict (its keys) or a str (a substring). */
export function pyIn(item: PyValue, container: PyValue): boolean {
  if (Array.isArray(container)) return container.some((x) => pyEq(item, x))
  if (typeof container === "string") {
    if (typeof item !== "string") throw new TypeError("'in <string>' requires string as left operand")
    return container.includes(item)
  }
  if (container && typeof container === "object") return typeof item === "string" && Object.hasOwn(container, item)
  throw new TypeError(`argument of type '${pyType(container)}' is not iterable`)
}

/** len() of a str (code points), list or dict. */
export function pyLen(value: PyValue): number {
  if (typeof value === "string") return [...value].length
  if (Array.isArray(value)) return value.length
  if (value && typeof value === "object") return Object.keys(value).length
  throw new TypeError(`object of type '${pyType(value)}' has no len()`)
}

/** Element i of a str (a code point) or a list, as Python's x[i]. */
export function pyItem(value: PyValue, i: number): PyValue {
  if (typeof value === "string") return [...value][i]
  if (Array.isArray(value)) return value[i]
  throw new TypeError(`'${pyType(value)}' object is not subscriptable by position`)
}

// str.strip() and friends: Python's whitespace (str.isspace)
export const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
const STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "gu")

export function pyStrip(text: string, chars?: string): string {
  if (chars === undefined) return text.replace(STRIP, "")
  const set = new Set(chars)
  const points = [...text]
  let start = 0
  let end = points.length
  while (start < end && set.has(points[start])) start++
  while (end > start && set.has(points[end - 1])) end--
  return points.slice(start, end).join("")
}

/** text[start:end] on code points (end may be negative). */
export function pySlice(text: string, start: number, end?: number): string {
  return [...text].slice(start, end).join("")
}

export class PyValueError extends Error {}

const INT_LITERAL = /^[+-]?[0-9](?:_?[0-9])*$/

/** int(text) for text of ASCII digits (Python also reads other scripts' digits; BFCL's data has none). */
export function pyInt(text: string): bigint {
  const t = pyStrip(text)
  if (!INT_LITERAL.test(t)) throw new PyValueError(`invalid literal for int() with base 10: ${JSON.stringify(text)}`)
  return BigInt(t.replaceAll("_", ""))
}

const DIGITS = "[0-9](?:_?[0-9])*"
const FLOAT_LITERAL = new RegExp(
  `^[+-]?(?:(?:${DIGITS})?\\.${DIGITS}|${DIGITS}\\.?)(?:[eE][+-]?${DIGITS})?$|^[+-]?(?:inf|infinity|nan)$`,
  "i",
)

/** float(text). */
export function pyFloat(text: string): number {
  const t = pyStrip(text)
  if (!FLOAT_LITERAL.test(t)) throw new PyValueError(`could not convert string to float: ${JSON.stringify(text)}`)
  const lower = t.toLowerCase().replaceAll("_", "")
  if (lower.endsWith("nan")) return NaN
  if (lower.endsWith("inf") || lower.endsWith("infinity")) return lower.startsWith("-") ? -Infinity : Infinity
  return Number(lower)
}
