import { tool } from "ai"
import { z } from "zod"

const POLICIES: Record<string, { windowDays: number }> = {
  default: { windowDays: 30 },
  electronics: { windowDays: 15 },
}

export const tools = {
  lookup_policy: tool({
    description: "Look up a policy by topic.",
    inputSchema: z.object({ topic: z.string() }),
    execute: async ({ topic }) => ({ topic, ...(POLICIES[topic] ?? POLICIES.default) }),
  }),
}
