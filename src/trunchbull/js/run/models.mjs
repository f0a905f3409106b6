// Making the model of a run (SPEC §8.1). The model spec comes checked from
// the Python side ({ provider, model, baseUrl, apiKey, path, make, and for a
// local model runtime, threads, contextSize }); `make` is the provider's
// entry of trunchbull/run/providers.py, the one table of providers: either a
// built-in model's module here and its factory (each implements
// LanguageModelV3), or the factory of an official @ai-sdk/* package, bundled
// with `ai` into the run's SDK bundle (`sdk`). Every hosted provider gets
// the same retrying fetch. Nothing after this asks which provider a model is
// (a model may describe itself: `describe()`).

import { splitBaseUrl, withQuery } from "./base_url.mjs";

export async function createModel(spec, sdk, fetch) {
  const make = spec.make;
  if (make?.module) {
    const module = await import(new URL(`./${make.module}`, import.meta.url).href);
    return module[make.export](spec);
  }
  const provider = createProvider(spec, sdk, fetch);
  return make.method ? provider[make.method](spec.model) : provider(spec.model);
}

// The provider of an official @ai-sdk/* package (its batch API, for the batch caller: batch.mjs).
export function createProvider(spec, sdk, fetch) {
  const make = spec.make;
  const factory = make?.factory ? sdk[make.factory] : undefined;
  if (typeof factory !== "function") throw new Error(`provider ${JSON.stringify(spec.provider)} cannot be made here`);
  const { baseURL, query } = splitBaseUrl(spec.baseUrl);
  return factory({ apiKey: spec.apiKey, baseURL, fetch: withQuery(fetch, query), ...make.options, ...spec.factoryOptions });
}
