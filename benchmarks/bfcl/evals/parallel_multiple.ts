import { evaluate } from "../lib/evaluate"

export default {
  id: "bfcl.parallel_multiple",
  title: "BFCL parallel_multiple",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { questions: "../data/BFCL_v4_parallel_multiple.json", answers: "../data/possible_answer/BFCL_v4_parallel_multiple.json", tools: "../data/tools.json" },
  },
  evaluate,
}
