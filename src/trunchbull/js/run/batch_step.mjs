// One step of a sample run through a provider's batch API (SPEC §8.8), in
// the model caller. The provider's reply, read from the batch by the batch
// caller (batch.mjs) as the provider's own LanguageModelV4 result, goes
// through the same generateText call as a live reply: a model that answers
// once with it, held to the same limits (limits.mjs), with the case's tools
// validated and executed in the tool executor as they are live, and the
// step's tool calls, results, usage and cost taken from the same step
// result (record.mjs). When generateText would call the model again (the
// reply called tools, all of them ran, and --max-steps is not reached), the
// conversation it would send is the sample's next request: it is handed back
// (`b`), to join the next batch. Otherwise the sample's record is made.
//
// A sample's earlier steps come with the request (from the run directory's
// batch journal), so that any process can take a sample's next step: its
// tool modules get a fresh instance, and the tool calls its earlier steps
// executed are executed again first (their results dropped), so that a
// tool's state is what it was when the step's reply was asked for.
//
// request.batch: { result (the provider's reply) | error ({ kind, message }:
// the sample ends so), messages (the conversation so far; null at step 0),
// earlier (each earlier step as StepTotals.add returned it), replay ([tool,
// input] of each tool execution so far), repairs, latencyMs, attempts,
// requests (the record's `batch`: each request of the sample's) }.
import { limitedModel } from "./limits.mjs";
import { StepTotals, classify, jsonSafe, recordOf } from "./record.mjs";
import { ToolLoadError } from "./tool_client.mjs";

const stringify = JSON.stringify;

class NextStep extends Error {}

// The reply as the provider's model returned it to a live call (a Date where JSON has a string).
function revived(result) {
  const content = (result.content ?? []).map((part) => {
    // Earlier text is sent again in full, never as a reference to a stored item (OpenAI's itemId):
    // a later batch, maybe days later, does not depend on what the provider still stores.
    if (part.type !== "text" || part.providerMetadata?.openai?.itemId === undefined) return part;
    const { itemId: _, ...openai } = part.providerMetadata.openai;
    return { ...part, providerMetadata: { ...part.providerMetadata, openai } };
  });
  const response = result.response ?? {};
  return {
    ...result,
    content,
    warnings: result.warnings ?? [],
    response: { ...response, timestamp: typeof response.timestamp === "string" ? new Date(response.timestamp) : undefined },
  };
}

function cannedModel(result, spec) {
  let answered = false;
  return {
    specificationVersion: "v4",
    provider: `${spec.provider}.batch`,
    modelId: spec.model ?? "",
    supportedUrls: {},
    async doGenerate() {
      if (answered) throw new Error("the batch reply was used already");
      answered = true;
      return revived(result);
    },
    async doStream() {
      throw new Error("a batch reply answers generateText calls only");
    },
  };
}

// The step (or the record) of one sample; { record, kind } or { step } (JSON text).
export async function runBatchStep(request, { ai, toolClient, config, prices, scrub, inProgress }) {
  const b = request.batch;
  const controller = new AbortController();
  const sample = { k: request.k, controller, failure: null, retries: 0, repairs: new Set(b.repairs ?? []), ran: [] };
  inProgress.set(request.k, sample);
  const totals = new StepTotals(prices, scrub);
  for (const saved of b.earlier ?? []) totals.restore(saved);
  const offset = totals.steps;
  const timer = setTimeout(() => {
    const err = new Error(`the sample's step did not finish within the ${config.timeoutMs / 1000} s timeout`);
    err.trunchbullKind = "timeout";
    sample.failure ??= err;
    controller.abort(err);
  }, config.timeoutMs);
  let output = "";
  let finishReason = totals.lastFinish;
  let error = b.error ?? null;
  let next = null;
  let saved = null;
  try {
    if (!error) {
      if (request.tools.length && !toolClient) {
        const first = request.tools[0];
        throw new ToolLoadError(`the release has no tool ${stringify(typeof first === "string" ? first : first.tool)}`);
      }
      const tools = request.tools.length ? await toolClient.toolsFor(request.tools, sample, ai) : undefined;
      if (b.replay?.length) await toolClient.replay(b.replay, sample);
      const model = limitedModel(cannedModel(b.result, config.model), config.maxResponseBytes, () => sample.repairs);
      try {
        const result = await ai.generateText({
          model,
          system: request.system ?? undefined,
          ...(b.messages ? { messages: b.messages } : { prompt: request.prompt }),
          tools,
          stopWhen: ai.stepCountIs(config.maxSteps - offset),
          maxRetries: 0,
          telemetry: { isEnabled: false },
          abortSignal: controller.signal,
          ...config.settings,
          prepareStep: ({ stepNumber, messages }) => {
            if (stepNumber > 0) {
              next = messages; // what a live loop would send next
              throw new NextStep();
            }
            return undefined;
          },
          onStepFinish: (step) => {
            saved = totals.add(step, sample.repairs);
          },
        });
        output = result.text;
        finishReason = result.finishReason ?? totals.lastFinish;
      } catch (err) {
        if (next === null || sample.failure) throw err;
      }
    }
  } catch (err) {
    error = classify(err, sample);
    error.message = scrub(error.message);
    finishReason = totals.lastFinish;
    next = null;
  } finally {
    clearTimeout(timer);
    inProgress.delete(request.k);
    if (request.tools.length && toolClient) toolClient.close(request.k);
  }
  if (next !== null) {
    const step = { saved, next: jsonSafe(next), repairs: [...sample.repairs].sort(), ran: sample.ran };
    return { step: stringify(step) };
  }
  const { record, line } = recordOf(
    {
      caseId: request.caseId,
      repeat: request.repeat,
      output,
      totals,
      finishReason,
      latencyMs: b.latencyMs,
      attempts: b.attempts,
      error,
      repairs: sample.repairs,
      batch: b.requests,
    },
    config.maxRecordBytes,
  );
  return { record: line, kind: record.error ? record.error.kind : "-" };
}
