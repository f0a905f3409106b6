// BFCL's AST checker (bfcl-eval 2026.3.23, bfcl_eval/eval_checker/ast_eval/ast_checker.py),
// function for function, over Python values (python_values.ts). Kept in BFCL's own structure,
// names and order of checks, so that a difference can be found by reading the two side by side.
// The model is taken as a function-calling model whose tool names had `.` replaced by `_`
// (BFCL's `underscore_to_dot`, as for OpenAI-style APIs; convert_func_name).

import { PyType, PyValue, pyEq, pyIn, pyItem, pyLen, pyType } from "./python_values"
import { JAVA_TYPE_CONVERSION, JS_TYPE_CONVERSION, javaTypeConverter, jsTypeConverter } from "./type_converters"

export type Language = "python" | "java" | "javascript"
type Dict = { [key: string]: PyValue }
export type FunctionDoc = { name: string; description?: string; parameters: { properties: Dict; required: string[] } }
export type Result = { valid: boolean; error: unknown[]; error_type?: string; is_variable?: boolean }

const PYTHON_TYPE_MAPPING: Record<string, PyType> = {
  string: "str",
  integer: "int",
  float: "float",
  boolean: "bool",
  array: "list",
  tuple: "list",
  dict: "dict",
  any: "str",
}
const PYTHON_NESTED_TYPE_CHECK_LIST = ["array", "tuple"]
const NESTED_CONVERSION_TYPE_LIST = ["Array", "ArrayList", "array"]

function lookup<T>(table: Record<string, T>, key: string): T {
  if (!Object.hasOwn(table, key)) throw new Error(`KeyError: ${JSON.stringify(key)}`)
  return table[key]
}

const repr = (value: PyValue) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? Number(v) : v))

export function astChecker(
  funcDescription: FunctionDoc[],
  modelOutput: Dict[],
  possibleAnswer: Dict[],
  language: Language,
  testCategory: string,
): Result {
  if (testCategory.includes("parallel")) {
    return parallelFunctionCheckerNoOrder(funcDescription, modelOutput, possibleAnswer, language)
  } else if (testCategory.includes("multiple")) {
    return multipleFunctionChecker(funcDescription, modelOutput, possibleAnswer, language)
  }
  if (modelOutput.length !== 1) {
    return { valid: false, error: ["Wrong number of functions."], error_type: "simple_function_checker:wrong_count" }
  }
  return simpleFunctionChecker(funcDescription[0], modelOutput[0], possibleAnswer[0], language)
}

function findDescription(funcDescriptions: FunctionDoc[], name: string): FunctionDoc {
  const found = funcDescriptions.find((f) => f.name === name)
  if (!found) throw new Error(`TypeError: no function description for ${JSON.stringify(name)}`)
  return found
}

function getPossibleAnswerType(possibleAnswer: PyValue): PyType | null {
  if (!Array.isArray(possibleAnswer)) throw new Error("TypeError: possible answers are not a list")
  for (const answer of possibleAnswer) {
    if (!pyEq(answer, "")) return pyType(answer) // "" marks an optional parameter
  }
  return null
}

function convertFuncName(functionName: string): string {
  return functionName.includes(".") ? functionName.replaceAll(".", "_") : functionName
}

function typeChecker(
  param: string,
  value: PyValue,
  possibleAnswer: PyValue,
  expectedTypeDescription: string,
  expectedTypeConverted: PyType | "set",
  nestedTypeConverted: PyType | "set" | null,
): Result {
  const result: Result = { valid: true, error: [], is_variable: false, error_type: "type_error:simple" }
  let isVariable = false
  const possibleAnswerType = getPossibleAnswerType(possibleAnswer)
  if (possibleAnswerType !== null && possibleAnswerType !== expectedTypeConverted) isVariable = true

  if (pyType(value) === expectedTypeConverted) {
    if (nestedTypeConverted === null) {
      result.is_variable = isVariable
      return result
    }
    for (const possibleAnswerItem of possibleAnswer as PyValue[]) {
      let flag = true
      if (Array.isArray(possibleAnswerItem)) {
        for (const valueItem of value as PyValue[]) {
          const checked = typeChecker(param, valueItem, possibleAnswerItem, nestedTypeConverted, nestedTypeConverted, null)
          if (!checked.valid) {
            flag = false
            break
          }
        }
      }
      if (flag) return { valid: true, error: [], is_variable: isVariable }
    }
    result.valid = false
    result.error = [`Nested type checking failed for parameter ${repr(param)}.`]
    result.error_type = "type_error:nested"
  }

  if (possibleAnswerType !== null && pyType(value) === possibleAnswerType) {
    result.is_variable = true
    return result
  }
  result.valid = false
  result.error.push(
    `Incorrect type for parameter ${repr(param)}. Expected type ${expectedTypeDescription}, got ${pyType(value)}. Parameter value: ${repr(value)}.`,
  )
  result.error_type = "type_error:simple"
  return result
}

