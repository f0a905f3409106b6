// One sample's record as the model caller writes it (rundir/schema.py holds
// its fields), built the same way for a live sample (worker.mjs: one
// generateText loop) and for a sample whose model calls went through a
// provider's batch API (batch_step.mjs: one step per batch, the loop across
// batches): each step's tool calls and results, usage and cost are taken
// from the AI SDK's step result, and the record is kept within the record
// limit (limits.mjs).
import { recordLine, shallow } from "./limits.mjs";
import { plainStringifySafe, toJsonData } from "../shared/json_walk.mjs";
import { errorText } from "../shared/intrinsics.mjs";

const stringify = JSON.stringify; // captured before any user code runs
const parse = JSON.parse;

export function jsonSafe(value) {
  if (value === undefined) return null;
  try {
    const text = stringify(value); // what the model was sent (toJSON included)
    return text === undefined ? null : parse(text);
  } catch {
    return errorText(value);
  }
}

// An error as a record's { kind, message } (rundir/schema.py ERROR_KINDS).
export function classify(err, sample) {
  if (sample.failure) return { kind: sample.failure.trunchbullKind ?? "error", message: sample.failure.message };
  if (err && typeof err === "object" && typeof err.trunchbullKind === "string") return { kind: err.trunchbullKind, message: err.message };
  // the transport's own failures (http.mjs), as the provider wrapped them
  const kind = err && typeof err === "object" ? (err.cause?.trunchbullKind ?? err.cause?.cause?.trunchbullKind) : undefined;
  if (typeof kind === "string") return { kind, message: `${errorText(err)}; cause: ${errorText(err.cause)}` };
  const status = err && typeof err === "object" ? err.statusCode : undefined;
  if (status === 429) return { kind: "rate-limit", message: `${errorText(err)} (HTTP 429 after ${sample.retries} retries)` };
  if (typeof status === "number") return { kind: "provider", message: `${errorText(err)} (HTTP ${status})` };
  const cause = err && typeof err === "object" && err.cause ? `; cause: ${errorText(err.cause)}` : "";
  return { kind: "provider", message: `${errorText(err)}${cause}` };
}

export function usageOf(u) {
  const n = (v) => (Number.isFinite(v) ? v : null);
  return { inputTokens: n(u?.inputTokens), outputTokens: n(u?.outputTokens), totalTokens: n(u?.totalTokens) };
}

export function addUsage(total, u) {
  for (const key of ["inputTokens", "outputTokens", "totalTokens"]) {
    if (Number.isFinite(u?.[key])) total[key] = (total[key] ?? 0) + u[key];
  }
}

// A step's cost at `prices` (USD per token: input, output, cachedInput).
export function stepCost(u, prices) {
  const input = Number.isFinite(u?.inputTokens) ? u.inputTokens : 0;
  const output = Number.isFinite(u?.outputTokens) ? u.outputTokens : 0;
  const read = u?.inputTokenDetails?.cacheReadTokens ?? u?.cachedInputTokens;
  const cached = Number.isFinite(read) ? Math.min(read, input) : 0;
  return (input - cached) * prices.input + cached * prices.cachedInput + output * prices.output;
}

// A step's tool calls (each with `step`, the 0-based model call that made it: an evaluator may
// grade the first step only, as single-turn function-calling benchmarks do) and tool results.
export function stepParts(step, index, calls, results, repairs, scrub) {
  for (const call of step.toolCalls ?? []) {
    const input = shallow(jsonSafe(call.input), repairs);
    calls.push({ type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input, step: index });
  }
  for (const part of step.content ?? []) {
    if (part.type === "tool-result") {
      results.push({ toolCallId: part.toolCallId, toolName: part.toolName, output: shallow(jsonSafe(part.output), repairs) });
    } else if (part.type === "tool-error") {
      results.push({ toolCallId: part.toolCallId, toolName: part.toolName, error: scrub(errorText(part.error)) });
    }
  }
}

// What a sample's steps add up to, as they finish (`prices` null: the price is unknown).
export class StepTotals {
  constructor(prices, scrub) {
    this.prices = prices;
    this.scrub = scrub;
    this.calls = [];
    this.results = [];
    this.usage = {};
    this.steps = 0;
    this.cost = 0;
    this.lastFinish = null;
  }

  // A step the AI SDK just finished; what it added (a batch sample keeps it for its next step).
  add(step, repairs) {
    const calls = [];
    const results = [];
    stepParts(step, this.steps, calls, results, repairs, this.scrub);
    const u = step.usage;
    const read = u?.inputTokenDetails?.cacheReadTokens ?? u?.cachedInputTokens;
    const usage = { inputTokens: u?.inputTokens, outputTokens: u?.outputTokens, totalTokens: u?.totalTokens, cacheReadTokens: read };
    const saved = { calls, results, usage, finishReason: step.finishReason ?? null };
    this.restore(saved);
    return saved;
  }

  // A step as add() returned it (for a batch sample, one finished in an earlier batch).
  restore(saved) {
    for (const call of saved.calls) this.calls.push(call);
    for (const result of saved.results) this.results.push(result);
    this.steps += 1;
    this.lastFinish = saved.finishReason;
    const usage = { ...saved.usage, inputTokenDetails: { cacheReadTokens: saved.usage?.cacheReadTokens } };
    addUsage(this.usage, usage);
    if (this.prices) this.cost += stepCost(usage, this.prices);
  }
}

// The record's line (rundir/schema.py's fields, in its order), within `maxRecordBytes`.
export function recordOf({ caseId, repeat, output, totals, finishReason, latencyMs, attempts, error, repairs, batch }, maxRecordBytes) {
  const record = {
    caseId,
    repeat,
    output,
    toolCalls: totals.calls,
    toolResults: totals.results,
    steps: totals.steps,
    finishReason,
    usage: usageOf(totals.usage),
    latencyMs,
    attempts,
    cached: false,
    error,
    cost: totals.prices ? Math.round(totals.cost * 1e9) / 1e9 : null,
    repaired: repairs.size ? [...repairs].sort() : null,
    batch: batch ?? null,
  };
  let line;
  try {
    // Tool code may have made a toJSON reachable from plain objects: then the
    // record goes out as a null-prototype copy, which JSON.stringify cannot hook.
    const toText = plainStringifySafe() ? stringify : (value) => stringify(toJsonData(value).value);
    line = recordLine(record, maxRecordBytes, toText);
  } catch (err) {
    record.output = "";
    record.toolCalls = [];
    record.toolResults = [];
    record.error = { kind: "record", message: `the sample cannot be recorded: ${errorText(err)}` };
    line = stringify(record);
  }
  return { record, line };
}
