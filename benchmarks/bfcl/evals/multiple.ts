import { evaluate } from "../lib/evaluate"

export default {
  id: "bfcl.multiple",
  title: "BFCL multiple",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { questions: "../data/BFCL_v4_multiple.json", answers: "../data/possible_answer/BFCL_v4_multiple.json", tools: "../data/tools.json" },
  },
  evaluate,
}
