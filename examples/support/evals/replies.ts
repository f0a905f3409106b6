// Open-ended replies, graded by a judge model: `rubric` asks whether a reply
// meets the rubric, `factuality` whether it holds the reference answer's facts
// (Inspect AI's model_graded_qa and model_graded_fact prompts, frozen into the
// release). A run names the judge: trunchbull run … --judge openai:gpt-4o-mini
export default {
  id: "replies",
  title: "Reply quality",
  description: "A judge model grades open-ended support replies.",
  systemPrompt: "You are a support agent for an online shop. Answer in two or three sentences.",
  evaluate: {
    kind: "rubric",
    rubric:
      "The reply is polite, answers the customer's question, and states no policy beyond these: " +
      "items can be returned within 30 days of delivery for a full refund; damaged items are refunded at any time.",
  },
  cases: [
    { id: "replies.window", prompt: "How long do I have to return a jacket I bought?" },
    { id: "replies.damaged", prompt: "My blender arrived broken two months ago. What can I do?" },
    {
      id: "replies.refund",
      prompt: "I returned shoes within a week. How much of the price do I get back?",
      evaluate: { kind: "factuality", expected: "A full refund of the price." },
    },
  ],
}
