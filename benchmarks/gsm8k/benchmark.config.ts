// GSM8K, the 1,319 problems of its test split, as two evals (docs/benchmarks.md):
// zero-shot chain of thought (Inspect AI's prompt) and 8-shot chain of thought (the exemplars of
// Wei et al. that the OLMo suite uses). Data: data/ (tools/fetch-benchmark-data, data/SOURCE.json).
export default {
  protocolVersion: 1,
  title: "GSM8K",
  version: "1.0.0",
  evals: ["evals/zero-shot.ts", "evals/few-shot.ts"],
}
