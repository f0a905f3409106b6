export default {
  id: "answer",
  title: "The answer",
  prompt: "What is six times seven? Reply with the number only.",
  evaluate: { kind: "exact", expected: "42" },
}
