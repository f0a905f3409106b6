import { evaluate } from "../lib/evaluate"

export default {
  id: "bfcl.simple_javascript",
  title: "BFCL simple_javascript",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { questions: "../data/BFCL_v4_simple_javascript.json", answers: "../data/possible_answer/BFCL_v4_simple_javascript.json", tools: "../data/tools.json" },
  },
  evaluate,
}
