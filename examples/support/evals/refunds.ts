export default {
  id: "refunds",
  title: "Refund policy",
  description: "Checks policy accuracy.",
  systemPrompt: "Answer briefly.",
  tools: ["lookup_policy"],
  evaluate: { kind: "contains", expected: "30 days" },
  cases: [
    {
      id: "refunds.standard",
      prompt: "What is the standard return window?",
    },
    {
      id: "refunds.damaged",
      prompt: "A customer received a damaged item. Can they get a refund after the return window?",
      evaluate: { kind: "answer_bank", answers: ["yes", "full refund"], forbiddenAnswers: ["no refund"] },
    },
    {
      id: "refunds.lookup",
      prompt: "Look up the refund policy for electronics and summarize it.",
      evaluate: {
        kind: "tool_call_syntax",
        version: 1,
        alternatives: [[{ toolName: "lookup_policy", input: { topic: "electronics" } }]],
      },
    },
  ],
}
