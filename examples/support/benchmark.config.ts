export default {
  protocolVersion: 1,
  title: "Support quality",
  version: "1.0.0",
  evals: ["evals/refunds.ts", "evals/replies.ts"],
  tools: ["tools/support.ts"],
}
