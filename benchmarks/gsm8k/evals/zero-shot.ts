// Zero-shot chain of thought: each problem in Inspect AI's GSM8K prompt (inspect_evals' gsm8k task
// with fewshot=0), graded by the built-in gsm8k evaluator. Case IDs: gsm8k.<n>, n the problem's
// 0-based position in the test split (Inspect numbers the same problems n + 1).
export default {
  id: "gsm8k",
  title: "GSM8K, zero-shot chain of thought",
  description: "Grade-school math word problems; the answer is the number on the response's last line (ANSWER: …).",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { test: "../data/test.jsonl" },
  },
}
