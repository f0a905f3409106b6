import { CONCISE, mathPrompt } from "../lib/prompts"

export default {
  id: "arithmetic",
  title: "Word problems",
  systemPrompt: CONCISE,
  evaluate: { kind: "gsm8k", expected: "0" },
  cases: [
    { id: "arithmetic.apples", prompt: mathPrompt("Ann has 3 apples and buys 4 more. How many apples?"), evaluate: { kind: "gsm8k", expected: 7 } },
    { id: "arithmetic.change", prompt: mathPrompt("A pen costs $1.25. What change from $5?"), evaluate: { kind: "gsm8k", expected: "3.75" } },
  ],
}
