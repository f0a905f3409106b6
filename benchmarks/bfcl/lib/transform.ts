// One BFCL category (data/BFCL_v4_<category>.json, one test entry a line) as cases: the user
// question as the prompt, the entry's functions as the case's tools (data/tools.json: each
// function's release tool, offered under its BFCL name with `.` replaced by `_`, as BFCL offers
// it to OpenAI-style function-calling models), and what the checker needs as private data: the
// category, the raw function docs, and the possible-answer line as its exact JSON text (the
// checker tells 5 from 5.0 as Python does).
type Source = { content: string; path: string; sha256: string }
type Tool = { tool: string; as: string; usedBy: string[] }
type Entry = { id: string; question: { role: string; content: string }[][]; function: unknown[] }

const lines = (source: Source) => source.content.split("\n").filter((line) => line.trim())

export default {
  name: "bfcl",
  transform({ questions, answers, tools }: { questions: Source; answers?: Source; tools: Source }) {
    const byUse = new Map<string, Tool>()
    for (const tool of (JSON.parse(tools.content) as { tools: Tool[] }).tools) {
      for (const use of tool.usedBy) byUse.set(use, tool)
    }
    const answerLines = new Map<string, string>()
    for (const line of answers ? lines(answers) : []) answerLines.set(JSON.parse(line).id, line)
    return lines(questions).map((line) => {
      const entry: Entry = JSON.parse(line)
      const category = entry.id.replace(/_\d+$/, "")
      const turn = entry.question[0]
      if (entry.question.length !== 1 || turn.length !== 1 || turn[0].role !== "user") {
        throw new Error(`${entry.id}: expected one user message`)
      }
      const offered = entry.function.map((_, i) => {
        const tool = byUse.get(`${entry.id}:${i}`)
        if (!tool) throw new Error(`${entry.id}: function ${i} is not in tools.json`)
        return tool.tool === tool.as ? tool.tool : { tool: tool.tool, as: tool.as }
      })
      const answer = answerLines.get(entry.id) ?? null
      if (answers && answer === null) throw new Error(`${entry.id}: no possible answer`)
      return {
        id: entry.id,
        prompt: turn[0].content,
        tools: offered,
        data: { category, functions: entry.function, answer },
      }
    })
  },
}
