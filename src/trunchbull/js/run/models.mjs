// The model registry (SPEC §8.1): a model SPEC, already checked by the
// Python side ({ provider, model, baseUrl, apiKey, path, and for a local
// model runtime, threads, contextSize }), becomes an AI SDK language model.
// Built-in and local models implement LanguageModelV3 in their own modules;
// hosted ones come from the official @ai-sdk/* provider packages of the pinned
// toolchain (bundled with `ai`). Every provider gets the same retrying fetch.
// Nothing after this asks which provider a model is (a model may describe
// itself: `describe()`).
import { echoModel } from "./model_echo.mjs";
import { llamacppModel } from "./model_llamacpp.mjs";
import { replayModel } from "./model_replay.mjs";

const FACTORIES = {
  echo: () => echoModel(),
  replay: ({ path }) => replayModel(path),
  llamacpp: ({ path, runtime, threads, contextSize }) => llamacppModel({ path, runtime, threads, contextSize }),
  openai: ({ model, baseUrl, apiKey }, sdk, fetch) =>
    // chat completions, the protocol every OpenAI-style server speaks (the
    // provider's default for `openai(model)` is the Responses API)
    sdk.createOpenAI({ apiKey, baseURL: baseUrl, fetch }).chat(model),
  anthropic: ({ model, baseUrl, apiKey }, sdk, fetch) => sdk.createAnthropic({ apiKey, baseURL: baseUrl, fetch })(model),
  google: ({ model, baseUrl, apiKey }, sdk, fetch) =>
    sdk.createGoogleGenerativeAI({ apiKey, baseURL: baseUrl, fetch })(model),
  "openai-compatible": ({ model, baseUrl, apiKey }, sdk, fetch) =>
    sdk.createOpenAICompatible({
      name: "openai-compatible", baseURL: baseUrl, apiKey, fetch, includeUsage: true,
    })(model),
};

// `sdk`: the AI SDK bundle of the run (trunchbull/run/sdk_bundle.py), which
// exports the provider's factory.
export async function createModel(spec, sdk, fetch) {
  const factory = FACTORIES[spec.provider];
  if (!factory) throw new Error(`unknown provider ${JSON.stringify(spec.provider)}`);
  return factory(spec, sdk, fetch);
}
