import { evaluate } from "../lib/evaluate"

export default {
  id: "bfcl.simple_python",
  title: "BFCL simple_python",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { questions: "../data/BFCL_v4_simple_python.json", answers: "../data/possible_answer/BFCL_v4_simple_python.json", tools: "../data/tools.json" },
  },
  evaluate,
}
