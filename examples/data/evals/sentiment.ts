// JSONL cases with private grading data, scored by a custom evaluator.
export default {
  id: "sentiment",
  title: "Sentiment labels",
  systemPrompt: "Label the sentiment of the review as positive, negative or mixed.",
  cases: "./sentiment.jsonl",
  evaluate({ output, caseData }: { output: string; caseData: { label: string; accept?: string[] } }) {
    const answer = output.trim().toLowerCase()
    const accepted = [caseData.label, ...(caseData.accept ?? [])]
    const passed = accepted.some((label) => answer.includes(label))
    return { passed, score: passed ? 1 : 0, message: passed ? undefined : `expected ${caseData.label}` }
  },
}
