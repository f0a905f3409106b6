// The peer of bench/local_model.py: node-llama-cpp's own generation loop on
// the same prompts and settings as `trunchbull run --model llamacpp:…`, with
// the same runtime, binary, threads and context size, in one process: load
// the model, then one LlamaChat.generateResponse per prompt (the sequence is
// reused, as node-llama-cpp does by default). One JSON line per response on
// stdout, as soon as it is generated: { tokens, text }.
//
//   node llamacpp_loop.mjs CONFIG_JSON
//   CONFIG_JSON: { runtime, path, threads, contextSize, prompts: [{ system, prompt }],
//                  settings: { temperature, topP, seed, maxTokens } }
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const config = JSON.parse(process.argv[2]);
const require = createRequire(`${config.runtime}/package.json`);
const { getLlama, LlamaChat } = await import(pathToFileURL(require.resolve("node-llama-cpp")).href);
const llama = await getLlama("lastBuild", { logLevel: "error", progressLogs: false, tempDir: false, maxThreads: config.threads });
const model = await llama.loadModel({ modelPath: config.path, gpuLayers: 0 });
const context = await model.createContext({
  contextSize: Math.min(model.trainContextSize || config.contextSize, config.contextSize), sequences: 1, threads: config.threads,
});
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence, autoDisposeSequence: false });
for (const { system, prompt } of config.prompts) {
  const history = [...(system ? [{ type: "system", text: system }] : []), { type: "user", text: prompt }, { type: "model", response: [] }];
  if (process.env.CLEAR) await sequence.clearHistory();
  const before = sequence.tokenMeter.usedOutputTokens;
  const result = await chat.generateResponse(history, { ...config.settings });
  process.stdout.write(`${JSON.stringify({ tokens: sequence.tokenMeter.usedOutputTokens - before, text: result.response })}\n`);
}
process.exit(0);
