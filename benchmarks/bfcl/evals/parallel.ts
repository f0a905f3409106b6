import { evaluate } from "../lib/evaluate"

export default {
  id: "bfcl.parallel",
  title: "BFCL parallel",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { questions: "../data/BFCL_v4_parallel.json", answers: "../data/possible_answer/BFCL_v4_parallel.json", tools: "../data/tools.json" },
  },
  evaluate,
}
