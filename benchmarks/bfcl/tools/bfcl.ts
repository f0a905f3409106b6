// Every function of BFCL's AST categories as an AI SDK tool (data/tools.json, derived by
// tools/fetch-benchmark-data): the description and JSON Schema BFCL gives a function-calling
// model. BFCL grades the calls a model makes, it never runs them: `execute` answers that the
// call was recorded, which only a run with --max-steps above 1 ever sends back.
import { jsonSchema, tool } from "ai"
import catalog from "../data/tools.json"

type Catalog = { tools: { tool: string; description: string; parameters: Record<string, unknown> }[] }

const RECORDED = { recorded: true, note: "BFCL grades the call itself; the function is not run." }

export const tools = Object.fromEntries(
  (catalog as Catalog).tools.map((t) => [
    t.tool,
    tool({
      description: t.description,
      inputSchema: jsonSchema(t.parameters),
      execute: async () => RECORDED,
    }),
  ]),
)
