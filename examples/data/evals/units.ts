import { CONCISE } from "../lib/prompts"

export default {
  id: "units",
  title: "Unit conversions",
  systemPrompt: CONCISE,
  evaluate: { kind: "exact" },
  cases: "./units.csv",
}
