// The `llamacpp:PATH.gguf` model (SPEC §8.1): a local GGUF model run in this
// worker by node-llama-cpp, wrapped as an AI SDK language model
// (LanguageModelV3), so it goes through the same generateText call as every
// other model. node-llama-cpp comes from the runtime directory the Python side
// installed (trunchbull/run/local_runtime.py); its prebuilt CPU binary is
// loaded as the recorded last build (no test process).
//
// * One model instance and one context sequence per worker, loaded once and
//   reused by every sample; one generation at a time (calls queue here; the
//   parent also sends a worker one sample at a time).
// * The chat template comes from the GGUF (node-llama-cpp's chat wrapper
//   resolution). Every call starts from an empty sequence, so a sample's
//   output never depends on what the worker ran before it.
// * Call settings map to the sampler: temperature, topP, seed, maxOutputTokens.
// * Tools are offered through node-llama-cpp's function calling when the
//   GGUF's chat template handles tools; otherwise the call runs without them
//   and returns an `unsupported` warning (the run says so once).
// * Usage counts real tokens: the prompt's tokens evaluated and the tokens
//   generated, from the sequence's token meter.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { toGbnfSchema } from "./llamacpp_schema.mjs";

const NO_TOOLS =
  "the model cannot call tools (its GGUF chat template has no tool support): samples that offer tools run without them";

function toolCallsTemplate(template) {
  return typeof template === "string" && /\btools\b/.test(template);
}

function textOf(content) {
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) if (part.type === "text") text += part.text;
  return text;
}

function resultValue(output) {
  if (!output || typeof output !== "object") return output ?? null;
  switch (output.type) {
    case "text":
    case "json":
      return output.value;
    case "error-text":
    case "error-json":
      return { error: output.value };
    case "execution-denied":
      return { error: output.reason ?? "the tool call was denied" };
    default:
      return output.value ?? null;
  }
}

