// BFCL's Java and JavaScript value converters (bfcl-eval 2026.3.23,
// bfcl_eval/eval_checker/ast_eval/type_convertor/java_type_converter.py and
// js_type_converter.py), line for line. A Java or JavaScript argument is source text (a string);
// the converter turns it into the value the checker compares, or leaves it a string.
//
// Python's regular expressions, written for JavaScript with the same meaning: `.` never
// matches "\n" (JavaScript's also refuses "\r", U+2028, U+2029: [^\n] here), `$` without
// re.MULTILINE also matches before a final "\n" (END below), and \s, \d, \w are Unicode-aware.

import { PY_SPACE, PyValue, PyValueError, pyFloat, pyInt, pySlice, pyStrip } from "./python_values"

const S = `[${PY_SPACE}]`
const D = "\\p{Nd}"
const W = "[\\p{L}\\p{N}_]"
const DOT = "[^\\n]"
const END = "(?=\\n?$)"

const re = (source: string, flags = "") => new RegExp(source, `u${flags}`)

export class NotImplementedInBfcl extends Error {}

// bfcl_eval/constants/type_mappings.py
export const JAVA_TYPE_CONVERSION: Record<string, string> = {
  byte: "int",
  short: "int",
  integer: "int",
  float: "float",
  double: "float",
  long: "int",
  boolean: "bool",
  char: "str",
  Array: "list",
  ArrayList: "list",
  Set: "set",
  HashMap: "dict",
  Hashtable: "dict",
  Queue: "list",
  Stack: "list",
  String: "str",
  any: "str",
}

export const JS_TYPE_CONVERSION: Record<string, string> = {
  String: "str",
  integer: "int",
  float: "float",
  Bigint: "int",
  Boolean: "bool",
  dict: "dict",
  array: "list",
  any: "str",
}

// ---------------------------------------------------------------------------------------------
// Java

const JAVA_INT = re(`^-?${D}+${END}`)
const JAVA_FLOAT = re(`^-?${D}+(\\.${D}+)?([eE][+-]?${D}+)?[fF]${END}`)
const JAVA_DOUBLE = re(`^-?${D}+(\\.${D}+)?([eE][+-]?${D}+)?${END}`)
const JAVA_LONG = re(`^-?${D}+[lL]${END}`)
const TRAILING_F = re(`[fF]${END}`)
const TRAILING_L = re(`[lL]${END}`)

export function javaTypeConverter(value: string, expectedType: string, nestedType?: string | null): PyValue {
  if (!(expectedType in JAVA_TYPE_CONVERSION)) throw new PyValueError(`Unsupported type: ${expectedType}`)
  if (expectedType === "byte" || expectedType === "short" || expectedType === "integer") {
    if (!JAVA_INT.test(value)) return value
    return pyInt(value)
  } else if (expectedType === "float") {
    if (!JAVA_FLOAT.test(value)) return value
    return pyFloat(value.replace(TRAILING_F, ""))
  } else if (expectedType === "double") {
    if (!JAVA_DOUBLE.test(value)) return value
    return pyFloat(value)
  } else if (expectedType === "long") {
    if (!JAVA_LONG.test(value)) return value
    return pyInt(value.replace(TRAILING_L, ""))
  } else if (expectedType === "boolean") {
    if (value !== "true" && value !== "false") return value
    return value === "true"
  } else if (expectedType === "char") {
    // BFCL's pattern ^\'.$\' can never match (`$` then a quote): a char stays its text
    return value
  } else if (expectedType === "Array" || expectedType === "ArrayList") {
    return expectedType === "ArrayList" ? parseArrayList(value, nestedType) : parseArray(value, nestedType)
  } else if (expectedType === "Set") {
    throw new NotImplementedInBfcl("Set conversion is not implemented")
  } else if (expectedType === "HashMap") {
    return parseHashMap(value)
  } else if (expectedType === "Hashtable") {
    throw new NotImplementedInBfcl("Set conversion is not implemented")
  } else if (expectedType === "Queue" || expectedType === "Stack") {
    throw new NotImplementedInBfcl(`${expectedType} conversion is not implemented`)
  } else if (expectedType === "String" || expectedType === "any") {
    return value
  }
  throw new PyValueError(`Unsupported type: ${expectedType}`)
}