function standardizeString(input: string): string {
  return input.replace(/[ ,./\-_*^]/g, "").toLowerCase().replaceAll("'", '"')
}

function stringChecker(param: string, modelOutput: string, possibleAnswer: PyValue): Result {
  const standardized = (possibleAnswer as PyValue[]).filter((a) => typeof a === "string").map((a) => standardizeString(a as string))
  if (!standardized.includes(standardizeString(modelOutput))) {
    return {
      valid: false,
      error: [`Invalid value for parameter ${repr(param)}: ${repr(modelOutput)}. Expected one of ${repr(possibleAnswer)}. Case insensitive.`],
      error_type: "value_error:string",
    }
  }
  return { valid: true, error: [] }
}

function listChecker(param: string, modelOutput: PyValue[], possibleAnswer: PyValue): Result {
  const standardizedOutput = modelOutput.map((x) => (typeof x === "string" ? standardizeString(x) : x))
  const standardizedAnswers: PyValue[] = []
  for (const answer of possibleAnswer as PyValue[]) {
    const items: PyValue[] = []
    for (let j = 0; j < pyLen(answer); j++) {
      const item = pyItem(answer, j)
      items.push(typeof item === "string" ? standardizeString(item) : item)
    }
    standardizedAnswers.push(items)
  }
  if (!pyIn(standardizedOutput, standardizedAnswers)) {
    return {
      valid: false,
      error: [`Invalid value for parameter ${repr(param)}: ${repr(modelOutput)}. Expected one of ${repr(possibleAnswer)}.`],
      error_type: "value_error:list/tuple",
    }
  }
  return { valid: true, error: [] }
}

function dictChecker(param: string, modelOutput: Dict, possibleAnswers: PyValue[]): Result {
  let result: Result = { valid: false, error: [], error_type: "dict_checker:unclear" }
  for (const candidate of possibleAnswers) {
    if (pyEq(candidate, "")) continue
    result = { valid: false, error: [], error_type: "dict_checker:unclear" }
    let flag = true
    const possibleAnswer = candidate as Dict
    for (const [key, value] of Object.entries(modelOutput)) {
      if (!pyIn(key, possibleAnswer)) {
        result.error.push(`Unexpected dict key parameter: '${key}'.`)
        result.error_type = "value_error:dict_key"
        flag = false
        break
      }
      const standardizedValue = typeof value === "string" ? standardizeString(value) : value
      const allowed: PyValue[] = []
      for (let i = 0; i < pyLen(possibleAnswer[key]); i++) {
        const item = pyItem(possibleAnswer[key], i)
        allowed.push(typeof item === "string" ? standardizeString(item) : item)
      }
      if (!pyIn(standardizedValue, allowed)) {
        result.error.push(`Invalid value for parameter ${repr(key)}: ${repr(value)}. Expected one of ${repr(allowed)}.`)
        result.error_type = "value_error:dict_value"
        flag = false
        break
      }
    }
    for (const [key, value] of Object.entries(possibleAnswer)) {
      if (!Object.hasOwn(modelOutput, key) && !pyIn("", value)) {
        result.error.push(`Missing dict key parameter: '${key}'.`)
        result.error_type = "value_error:dict_key"
        flag = false
        break
      }
    }
    if (flag) return { valid: true, error: [] }
  }
  return result
}

