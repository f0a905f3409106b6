// A case transformer: a pure function of its sources. It is run twice in
// differently configured sandboxes, so it must not read the clock, the
// environment, the locale or random numbers.
type Source = { content: string; path: string; sha256: string }

function parseQuestions(source: Source): Array<{ id: string; question: string; line: number }> {
  const rows = []
  const lines = source.content.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (!line.trim() || line.startsWith("#")) continue
    const tab = line.indexOf("\t")
    if (tab < 0) throw new Error(`${source.path}:${i + 1}: expected "id<TAB>question"`)
    rows.push({ id: line.slice(0, tab).trim(), question: line.slice(tab + 1).trim(), line: i + 1 })
  }
  return rows
}

export default {
  name: "trivia-join",
  transform({ questions, answers }: { questions: Source; answers: Source }) {
    const answerBank: Record<string, string[]> = JSON.parse(answers.content)
    return parseQuestions(questions).map(({ id, question, line }) => {
      const accepted = answerBank[id]
      if (!accepted || accepted.length === 0) throw new Error(`no answers for question ${id} (${questions.path}:${line})`)
      return {
        id: `trivia.${id}`,
        prompt: question,
        evaluate: { kind: "answer_bank", answers: accepted },
        data: { questionsSha256: questions.sha256, line },
      }
    })
  },
}