const AS_LIST = re(`new${S}+ArrayList<${W}*>\\(Arrays\\.asList\\((${DOT}+?)\\)\\)`)
const ADDS = re(`new${S}+ArrayList<${W}*>\\(\\)${S}*\\{\\{${S}*([\\s\\S]+?)${S}*\\}\\}`)
const ADD = re(`add\\((${DOT}+?)\\)`, "g")
const EMPTY_LIST = re(`new${S}+ArrayList<${W}*>\\(\\)`)

function javaElement(text: string, nestedType?: string | null): PyValue {
  if (nestedType === "char" || nestedType === "String") return pySlice(text, 1, -1)
  return nestedType ? javaTypeConverter(text, nestedType) : parseJavaValue(text)
}

function parseArrayList(input: string, nestedType?: string | null): PyValue {
  const asList = AS_LIST.exec(input)
  if (asList) return asList[1].split(",").map((e) => javaElement(pyStrip(e), nestedType))
  const adds = ADDS.exec(input)
  if (adds) return [...adds[1].matchAll(ADD)].map((m) => javaElement(pyStrip(m[1]), nestedType))
  if (EMPTY_LIST.test(input)) return []
  return input
}

const ARRAY = re(`new${S}+${W}+\\[\\]${S}*\\{(${DOT}*?)\\}`)

function parseArray(input: string, nestedType?: string | null): PyValue {
  const match = ARRAY.exec(input)
  if (!match) return input
  const parts = match[1].split(",").filter((x) => pyStrip(x))
  return parts.map((x) => (nestedType ? javaTypeConverter(pyStrip(x), nestedType) : parseJavaValue(pyStrip(x))))
}

const HASHMAP = re(`new${S}+HashMap<[\\s\\S]*?>${S}*\\(\\)${S}*\\{${S}*\\{?${S}*([\\s\\S]*?)${S}*\\}?${S}*\\}`)
const PUT = re(`put\\("(${DOT}*?)",${S}*(${DOT}*?)\\)`, "g")
const EMPTY_MAP = re(`new${S}+HashMap<${DOT}*?>${S}*\\(\\)`)

function parseHashMap(input: string): PyValue {
  const elements: { [key: string]: PyValue } = Object.create(null)
  const match = HASHMAP.exec(input)
  if (match) {
    if (pyStrip(match[1])) {
      for (const put of match[1].matchAll(PUT)) elements[put[1]] = parseJavaValue(pyStrip(put[2]))
    }
    return elements
  }
  if (EMPTY_MAP.test(input)) return elements
  return input
}

export function parseJavaValue(text: string): PyValue {
  if (text === "true") return true
  if (text === "false") return false
  if (text.startsWith('"') && text.endsWith('"')) return pySlice(text, 1, -1)
  if (JAVA_LONG.test(text)) return pyInt(pySlice(text, 0, -1))
  if (JAVA_FLOAT.test(text)) return pyFloat(text.replace(TRAILING_F, ""))
  return intThenFloat(text)
}

function intThenFloat(text: string): PyValue {
  try {
    return pyInt(text)
  } catch (err) {
    if (!(err instanceof PyValueError)) throw err
  }
  try {
    return pyFloat(text)
  } catch (err) {
    if (!(err instanceof PyValueError)) throw err
  }
  return text
}

// ---------------------------------------------------------------------------------------------
// JavaScript

const JS_INT = re(`^-?${D}+${END}`)
const JS_FLOAT = re(`^-?${D}+(\\.${D}+)?${END}`)
const JS_BIGINT = re(`^-?${D}+n${END}`)