function listDictChecker(param: string, modelOutput: PyValue[], possibleAnswers: PyValue[]): Result {
  let result: Result = { valid: false, error: [], error_type: "list_dict_checker:unclear" }
  for (const answer of possibleAnswers) {
    let flag = true
    if (modelOutput.length !== pyLen(answer)) {
      result = { valid: false, error: ["Wrong number of dictionaries in the list."], error_type: "value_error:list_dict_count" }
      continue
    }
    for (let i = 0; i < modelOutput.length; i++) {
      result = dictChecker(param, modelOutput[i] as Dict, [pyItem(answer, i)])
      if (!result.valid) {
        flag = false
        break
      }
    }
    if (flag) return { valid: true, error: [] }
  }
  return result
}

export function simpleFunctionChecker(
  funcDescription: FunctionDoc,
  modelOutput: Dict,
  possibleAnswerByName: Dict,
  language: Language,
): Result {
  const possibleAnswer = Object.values(possibleAnswerByName)[0] as Dict
  const paramDetails = funcDescription.parameters.properties
  const requiredParams = funcDescription.parameters.required
  if (requiredParams === undefined) throw new Error("KeyError: 'required'")
  const result: Result = { valid: true, error: [], error_type: "simple_function_checker:unclear" }
  const funcName = convertFuncName(funcDescription.name)

  if (!Object.hasOwn(modelOutput, funcName)) {
    return {
      valid: false,
      error: [`Function name ${repr(funcName)} not found in model output.`],
      error_type: "simple_function_checker:wrong_func_name",
    }
  }
  const modelParams = modelOutput[funcName] as Dict

  for (const param of requiredParams) {
    if (!Object.hasOwn(modelParams, param)) {
      return { valid: false, error: [`Missing required parameter: ${repr(param)}.`], error_type: "simple_function_checker:missing_required" }
    }
  }

  for (let [param, value] of Object.entries(modelParams)) {
    if (!Object.hasOwn(paramDetails, param) || !Object.hasOwn(possibleAnswer, param)) {
      return { valid: false, error: [`Unexpected parameter: ${repr(param)}.`], error_type: "simple_function_checker:unexpected_param" }
    }
    const details = paramDetails[param] as Dict
    const expectedTypeDescription = details.type as string
    let expectedTypeConverted: PyType | "set"
    let nestedTypeConverted: PyType | "set" | null = null

    if (language === "java") {
      expectedTypeConverted = lookup(JAVA_TYPE_CONVERSION, expectedTypeDescription) as PyType | "set"
      if (typeof value !== "string") {
        return {
          valid: false,
          error: [`Incorrect type for parameter ${repr(param)}. Expected type String, got ${pyType(value)}. Parameter value: ${repr(value)}.`],
          error_type: "type_error:java",
        }
      }
      if (NESTED_CONVERSION_TYPE_LIST.includes(expectedTypeDescription)) {
        const nestedType = ((details.items as Dict).type) as string
        nestedTypeConverted = lookup(JAVA_TYPE_CONVERSION, nestedType) as PyType | "set"
        value = javaTypeConverter(value, expectedTypeDescription, nestedType)
      } else {
        value = javaTypeConverter(value, expectedTypeDescription)
      }
    } else if (language === "javascript") {
      expectedTypeConverted = lookup(JS_TYPE_CONVERSION, expectedTypeDescription) as PyType
      if (typeof value !== "string") {
        return {
          valid: false,
          error: [`Incorrect type for parameter ${repr(param)}. Expected type String, got ${pyType(value)}. Parameter value: ${repr(value)}.`],
          error_type: "type_error:js",
        }
      }
      if (NESTED_CONVERSION_TYPE_LIST.includes(expectedTypeDescription)) {
        const nestedType = ((details.items as Dict).type) as string
        nestedTypeConverted = lookup(JS_TYPE_CONVERSION, nestedType) as PyType
        value = jsTypeConverter(value, expectedTypeDescription, nestedType)
      } else {
        value = jsTypeConverter(value, expectedTypeDescription)
      }
    } else {
      expectedTypeConverted = lookup(PYTHON_TYPE_MAPPING, expectedTypeDescription)
      if (PYTHON_NESTED_TYPE_CHECK_LIST.includes(expectedTypeDescription)) {
        const nestedType = ((details.items as Dict).type) as string
        nestedTypeConverted = lookup(PYTHON_TYPE_MAPPING, nestedType)
      }
    }

    // Python's int-to-float conversion for a float parameter
    if (language === "python" && expectedTypeDescription === "float" && typeof value === "bigint") value = Number(value)

    const typeCheck = typeChecker(param, value, possibleAnswer[param], expectedTypeDescription, expectedTypeConverted, nestedTypeConverted)
    const isVariable = typeCheck.is_variable
    if (!typeCheck.valid) return typeCheck

    if (!isVariable) {
      if (expectedTypeConverted === "dict") {
        const checked = dictChecker(param, value as Dict, possibleAnswer[param] as PyValue[])
        if (!checked.valid) return checked
        continue
      } else if (expectedTypeConverted === "list" && nestedTypeConverted === "dict") {
        const checked = listDictChecker(param, value as PyValue[], possibleAnswer[param] as PyValue[])
        if (!checked.valid) return checked
        continue
      } else if (expectedTypeConverted === "str") {
        const checked = stringChecker(param, value as string, possibleAnswer[param])
        if (!checked.valid) return checked
        continue
      } else if (expectedTypeConverted === "list") {
        const checked = listChecker(param, value as PyValue[], possibleAnswer[param])
        if (!checked.valid) return checked
        continue
      }
    }

    if (!pyIn(value, possibleAnswer[param])) {
      return {
        valid: false,
        error: [`Invalid value for parameter ${repr(param)}: ${repr(value)}. Expected one of ${repr(possibleAnswer[param])}.`],
        error_type: "value_error:others",
      }
    }
  }

  for (const param of Object.keys(possibleAnswer)) {
    if (!Object.hasOwn(modelParams, param) && !pyIn("", possibleAnswer[param])) {
      return {
        valid: false,
        error: [`Optional parameter ${repr(param)} not provided and not marked as optional.`],
        error_type: "simple_function_checker:missing_optional",
      }
    }
  }
  return result
}

