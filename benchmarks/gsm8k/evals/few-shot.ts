// 8-shot chain of thought: the eight exemplars of Wei et al. (2022) in OLMo's `Question: … Answer: …`
// format, then the problem, as one user message; graded by the built-in gsm8k evaluator. Case IDs:
// gsm8k.fewshot.<n> (case IDs are release-global, and the zero-shot eval has gsm8k.<n>).
export default {
  id: "gsm8k.fewshot",
  title: "GSM8K, 8-shot chain of thought",
  description: "The same problems after eight worked examples that end in 'So the answer is N.'",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { test: "../data/test.jsonl", fewshot: "../data/fewshot.txt" },
  },
}
