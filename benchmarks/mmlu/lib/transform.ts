// MMLU's test questions (data/test.jsonl: subject, index, question, choices, answer 0-3) as cases,
// in Inspect AI's single-answer multiple-choice prompt (inspect_ai/solver/_multiple_choice.py:
// SINGLE_ANSWER_TEMPLATE, choices as `A) …`, the letters `A,B,C,D`), as inspect_evals'
// mmlu_0_shot task sends them (unshuffled choices).
type Source = { content: string; path: string; sha256: string }

type Question = { subject: string; index: number; question: string; choices: string[]; answer: number }

const LETTERS = ["A", "B", "C", "D"]

function prompt(q: Question): string {
  const choices = q.choices.map((choice, i) => `${LETTERS[i]}) ${choice}`).join("\n")
  return (
    "Answer the following multiple choice question. The entire content of your response should be of the " +
    `following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of ${LETTERS.join(",")}.` +
    `\n\n${q.question}\n\n${choices}`
  )
}

export default {
  name: "mmlu",
  transform({ test }: { test: Source }) {
    return test.content
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => {
        const q: Question = JSON.parse(line)
        return {
          id: `mmlu.${q.subject}.${q.index}`,
          prompt: prompt(q),
          data: { subject: q.subject, answer: LETTERS[q.answer] },
        }
      })
  },
}