export function jsTypeConverter(value: string, expectedType: string, nestedType?: string | null): PyValue {
  if (!(expectedType in JS_TYPE_CONVERSION)) throw new PyValueError(`Unsupported type: ${expectedType}`)
  if (expectedType === "String") {
    const quoted = (value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))
    return quoted ? pySlice(value, 1, -1) : value
  } else if (expectedType === "integer") {
    if (!JS_INT.test(value)) return value
    return pyInt(value)
  } else if (expectedType === "float") {
    if (!JS_FLOAT.test(value)) return value
    return pyFloat(value)
  } else if (expectedType === "Bigint") {
    if (!JS_BIGINT.test(value)) return value
    return pyInt(pySlice(value, 0, -1))
  } else if (expectedType === "Boolean") {
    if (value !== "true" && value !== "false") return value
    return value === "true"
  } else if (expectedType === "dict") {
    return parseJsCollection(value, "dict", nestedType)
  } else if (expectedType === "array") {
    return parseJsCollection(value, "array", nestedType)
  } else if (expectedType === "any") {
    return value
  }
  throw new PyValueError(`Unsupported type: ${expectedType}`)
}

// re.match: anchored at the start only
const ARRAY_2D = re(
  `^(?:\\[${S}*\\[${DOT}*?\\]${S}*(,${S}*\\[${DOT}*?\\]${S}*)*\\]|\\bnew${S}+Array\\(${S}*\\[${DOT}*?\\]${S}*(,${S}*\\[${DOT}*?\\]${S}*)*\\))`,
)
const ARRAY_1D = re(`^(?:\\[(${DOT}*?)\\]|\\bnew${S}+Array\\((${DOT}*?)\\))`)
const INNER = re(`\\[(${DOT}*?)\\]`, "g")
const DICT = re(`^\\{(${DOT}*?)\\}`)
const PAIRS = re(`([^:]+):${S}*(${DOT}*?)(?:,${S}*(?=[^,]+:)|${END})`, "g")

function parseJsCollection(input: string, type: "array" | "dict", nestedType?: string | null): PyValue {
  const code = pyStrip(input)
  if (type === "array") {
    try {
      const twoD = ARRAY_2D.exec(code)
      if (twoD) {
        return [...twoD[0].matchAll(INNER)].map((m, idx) => {
          let inner = pyStrip(m[1])
          if (idx === 0 && inner.startsWith("[")) inner = pySlice(inner, 1)
          return inner.split(",").map((e) => parseJsValue(pyStrip(e)))
        })
      }
      const oneD = ARRAY_1D.exec(code)
      if (!oneD) return code
      const body = oneD[1] !== undefined ? oneD[1] : oneD[2]
      const elements = body !== undefined && pyStrip(body) ? pyStrip(body).split(",") : []
      if (nestedType) {
        return elements.map((e) =>
          pyStrip(e).startsWith("'") || pyStrip(e).startsWith('"')
            ? jsTypeConverter(pyStrip(e), nestedType, "String")
            : jsTypeConverter(pyStrip(e), nestedType),
        )
      }
      return elements.map((e) => parseJsValue(pyStrip(e)))
    } catch {
      return code // BFCL: a bare `except:`
    }
  }
  if (code === "{}") return Object.create(null)
  const match = DICT.exec(code)
  if (!match) return code
  try {
    const dictionary: { [key: string]: PyValue } = Object.create(null)
    for (const [, rawKey, rawValue] of match[1].matchAll(PAIRS)) {
      const key = pyStrip(pyStrip(rawKey), "'\"")
      const value = pyStrip(rawValue)
      if (value.startsWith("[") && value.endsWith("]")) dictionary[key] = parseJsCollection(value, "array")
      else if (value.startsWith("{") && value.endsWith("}")) dictionary[key] = parseJsCollection(value, "dict")
      else dictionary[key] = parseJsValue(pyStrip(value, "'\""))
    }
    return dictionary
  } catch {
    return code // BFCL: `except Exception`
  }
}

export function parseJsValue(input: string): PyValue {
  const text = pyStrip(input)
  if (text === "true") return true
  if (text === "false") return false
  const quoted = (text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'"))
  if (quoted) return pySlice(text, 1, -1)
  return intThenFloat(text)
}
