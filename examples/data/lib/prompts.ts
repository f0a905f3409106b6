// Shared helper: imported by several eval modules and inlined into each bundle.
export const CONCISE = "Answer with the shortest correct answer. No explanations."

export function mathPrompt(question: string): string {
  return `${question}\nEnd your answer with a line "#### <number>".`
}
