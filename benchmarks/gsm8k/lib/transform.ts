// GSM8K's test problems (data/test.jsonl: id, question, answer, short_answer) as cases. With a
// `fewshot` source (data/fewshot.txt, the exemplars) the prompt is OLMo's 8-shot one, else
// Inspect AI's zero-shot one. The expected value is the number after the answer's `####`, with
// its thousands separators removed (14 answers are written like 2,125).
type Source = { content: string; path: string; sha256: string }

type Problem = { id: number; question: string; answer: string; short_answer: string }

// inspect_evals/gsm8k/gsm8k.py: MATH_PROMPT_TEMPLATE (its `\\boxed` is a Python escape for `\boxed`)
const ZERO_SHOT = [
  'Solve the following math problem step by step. The last line of your response should be of the form "ANSWER: $ANSWER" (without quotes) where $ANSWER is the answer to the problem.',
  "",
  "{prompt}",
  "",
  'Remember to put your answer on its own line at the end in the form "ANSWER: $ANSWER" (without quotes) where $ANSWER is the answer to the problem, and you do not need to use a \\boxed command.',
  "",
  "Reasoning:",
].join("\n")

const NUMBER = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/

function expected(problem: Problem): string {
  const parts = problem.answer.split("####")
  const value = parts[parts.length - 1].trim().replaceAll(",", "")
  if (parts.length < 2 || !NUMBER.test(value)) {
    throw new Error(`problem ${problem.id}: no normalized number after #### in its answer`)
  }
  return value
}

export default {
  name: "gsm8k",
  transform({ test, fewshot }: { test: Source; fewshot?: Source }) {
    const problems: Problem[] = test.content
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line))
    return problems.map((problem) => ({
      id: fewshot ? `gsm8k.fewshot.${problem.id}` : `gsm8k.${problem.id}`,
      prompt: fewshot
        ? `${fewshot.content}Question: ${problem.question}\nAnswer:`
        : ZERO_SHOT.replace("{prompt}", () => problem.question),
      evaluate: { kind: "gsm8k", expected: expected(problem) },
      data: { solution: problem.answer },
    }))
  },
}