function parallelFunctionCheckerNoOrder(
  funcDescriptions: FunctionDoc[],
  modelOutput: Dict[],
  possibleAnswers: Dict[],
  language: Language,
): Result {
  if (modelOutput.length !== possibleAnswers.length) {
    return { valid: false, error: ["Wrong number of functions."], error_type: "parallel_function_checker_no_order:wrong_count" }
  }
  const matched: number[] = []
  let result: Result = { valid: true, error: [] }
  for (let i = 0; i < possibleAnswers.length; i++) {
    const funcNameExpected = Object.keys(possibleAnswers[i])[0]
    const funcDescription = findDescription(funcDescriptions, funcNameExpected)
    const allErrors: unknown[] = []
    for (let index = 0; index < modelOutput.length; index++) {
      if (matched.includes(index)) continue
      result = simpleFunctionChecker(funcDescription, modelOutput[index], possibleAnswers[i], language)
      if (result.valid) {
        matched.push(index)
        break
      }
      allErrors.push({ [`Model Result Index ${index}`]: { sub_error: result.error, sub_error_type: result.error_type } })
    }
    if (!result.valid) {
      allErrors.unshift(`Could not find a matching function for index ${i} of possible answers.`)
      return { valid: false, error: allErrors, error_type: "parallel_function_checker_no_order:cannot_find_match" }
    }
  }
  return { valid: true, error: [] }
}

function multipleFunctionChecker(
  funcDescriptions: FunctionDoc[],
  modelOutput: Dict[],
  possibleAnswers: Dict[],
  language: Language,
): Result {
  if (modelOutput.length !== possibleAnswers.length) {
    return { valid: false, error: ["Wrong number of functions."], error_type: "multiple_function_checker:wrong_count" }
  }
  const funcNameExpected = Object.keys(possibleAnswers[0])[0]
  const funcDescription = findDescription(funcDescriptions, funcNameExpected)
  return simpleFunctionChecker(funcDescription, modelOutput[0], possibleAnswers[0], language)
}
