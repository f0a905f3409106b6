import { evaluate } from "../lib/evaluate"

export default {
  id: "bfcl.simple_java",
  title: "BFCL simple_java",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { questions: "../data/BFCL_v4_simple_java.json", answers: "../data/possible_answer/BFCL_v4_simple_java.json", tools: "../data/tools.json" },
  },
  evaluate,
}
