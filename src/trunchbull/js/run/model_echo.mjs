// The `echo` model (SPEC §8.1): a real AI SDK language model (LanguageModelV3)
// whose output is the case prompt. No tool calls; usage counted as
// characters / 4, rounded up. It exists for tests, benchmarks and offline
// use, and goes through the same generateText call as every other model.

function textOf(message) {
  if (typeof message.content === "string") return message.content;
  let text = "";
  for (const part of message.content) if (part.type === "text") text += part.text;
  return text;
}

export function promptText(prompt) {
  let all = 0;
  let lastUser = "";
  for (const message of prompt) {
    const text = textOf(message);
    all += text.length;
    if (message.role === "user") lastUser = text;
  }
  return { lastUser, chars: all };
}

export function usage(inputChars, outputChars) {
  const input = Math.ceil(inputChars / 4);
  const output = Math.ceil(outputChars / 4);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

export function echoModel() {
  return {
    specificationVersion: "v3",
    provider: "trunchbull.echo",
    modelId: "echo",
    supportedUrls: {},
    async doGenerate(options) {
      const { lastUser, chars } = promptText(options.prompt);
      return {
        content: [{ type: "text", text: lastUser }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(chars, lastUser.length),
        warnings: [],
      };
    },
    async doStream() {
      throw new Error("the echo model answers generateText calls only");
    },
  };
}
