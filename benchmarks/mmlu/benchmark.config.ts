// MMLU, the 14,042 questions of its test split over 57 subjects, zero-shot, in Inspect AI's
// multiple-choice prompt, graded as Inspect's choice() scorer grades it (docs/benchmarks.md).
// Data: data/test.jsonl (tools/fetch-benchmark-data, data/SOURCE.json).
export default {
  protocolVersion: 1,
  title: "MMLU",
  version: "1.0.0",
  evals: ["evals/mmlu.ts"],
}
