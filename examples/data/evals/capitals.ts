import { CONCISE } from "../lib/prompts"

export default {
  id: "capitals",
  title: "Capital cities",
  systemPrompt: CONCISE,
  evaluate: { kind: "contains" },
  cases: "./capitals.csv",
}
