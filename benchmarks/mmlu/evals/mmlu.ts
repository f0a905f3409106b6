// One eval over all 57 subjects: case IDs mmlu.<subject>.<n> (n the question's 0-based position
// in its subject's test split), the subject in the case's data; `--case 'mmlu.anatomy.*'` runs
// one subject. (57 evals would need 57 transformers, each run twice: ten times the build time.)
import { evaluate } from "../lib/choice"

export default {
  id: "mmlu",
  title: "MMLU, zero-shot",
  description: "Four-choice questions in 57 subjects; the answer is the letter after ANSWER:.",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { test: "../data/test.jsonl" },
  },
  evaluate,
}
