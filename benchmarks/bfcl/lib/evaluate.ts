// The BFCL grade of one response (bfcl-eval 2026.3.23, eval_checker/eval_runner.py): the model's
// function calls as BFCL decodes a function-calling model's output (each call's name and its JSON
// arguments, OpenAICompletionsHandler.decode_ast), then
//   * irrelevance: pass when no call was made (or none decodes into a proper call),
//     _evaluate_single_relevance_entry;
//   * the AST categories: the decoded calls must be in function-call format and pass the AST
//     checker against the possible answers (ast_checker.ts), _evaluate_single_ast_entry.
// Only the calls of the model's first step are graded: BFCL sends each question once and grades
// that one reply. A run whose tool loop went on (--max-steps above 1) made later calls, which
// are ignored here and counted in the details.

import { FunctionDoc, Language, astChecker } from "./ast_checker"
import { PyValue, fromJs, pyJsonLoads, pyType } from "./python_values"

type Dict = { [key: string]: PyValue }
type RawCall = Record<string, unknown> & { step?: unknown; function?: Record<string, unknown> }
type NormalizedCall = { toolName: string | null; input: unknown; valid: boolean }
export type BfclCase = { category: string; functions: FunctionDoc[]; answer: string | null }

export function language(category: string): Language {
  if (category.includes("javascript")) return "javascript"
  return category.includes("java") ? "java" : "python"
}

/** The JSON text of a call's arguments when the record kept it (OpenAI's `arguments` string, or an
 * input given as a string), which tells 5 from 5.0 as Python's json.loads does; else null. */
function argumentsText(raw: RawCall): string | null {
  for (const value of [raw.function?.arguments, raw.function?.input, raw.input, raw.args, raw.arguments]) {
    if (typeof value === "string") return value
    if (value !== undefined) return null
  }
  return null
}

class DecodeError extends Error {}

type ParamDoc = { type?: string; items?: ParamDoc; properties?: Record<string, ParamDoc> }

/** A call's input that JavaScript already parsed (an AI SDK record), whose number texts are gone:
 * a whole number is read as a float where the function's doc declares a float there (a model
 * writes 3.0 for a float), else as an int (python_values.fromJs). */
function typedFromJs(value: unknown, doc: ParamDoc | undefined): PyValue {
  if (typeof value === "number" && Number.isInteger(value) && doc?.type === "float") return value
  if (Array.isArray(value)) return value.map((v) => typedFromJs(v, doc?.items))
  if (value && typeof value === "object") {
    const out: Dict = Object.create(null)
    for (const [k, v] of Object.entries(value)) out[k] = typedFromJs(v, doc?.properties?.[k])
    return out
  }
  return fromJs(value)
}

function decode(raw: RawCall[], normalized: NormalizedCall[], functions: FunctionDoc[]): Dict[] {
  return normalized.map((call, i) => {
    if (call.toolName === null) throw new DecodeError(`call ${i + 1} is not a recognizable function call`)
    const text = argumentsText(raw[i] ?? {})
    let params: PyValue
    if (text !== null) {
      try {
        params = pyJsonLoads(text)
      } catch {
        throw new DecodeError(`call ${i + 1} (${call.toolName}): its arguments are not JSON`)
      }
    } else if (call.input === null || call.input === undefined) {
      throw new DecodeError(`call ${i + 1} (${call.toolName}) has no arguments`)
    } else {
      const doc = functions.find((f) => f.name.replaceAll(".", "_") === call.toolName)
      params = typedFromJs(call.input, doc ? { properties: doc.parameters.properties as Record<string, ParamDoc> } : undefined)
    }
    const item: Dict = Object.create(null)
    item[call.toolName] = params
    return item
  })
}

// bfcl_eval/utils.py
function isFunctionCallingFormatOutput(decoded: Dict[]): boolean {
  return decoded.every((item) => Object.keys(item).length === 1 && pyType(Object.values(item)[0]) === "dict")
}

function isEmptyOutput(decoded: Dict[]): boolean {
  if (!isFunctionCallingFormatOutput(decoded)) return true
  return decoded.length === 0 || (decoded.length === 1 && Object.keys(decoded[0]).length === 0)
}

type Input = { toolCalls: RawCall[]; normalizedToolCalls: NormalizedCall[]; caseData: BfclCase }

export function evaluate({ toolCalls, normalizedToolCalls, caseData }: Input) {
  const first: number[] = []
  normalizedToolCalls.forEach((_, i) => {
    const step = toolCalls[i]?.step
    if (step === undefined || step === 0) first.push(i)
  })
  const ignored = normalizedToolCalls.length - first.length
  const raw = first.map((i) => toolCalls[i])
  const calls = first.map((i) => normalizedToolCalls[i])
  const names = calls.map((c) => c.toolName ?? "?").join(", ") || "no call"
  const base = { calls: first.length, laterCallsIgnored: ignored }

  let decoded: Dict[] | null = null
  let decodeError: string | null = null
  try {
    decoded = decode(raw, calls, caseData.functions)
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err
    decodeError = err.message
  }

  if (caseData.category.includes("irrelevance")) {
    const passed = decoded === null || isEmptyOutput(decoded)
    return {
      passed,
      message: passed ? `no function call (${names}), as expected` : `made a function call (${names}) where none applies`,
      details: { ...base, errorType: passed ? null : "irrelevance_error:decoder_success" },
    }
  }
  if (decoded === null) {
    return { passed: false, message: `cannot decode the calls: ${decodeError}`, details: { ...base, errorType: "ast_decoder:decoder_failed" } }
  }
  if (!isFunctionCallingFormatOutput(decoded)) {
    return {
      passed: false,
      message: "a call's arguments are not a JSON object",
      details: { ...base, errorType: "ast_decoder:decoder_wrong_output_format" },
    }
  }
  const answer = pyJsonLoads(caseData.answer as string) as { ground_truth: Dict[] }
  const result = astChecker(caseData.functions, decoded, answer.ground_truth, language(caseData.category), caseData.category)
  const why = result.error.length ? (typeof result.error[0] === "string" ? result.error[0] : JSON.stringify(result.error[0])) : ""
  return {
    passed: result.valid,
    message: result.valid ? `the calls (${names}) match a possible answer` : `${names}: ${why}`.slice(0, 500),
    details: { ...base, errorType: result.valid ? null : (result.error_type ?? null) },
  }
}
