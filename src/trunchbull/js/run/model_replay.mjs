// The `replay:PATH` model (SPEC §8.1): a real AI SDK language model
// (LanguageModelV3) that answers from recorded responses, a JSONL file in the
// responses format (caseId, output, and optionally toolCalls, finishReason,
// usage, repeat). A sample is matched by case ID and repeat (a line without
// `repeat` answers every repeat of its case). Recorded tool calls are made in
// the first step, so the case's real tools execute them; the recorded output
// follows in the next step. A case missing from the file fails its sample.
import { readFileSync } from "node:fs";
import { usage as estimatedUsage } from "./model_echo.mjs";

const UNIFIED = new Set(["stop", "length", "content-filter", "tool-calls", "error", "other"]);

export class ReplayMissingError extends Error {
  constructor(message) {
    super(message);
    this.name = "ReplayMissingError";
    this.trunchbullKind = "replay-missing";
  }
}

function load(path) {
  const byKey = new Map();
  const lines = readFileSync(path, "utf8").split("\n");
  for (const line of lines) {
    if (!line.trim()) continue;
    let row;
    try {
      row = JSON.parse(line);
    } catch {
      continue; // the caller checked the file; a torn last line is skipped
    }
    if (!row || typeof row !== "object" || typeof row.caseId !== "string") continue;
    const key = Number.isInteger(row.repeat) ? `${row.caseId}\u0000${row.repeat}` : row.caseId;
    if (!byKey.has(key)) byKey.set(key, row);
  }
  return byKey;
}

function toolCallsOf(row) {
  const calls = Array.isArray(row.toolCalls) ? row.toolCalls : [];
  return calls.map((call, index) => {
    const fn = call && typeof call.function === "object" && call.function ? call.function : null;
    const toolName = call?.toolName ?? fn?.name ?? "unknown";
    let input = call?.input ?? call?.args;
    if (input === undefined && fn) input = fn.arguments;
    return {
      type: "tool-call",
      toolCallId: String(call?.toolCallId ?? call?.id ?? `replay-${index}`),
      toolName: String(toolName),
      input: typeof input === "string" ? input : JSON.stringify(input ?? {}),
    };
  });
}

function recordedUsage(row, output) {
  const u = row.usage && typeof row.usage === "object" ? row.usage : null;
  if (!u) return estimatedUsage(0, output.length);
  const input = Number.isFinite(u.inputTokens) ? u.inputTokens : undefined;
  const out = Number.isFinite(u.outputTokens) ? u.outputTokens : undefined;
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: out, text: out, reasoning: undefined },
  };
}

const NO_USAGE = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
};

export function replayModel({ path }) {
  let rows = null;
  return {
    specificationVersion: "v3",
    provider: "trunchbull.replay",
    modelId: path,
    supportedUrls: {},
    async doGenerate(options) {
      rows ??= load(path);
      const sample = options.providerOptions?.trunchbull ?? {};
      const row = rows.get(`${sample.caseId}\u0000${sample.repeat}`) ?? rows.get(sample.caseId);
      if (!row) throw new ReplayMissingError(`no recorded response for case ${JSON.stringify(sample.caseId)} in the replay file`);
      const calls = toolCallsOf(row);
      const afterTools = options.prompt.some((message) => message.role === "tool");
      if (calls.length && !afterTools) {
        return { content: calls, finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: NO_USAGE, warnings: [] };
      }
      const output = typeof row.output === "string" ? row.output : "";
      const finish = typeof row.finishReason === "string" ? row.finishReason : "stop";
      return {
        content: output ? [{ type: "text", text: output }] : [],
        finishReason: { unified: UNIFIED.has(finish) ? finish : "other", raw: finish },
        usage: recordedUsage(row, output),
        warnings: [],
      };
    },
    async doStream() {
      throw new Error("the replay model answers generateText calls only");
    },
  };
}
