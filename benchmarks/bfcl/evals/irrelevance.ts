import { evaluate } from "../lib/evaluate"

export default {
  id: "bfcl.irrelevance",
  title: "BFCL irrelevance",
  cases: {
    transformer: "../lib/transform.ts",
    sources: { questions: "../data/BFCL_v4_irrelevance.json", tools: "../data/tools.json" },
  },
  evaluate,
}