function parseInput(input) {
  if (typeof input !== "string") return input ?? {};
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

// The AI SDK prompt as node-llama-cpp chat history, ending with the model
// response to generate (or continue, after tool results).
export function toChatHistory(prompt) {
  const history = [];
  const calls = new Map(); // toolCallId → its functionCall item
  for (const message of prompt) {
    if (message.role === "system") history.push({ type: "system", text: textOf(message.content) });
    else if (message.role === "user") history.push({ type: "user", text: textOf(message.content) });
    else if (message.role === "assistant") {
      const response = [];
      for (const part of message.content) {
        if (part.type === "text") response.push(part.text);
        else if (part.type === "tool-call") {
          const call = { type: "functionCall", name: part.toolName, params: parseInput(part.input), result: null };
          calls.set(part.toolCallId, call);
          response.push(call);
        }
      }
      const last = history[history.length - 1];
      if (last?.type === "model") last.response.push(...response);
      else history.push({ type: "model", response });
    } else if (message.role === "tool") {
      for (const part of message.content) {
        const call = calls.get(part.toolCallId);
        if (call && part.type === "tool-result") call.result = resultValue(part.output);
      }
    }
  }
  if (history[history.length - 1]?.type !== "model") history.push({ type: "model", response: [] });
  return { history, callsSoFar: calls.size };
}

const FINISH = {
  eogToken: "stop",
  stopGenerationTrigger: "stop",
  customStopTrigger: "stop",
  maxTokens: "length",
  functionCalls: "tool-calls",
};

function usage(input, output) {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

function loadNodeLlamaCpp(runtime) {
  const require = createRequire(`${runtime}/package.json`);
  const entry = require.resolve("node-llama-cpp");
  const version = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")).version;
  return import(pathToFileURL(entry).href).then((module) => ({ module, version }));
}

// spec: { path, runtime, threads, contextSize }
export async function llamacppModel({ path, runtime, threads, contextSize }) {
  const started = performance.now();
  const { module: nlc, version } = await loadNodeLlamaCpp(runtime);
  const llama = await nlc.getLlama("lastBuild", {
    logLevel: "error", progressLogs: false, tempDir: false, maxThreads: threads,
  });
  const model = await llama.loadModel({ modelPath: path, gpuLayers: 0 });
  const size = Math.min(model.trainContextSize || contextSize, contextSize);
  const context = await model.createContext({ contextSize: size, sequences: 1, threads });
  const sequence = context.getSequence();
  const chat = new nlc.LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
  const template = model.fileInfo?.metadata?.tokenizer?.chat_template;
  const callsTools = toolCallsTemplate(template);
  const meter = sequence.tokenMeter;
  // The first generation pays one-time costs (seconds on a busy machine):
  // paid here, so that no sample's latency includes them.
  await chat.generateResponse([{ type: "user", text: "Hi" }, { type: "model", response: [] }], { maxTokens: 1 });
  await sequence.clearHistory();

  let tail = Promise.resolve();
  function exclusive(fn) {
    const run = tail.then(fn, fn);
    tail = run.catch(() => {});
    return run;
  }

  async function generate(options) {
    const warnings = [];
    const offered = (options.tools ?? []).filter((t) => t.type === "function");
    let functions;
    if (offered.length && options.toolChoice?.type !== "none") {
      if (callsTools) {
        functions = {};
        for (const tool of offered) {
          functions[tool.name] = { description: tool.description, params: toGbnfSchema(tool.inputSchema) };
        }
      } else {
        warnings.push({ type: "unsupported", feature: "tools", details: NO_TOOLS });
      }
    }
    for (const [name, value] of [["topK", options.topK], ["presencePenalty", options.presencePenalty],
      ["frequencyPenalty", options.frequencyPenalty], ["stopSequences", options.stopSequences?.length ? 1 : undefined]]) {
      if (value !== undefined) warnings.push({ type: "unsupported", feature: name });
    }
    const { history, callsSoFar } = toChatHistory(options.prompt);
    await sequence.clearHistory();
    const inputBefore = meter.usedInputTokens;
    const outputBefore = meter.usedOutputTokens;
    const result = await chat.generateResponse(history, {
      maxTokens: options.maxOutputTokens,
      temperature: options.temperature,
      topP: options.topP,
      seed: options.seed,
      signal: options.abortSignal,
      functions,
    });
    const content = [];
    for (const part of result.fullResponse) {
      if (typeof part === "string") {
        if (part) content.push({ type: "text", text: part });
      } else if (part?.type === "segment" && part.segmentType === "thought" && part.text) {
        content.push({ type: "reasoning", text: part.text });
      }
    }
    (result.functionCalls ?? []).forEach((call, i) => {
      content.push({
        type: "tool-call", toolCallId: `call_${callsSoFar + i + 1}`, toolName: call.functionName,
        input: JSON.stringify(call.params ?? {}),
      });
    });
    const reason = result.metadata.stopReason;
    return {
      content,
      finishReason: { unified: FINISH[reason] ?? "other", raw: reason },
      usage: usage(meter.usedInputTokens - inputBefore, meter.usedOutputTokens - outputBefore),
      warnings,
    };
  }

  const info = {
    file: basename(path),
    name: model.fileInfo?.metadata?.general?.name ?? null,
    architecture: model.fileInfo?.metadata?.general?.architecture ?? null,
    sizeBytes: model.size,
    contextSize: context.contextSize,
    threads,
    chatWrapper: chat.chatWrapper.wrapperName,
    toolCalls: callsTools,
    nodeLlamaCpp: version,
    loadMs: Math.round(performance.now() - started),
  };

  return {
    specificationVersion: "v3",
    provider: "trunchbull.llamacpp",
    modelId: basename(path),
    supportedUrls: {},
    doGenerate: (options) => exclusive(() => generate(options)),
    async doStream() {
      throw new Error("the llamacpp model answers generateText calls only");
    },
    describe: () => info,
  };
}
